"""CompareDialog: two points of the session tree side by side, from their common ancestor.

Each side shows what happened after the paths parted: its messages, the files it read and changed,
the commands it ran with their exit codes, its tokens and cost, and its last answer. Clicking a row
selects that entry in the tree and the graph (`entry_clicked`); "Move here" asks the panel to move
to that side (`move_requested`: the usual summary choice follows); "Files and diffs…" opens the
files-touched view of that side (`files_requested`).

Painting never reads the session file: an entry's title whose preview is not in memory shows
"(reading…)" while the side's `TitleReader` reads it in a worker thread, then that row is repainted. The
titles above the lists (the two entries and where the paths part) are read before the dialog is built,
in the worker that compares the branches (`read_previews`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtGui import QFont, QPalette
from PySide6.QtWidgets import (
    QDialog,
    QHBoxLayout,
    QLabel,
    QListView,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from piwork.gui.chat.markdown import render_markdown
from piwork.gui.inert_text import InertTextBrowser, plain_label
from piwork.gui.tree.display_tree import entry_title
from piwork.gui.tree.entry_list_model import EntryListModel
from piwork.gui.tree.files_dialog import file_line
from piwork.gui.tree.title_reader import PENDING_TITLE, TitleReader
from piwork.gui.tree.tree_model import ENTRY_ID_ROLE
from piwork.gui.window_flags import dialog_buttons

if TYPE_CHECKING:
    from piwork.core.session import BranchActivity, BranchComparison, SessionTree


def activity_figures(activity: BranchActivity) -> str:
    tokens = activity.tokens
    return (
        f"{len(activity.entry_ids):,} {'entry' if len(activity.entry_ids) == 1 else 'entries'} · "
        f"{activity.user_messages} user, {activity.assistant_messages} assistant, "
        f"{activity.tool_results} tool results\n"
        f"{activity.total_tokens:,.0f} tokens (in {tokens['input']:,.0f}, out {tokens['output']:,.0f}, "
        f"cache {tokens['cacheRead'] + tokens['cacheWrite']:,.0f}) · ${activity.cost:.4f}"
    )


def _section(title: QLabel, body: QWidget) -> QWidget:
    font = QFont(title.font())
    font.setBold(True)
    title.setFont(font)
    box = QWidget()
    layout = QVBoxLayout(box)
    layout.setContentsMargins(0, 4, 0, 0)
    layout.setSpacing(2)
    layout.addWidget(title)
    layout.addWidget(body, 1)
    return box


class BranchSide(QWidget):
    """One column of the comparison."""

    entry_clicked = Signal(str)
    move_requested = Signal(str)
    files_requested = Signal(object)  # BranchActivity

    def __init__(self, tree: SessionTree, entry_id: str, activity: BranchActivity, letter: str) -> None:
        super().__init__()
        self.entry_id = entry_id
        self.activity = activity
        record = tree.record(entry_id)
        title = entry_title(record, tree) if record is not None else entry_id
        self.title = plain_label(f"{letter}: {title}")
        bold = QFont(self.title.font())
        bold.setBold(True)
        bold.setPointSizeF(bold.pointSizeF() + 1)
        self.title.setFont(bold)
        self.title.setWordWrap(True)
        self.figures = plain_label(activity_figures(activity))
        self.figures.setWordWrap(True)
        ids = activity.entry_ids
        # the entries' titles: read in a worker when not in memory, "(reading…)" until then
        self.title_reader = TitleReader(tree, self)
        waiting: dict[int, int] = {}  # record number -> row, for the rows shown "(reading…)"

        def title_of(row: int) -> str:
            record = tree.record(ids[row])
            if record is None:
                return ids[row]
            title = self.title_reader.title(record)
            if title == PENDING_TITLE:
                waiting[record.seq] = row
            return title

        entries = EntryListModel(len(ids), title_of, lambda row: ids[row], parent=self)

        def repaint(seqs: list[int]) -> None:
            for seq in seqs:
                row = waiting.pop(seq, None)
                if row is not None:
                    entries.rows_changed(row)

        self.title_reader.ready.connect(repaint)
        self.destroyed.connect(lambda *_: self.title_reader.shutdown())
        self.messages = self._list(entries)
        files = activity.files()
        self.files = self._list(
            EntryListModel(
                len(files),
                lambda row: file_line(files[row]),
                lambda row: files[row].touches[-1].result_entry_id or files[row].touches[-1].call_entry_id,
                tooltip_of=lambda row: files[row].key,
                parent=self,
            )
        )
        commands = activity.commands
        self.commands = self._list(
            EntryListModel(
                len(commands),
                lambda row: (
                    f"{commands[row].status:>8}  {'! ' if commands[row].by_user else '$ '}{commands[row].command}"
                ),
                lambda row: commands[row].entry_id,
                tooltip_of=lambda row: commands[row].command,
                failed=lambda row: not commands[row].ok,
                parent=self,
            )
        )
        self.answer = InertTextBrowser()
        self.answer.setAccessibleDescription("This side's last answer since the paths parted")
        answer = activity.last_answer
        if answer:  # the answer reads as it does in the chat: Markdown, not its source
            dark = self.palette().color(QPalette.ColorRole.Base).lightness() < 128
            render_markdown(self.answer.document(), answer, dark)
        else:
            self.answer.setPlainText("(no answer on this side since the paths parted)")
        failed = sum(not c.ok for c in commands)
        self.sections = QSplitter(Qt.Orientation.Vertical)
        self.titles: dict[str, QLabel] = {}
        for key, text, widget in (
            ("answer", "Last answer", self.answer),
            ("files", f"Files read and changed ({len(files)})", self.files),
            (
                "commands",
                f"Commands ({len(commands)}" + (f", {failed} failed)" if failed else ")"),
                self.commands,
            ),
            ("messages", f"Entries since the paths parted ({len(ids)})", self.messages),
        ):
            self.titles[key] = plain_label(text)
            widget.setAccessibleName(text.split(" (", 1)[0])  # e.g. "Commands", without the count
            self.sections.addWidget(_section(self.titles[key], widget))
        self.move_button = QPushButton("Move here")
        self.move_button.setToolTip("Continue the session from this entry")
        self.files_button = QPushButton("Files and diffs…")
        self.files_button.setAccessibleDescription("The files this side read and changed, with diffs")
        self.files_button.setEnabled(bool(files))
        buttons = QHBoxLayout()
        buttons.addWidget(self.files_button)
        buttons.addStretch(1)
        buttons.addWidget(self.move_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.title)
        layout.addWidget(self.figures)
        layout.addWidget(self.sections, 1)
        layout.addLayout(buttons)
        self.move_button.clicked.connect(lambda: self.move_requested.emit(self.entry_id))
        self.files_button.clicked.connect(lambda: self.files_requested.emit(self.activity))

    def _list(self, model: EntryListModel) -> QListView:
        view = QListView()
        view.setToolTip("Click to select the entry in the session tree")
        view.setUniformItemSizes(True)
        view.setLayoutMode(QListView.LayoutMode.Batched)  # a side of 30,000 entries is laid out in steps
        view.setBatchSize(2_000)
        view.setModel(model)
        view.clicked.connect(self._on_clicked)
        view.activated.connect(self._on_clicked)
        return view

    def _on_clicked(self, index: QModelIndex) -> None:
        entry_id = index.data(ENTRY_ID_ROLE)
        if entry_id is not None:
            self.entry_clicked.emit(str(entry_id))


class CompareDialog(QDialog):
    entry_clicked = Signal(str)
    move_requested = Signal(str)
    files_requested = Signal(object, str)  # BranchActivity, where

    def __init__(
        self,
        tree: SessionTree,
        comparison: BranchComparison,
        parent: QWidget | None = None,
        names: tuple[str, str] = ("A", "B"),
    ) -> None:
        """``names``: what each side is to the user (A and B, or "Selected" and "Current position")."""
        super().__init__(parent)
        dialog_buttons(self, maximize=True)
        self.setWindowTitle("Compare branches")
        self.comparison = comparison
        ancestor = tree.record(comparison.ancestor_id) if comparison.ancestor_id is not None else None
        if ancestor is None:
            parted = "The two entries share no ancestor (separate roots)."
        elif not comparison.a.entry_ids or not comparison.b.entry_ids:
            parted = f"One entry lies on the other's path; compared from: {entry_title(ancestor, tree)}"
        else:
            parted = f"The paths part after: {entry_title(ancestor, tree)}"
        self.ancestor = plain_label(parted)
        self.ancestor.setWordWrap(True)
        self.show_ancestor = QPushButton("Show in tree")
        self.show_ancestor.setAccessibleDescription(
            "Select, in the session tree, the entry where the paths parted"
        )
        self.show_ancestor.setEnabled(ancestor is not None)
        top = QHBoxLayout()
        top.addWidget(self.ancestor, 1)
        top.addWidget(self.show_ancestor)
        self.side_a = BranchSide(tree, comparison.a_id, comparison.a, names[0])
        self.side_b = BranchSide(tree, comparison.b_id, comparison.b, names[1])
        split = QSplitter()
        split.addWidget(self.side_a)
        split.addWidget(self.side_b)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(split, 1)
        self.resize(1000, 620)
        self.show_ancestor.clicked.connect(lambda: self.entry_clicked.emit(str(comparison.ancestor_id)))
        for side, letter in ((self.side_a, names[0]), (self.side_b, names[1])):
            side.entry_clicked.connect(self.entry_clicked)
            side.move_requested.connect(self.move_requested)
            side.files_requested.connect(
                lambda activity, letter=letter: self.files_requested.emit(
                    activity, f"{letter} since the paths parted"
                )
            )
