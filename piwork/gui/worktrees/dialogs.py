"""The worktree dialogs: a new worktree's name and base, the files changed against the base, removal."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLineEdit,
    QListWidget,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from piwork.core.fs import ChangedFile, WorktreeInfo, slug, worktree_path
from piwork.gui.inert_text import plain_label
from piwork.gui.tree.diff_view import DiffView
from piwork.gui.window_flags import dialog_buttons

STATUS_WORDS = {"A": "added", "M": "modified", "D": "deleted", "T": "type changed", "?": "new, untracked"}


class NewWorktreeDialog(QDialog):
    """What the new line of work is: a short description, the branch name (a slug of it until edited) and
    the base. ``create_button`` is pressed by the user; the flow validates with git and shows ``error``."""

    def __init__(self, repo: str, base: str, location: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        dialog_buttons(self)
        self.setObjectName("newWorktreeDialog")
        self.setWindowTitle("New Session in a Worktree")
        self.repo, self.location = repo, location
        self.description = QLineEdit(self)
        self.description.setPlaceholderText("What this line of work is about")
        self.name = QLineEdit(self)
        self.name.setPlaceholderText("branch-name")
        self.base = QLineEdit(base, self)
        self.base.setToolTip("The branch or commit the new branch starts from")
        self.where = plain_label(parent=self)
        self.where.setWordWrap(True)
        self.error = plain_label(parent=self)
        self.error.setObjectName("worktreeError")
        self.error.setWordWrap(True)
        self._name_edited = False
        self.description.textEdited.connect(self._follow_description)
        self.name.textEdited.connect(self._name_typed)
        self.name.textChanged.connect(self._show_where)
        form = QFormLayout()
        form.addRow("Description", self.description)
        form.addRow("Branch", self.name)
        form.addRow("Base", self.base)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel, self)
        self.create_button = QPushButton("Create and Open", self)
        self.create_button.setDefault(True)
        self.buttons.addButton(self.create_button, QDialogButtonBox.ButtonRole.AcceptRole)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(plain_label(f"A new branch and worktree of {repo}; the session runs there.", self))
        layout.addLayout(form)
        layout.addWidget(self.where)
        layout.addWidget(self.error)
        layout.addStretch(1)
        layout.addWidget(self.buttons)
        self._show_where("")
        self.resize(560, 260)

    def _follow_description(self, text: str) -> None:
        if not self._name_edited:
            self.name.setText(slug(text))

    def _name_typed(self, _text: str) -> None:
        self._name_edited = True

    def _show_where(self, name: str) -> None:
        shown = name.strip() or "<name>"
        self.where.setText(f"Folder: {worktree_path(self.repo, shown, self.location)}")


class CompareDialog(QDialog):
    """The files of a worktree that differ from its base branch, with each one's unified diff."""

    def __init__(self, info: WorktreeInfo, files: list[ChangedFile], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        dialog_buttons(self, maximize=True)
        self.setObjectName("compareBaseDialog")
        self.setWindowTitle(f"Compare {info.branch or 'HEAD'} with {info.base}")
        self.files = files
        plural = "s" if len(files) != 1 else ""
        heading = (
            f"{len(files)} file{plural} differ from {info.base} (committed, staged, unstaged and untracked)."
            if files
            else f"No file differs from {info.base}."
        )
        self.heading = plain_label(heading, self)
        self.file_list = QListWidget(self)
        self.file_list.setAccessibleName("Changed files")
        for changed in files:
            self.file_list.addItem(f"{changed.path} — {STATUS_WORDS.get(changed.status[:1], changed.status)}")
        self.diff = DiffView(self)
        self.diff.setAccessibleName("Diff of the selected file")
        self.diff.setPlaceholderText("Select a file to see its diff.")
        split = QSplitter(Qt.Orientation.Horizontal, self)
        split.addWidget(self.file_list)
        split.addWidget(self.diff)
        split.setStretchFactor(1, 3)
        layout = QVBoxLayout(self)
        layout.addWidget(self.heading)
        layout.addWidget(split, 1)
        self.file_list.currentRowChanged.connect(self._show)
        if files:
            self.file_list.setCurrentRow(0)
        self.resize(900, 560)

    def _show(self, row: int) -> None:
        if 0 <= row < len(self.files):
            self.diff.show_diff(self.files[row].diff or None, "No textual difference (a binary file?).")

    def current(self) -> QModelIndex:
        return self.file_list.currentIndex()


class RemoveWorktreeDialog(QDialog):
    """Whether to remove the worktree (and its branch); with uncommitted changes, Remove waits for the
    user to tick that they are to be discarded."""

    def __init__(self, info: WorktreeInfo, dirty: list[str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        dialog_buttons(self)
        self.setObjectName("removeWorktreeDialog")
        self.setWindowTitle("Remove Worktree")
        self.dirty = dirty
        text = (
            f"Remove the worktree {info.path}? The main checkout {info.repo} is not touched; "
            "this window then opens it."
        )
        layout = QVBoxLayout(self)
        intro = plain_label(text, self)
        intro.setWordWrap(True)
        layout.addWidget(intro)
        self.force = QCheckBox("Remove anyway, discarding these changes", self)
        if dirty:
            shown = "\n".join(dirty[:12]) + (f"\n… and {len(dirty) - 12} more" if len(dirty) > 12 else "")
            warning = plain_label(
                f"It has {len(dirty)} uncommitted change{'s' if len(dirty) != 1 else ''}; git refuses to "
                f"remove it unless forced:\n{shown}",
                self,
            )
            warning.setObjectName("worktreeDirty")
            warning.setWordWrap(True)
            layout.addWidget(warning)
            layout.addWidget(self.force)
        else:
            self.force.hide()
        self.delete_branch = QCheckBox(f"Also delete the branch {info.branch} (only if merged)", self)
        self.delete_branch.setEnabled(info.branch is not None)
        layout.addWidget(self.delete_branch)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel, self)
        self.remove = QPushButton("Remove Worktree", self)
        self.buttons.addButton(self.remove, QDialogButtonBox.ButtonRole.AcceptRole)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        self.remove.setEnabled(not dirty)
        self.force.toggled.connect(lambda on: self.remove.setEnabled(on or not dirty))
        layout.addWidget(self.buttons)
        self.resize(560, 220)
