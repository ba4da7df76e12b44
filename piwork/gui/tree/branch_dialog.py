"""BranchChoiceDialog: how to leave the current branch when moving elsewhere in the tree.

Choices: no summary, summarize, or summarize with the user's focus (optionally replacing the default
instructions); an optional label; "don't ask again", which the panel saves as
`branchSummary.skipPrompt` (meaning: never summarize, never ask); and, when the window can restore files,
"Also restore the files to this point" (a `RestoreOption`, which lists the files that would change).
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import (
    QButtonGroup,
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QRadioButton,
    QVBoxLayout,
    QWidget,
)

from piwork.gui.window_flags import dialog_buttons

if TYPE_CHECKING:
    from piwork.gui.rewind import RestoreOption


def _plural(count: int, word: str) -> str:
    return f"{count:,} {word}" + ("" if count == 1 else "s")


def branch_contents(entries: int, messages: int) -> str:
    """What the abandoned branch holds and what of it a summary would cover, in the words the dialog
    and the summarizing progress share: entries are counted in the file, messages are what the
    summarizer is given (tool results and bookkeeping entries are not)."""
    held = "1 entry" if entries == 1 else f"{entries:,} entries"
    if messages == 0:
        return f"{held}, none of them conversation to summarize"
    return f"{held}, of which {_plural(messages, 'message')} would be summarized"


def summarizing_text(entries: int, messages: int | None) -> str:
    """Progress label while the model writes the summary (messages unknown: entries only)."""
    held = "1 entry" if entries == 1 else f"{entries:,} entries"
    if messages is None:
        return f"Asking the model to summarize the branch ({held})…"
    return f"Asking the model to summarize {_plural(messages, 'message')} ({held} of the branch)…"


@dataclass(frozen=True)
class BranchChoice:
    summarize: bool
    focus: str | None = None
    replace_instructions: bool = False
    label: str | None = None
    dont_ask_again: bool = False
    restore_files: bool = False  # also put the files back as they were at the entry moved to


class BranchChoiceDialog(QDialog):
    def __init__(
        self,
        abandoned_entries: int,
        summary_messages: int,
        target_text: str,
        parent: QWidget | None = None,
        *,
        restore: RestoreOption | None = None,
    ) -> None:
        super().__init__(parent)
        dialog_buttons(self)
        self.setWindowTitle("Leave this branch")
        self.intro = QLabel(
            f"Moving to: <i>{html.escape(target_text)}</i><br>The branch you leave holds "
            f"{branch_contents(abandoned_entries, summary_messages)}. It stays in the session file "
            "either way; a summary lets the model know what happened there."
        )
        intro = self.intro
        intro.setWordWrap(True)
        self.no_summary = QRadioButton("No summary")
        self.summarize = QRadioButton("Summarize the branch")
        self.focused = QRadioButton("Summarize with my focus")
        group = QButtonGroup(self)
        for button in (self.no_summary, self.summarize, self.focused):
            group.addButton(button)
        self.no_summary.setChecked(True)
        self.focus_text = QPlainTextEdit()
        self.focus_text.setPlaceholderText("What the summary should concentrate on")
        self.focus_text.setMaximumHeight(90)
        self.replace_box = QCheckBox("Use only my text (replace the default summary instructions)")
        self.label_field = QLineEdit(placeholderText="Optional label for the new position")
        self.dont_ask = QCheckBox("Don't ask again (always move without a summary)")
        self.dont_ask.setToolTip(
            "Saved in your settings (branchSummary.skipPrompt); turn it back off in Settings → Compaction."
        )
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        self.ok_button = buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.ok_button.setText("Move here")
        self._describe()
        self.setMinimumWidth(540)
        layout = QVBoxLayout(self)
        for widget in (
            intro,
            self.no_summary,
            self.summarize,
            self.focused,
            self.focus_text,
            self.replace_box,
        ):
            layout.addWidget(widget)
        layout.addWidget(self.label_field)
        layout.addWidget(self.dont_ask)
        self.restore = restore
        if restore is not None:
            layout.addWidget(restore)
        layout.addWidget(buttons)
        self.focused.toggled.connect(self._update)
        self.no_summary.toggled.connect(self._update)
        self.focus_text.textChanged.connect(self._pick_focus_when_typed)
        self.focus_text.installEventFilter(self)
        self._update()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Clicking or tabbing into the focus box picks "Summarize with my focus" (typing there means it)."""
        if watched is self.focus_text and event.type() == QEvent.Type.FocusIn:
            self.focused.setChecked(True)
        return super().eventFilter(watched, event)

    def _pick_focus_when_typed(self) -> None:
        if self.focus_text.toPlainText().strip():
            self.focused.setChecked(True)
        self._update()

    def _describe(self) -> None:
        """Names and descriptions a screen reader announces (the focus box and label have no visible label)."""
        self.focus_text.setAccessibleName("Summary focus")
        self.label_field.setAccessibleName("Label for the new position")
        for widget, description in (
            (self.no_summary, "Move without writing a summary of the branch you leave."),
            (self.summarize, "Ask the model for a summary of the branch you leave; it shows in the tree."),
            (self.focused, "Summarize the branch you leave, concentrating on what you type below."),
            (self.focus_text, "What the summary should concentrate on (with Summarize with my focus)."),
            (self.replace_box, "Send only your text as the summary instructions, without the default ones."),
            (self.label_field, "An optional label set on the entry you move to."),
            (self.dont_ask, "Always move without a summary; turn it back off in Settings → Compaction."),
        ):
            widget.setAccessibleDescription(description)

    def _update(self) -> None:
        focused = self.focused.isChecked()
        self.replace_box.setEnabled(focused)  # the focus box stays open: typing there picks its choice
        self.dont_ask.setEnabled(self.no_summary.isChecked())
        if not self.no_summary.isChecked():
            self.dont_ask.setChecked(False)
        self.ok_button.setEnabled(not focused or bool(self.focus_text.toPlainText().strip()))

    def choice(self) -> BranchChoice:
        label = self.label_field.text().strip() or None
        files = self.restore is not None and self.restore.wanted
        if self.no_summary.isChecked():
            return BranchChoice(
                False, label=label, dont_ask_again=self.dont_ask.isChecked(), restore_files=files
            )
        if self.summarize.isChecked():
            return BranchChoice(True, label=label, restore_files=files)
        focus = self.focus_text.toPlainText().strip()
        return BranchChoice(True, focus, self.replace_box.isChecked(), label, restore_files=files)
