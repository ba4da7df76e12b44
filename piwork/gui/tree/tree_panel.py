"""SessionTreePanel: the session's entry tree, with navigation, labels, fork and clone.

Usage from the main window::

    panel = SessionTreePanel(settings=settings)          # piwork.core.settings.Settings (optional)
    panel.set_session(session, AgentNavigator(agent))    # the live session, or:
    await panel.open_file(path)                          # browse a file (read-only, loaded off-thread)
    panel.editor_text_requested.connect(composer.set_text)
    panel.session_created.connect(window.switch_to_session)  # fork / clone results (Session, editor text)
    panel.navigated.connect(...)                         # NavigationResult after each move

Selecting an entry (Enter, double-click or "Go to entry") follows the session rules: a user or custom
message moves the leaf to its parent and puts its text in the composer; anything else becomes the
leaf. Unless `branchSummary.skipPrompt` is set, a dialog asks whether to summarize the branch being
left; summarizing shows progress and can be cancelled. Ctrl+L sets a label, Ctrl+Shift+L clears it.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from PySide6.QtCore import SIGNAL, QEvent, QModelIndex, QObject, QPoint, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QGuiApplication, QKeyEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QInputDialog,
    QLineEdit,
    QMenu,
    QPlainTextEdit,
    QProgressDialog,
    QPushButton,
    QSplitter,
    QTabWidget,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from piwork.core.errors import PiworkError
from piwork.core.settings_schema import BRANCH_SUMMARY_SKIP_PROMPT, TREE_FILTER_MODE, Setting
from piwork.gui.background import BackgroundTasks
from piwork.gui.context_edit_dialog import LEAVE_OUT_TEXT, REPLACE_TEXT, RESTORE_TEXT, ReplacementDialog
from piwork.gui.dialogs import ask
from piwork.gui.flow_layout import FlowLayout
from piwork.gui.inert_text import plain_label, plain_tip
from piwork.gui.rewind import RestoreOption
from piwork.gui.tree.branch_dialog import BranchChoice, BranchChoiceDialog, branch_contents, summarizing_text
from piwork.gui.tree.branch_tools import BranchTools
from piwork.gui.tree.context_marks import content_text, edit_marks, entry_content
from piwork.gui.tree.display_tree import (
    FILTER_MODES,
    DisplayTree,
    build_display_tree,
    entry_title,
    normalize_mode,
)
from piwork.gui.tree.entry_io import EntryDetails, LabelWriter
from piwork.gui.tree.graph_view import BranchGraphView
from piwork.gui.tree.loading import load_for_view
from piwork.gui.tree.navigation import STREAMING_REFUSAL, AgentNavigator
from piwork.gui.tree.title_reader import loop_running
from piwork.gui.tree.tree_model import ACTIVE_ROLE, ENTRY_ID_ROLE, SessionTreeModel
from piwork.gui.tree.tree_search import SearchCancelled, SearchMatches, search_entries

if TYPE_CHECKING:
    from piwork.core.compaction import BranchSummaryProgress, NavigationResult
    from piwork.core.session import EntryRecord, Session, SessionTree
    from piwork.core.workflows import AgentRuntime
    from piwork.gui.rewind import FileRewind

FILTER_WORDS = {
    "default": "Conversation",
    "no-tools": "Without tool results",
    "user-only": "Only your messages",
    "labeled-only": "Only labelled entries",
    "all": "Everything",
}

_SEARCH_DELAY_MS = 250
RESTORE_FILES_TEXT = "Restore files to here…"
CHANGES_SINCE_TEXT = "Changes since here"
SIGNAL_CHANGES_SINCE = SIGNAL("changesSinceRequested(QString)")
LAYOUT_ATTEMPTS = 3  # layouts computed in a worker while entries stream in, before one on the GUI thread

T = TypeVar("T")


def _quote(text: str, limit: int = 60) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _forked(source: Session, entry_id: str) -> tuple[Session, str, str]:
    """The fork before ``entry_id``, the text of that message, and where the fork lives (blocking)."""
    from piwork.core.session import fork_session  # the engine's, loaded with the session

    result = fork_session(source, entry_id)
    return result.session, result.editor_text, _where(result.session)


def _cloned(source: Session, entry_id: str, whole: bool) -> tuple[Session, str]:
    """The clone up to ``entry_id`` (the active branch when ``whole``), and where it lives (blocking)."""
    from piwork.core.session import clone_session, create_branched_session

    created = clone_session(source) if whole else create_branched_session(source, entry_id)
    return created, _where(created)


def _branch_left(tree: SessionTree, leaf_id: str | None, target_id: str, budget: int) -> tuple[int, int, str]:
    """The entries and the summarizable messages of the branch a move to ``target_id`` leaves, and the
    target's title (blocking: reads the bodies of that branch)."""
    from piwork.core.compaction import collect_from_tree, prepare_branch_entries

    abandoned = collect_from_tree(tree, leaf_id, target_id).entries
    messages = len(prepare_branch_entries(abandoned, budget).messages)
    record = tree.record(target_id)
    return len(abandoned), messages, entry_title(record, tree) if record is not None else target_id


def _where(session: Session) -> str:
    """Where a fork or clone lives and that the original is untouched (blocking: a ``stat``)."""
    path = session.path
    if path is None:
        return "It is kept in memory only; the original session is unchanged."
    saved = "is saved as" if path.is_file() else "will be saved (once it holds a reply) as"
    return f"It {saved} {path.name}; the original session is unchanged."


class SessionTreePanel(QWidget):
    editor_text_requested = Signal(str)
    navigated = Signal(object)  # NavigationResult
    session_created = Signal(object, str)  # new Session from fork/clone, text for the composer
    branch_made = Signal(
        str, str
    )  # title and text saying what a fork or clone did (sent before session_created)
    status_changed = Signal(str)
    entry_selected = Signal(object)  # entry id picked in the graph (str) or None
    loaded = Signal()
    laid_out = Signal()  # a new filter or search is shown in the outline (the graph follows in its worker)
    # "leave-out" | "replace" | "restore", the entry id, the replacement text (for "replace")
    context_edit_requested = Signal(str, str, object)
    edit_marks_shown = Signal()  # the tree marks the entries the context edits in force change
    changesSinceRequested = Signal(
        str
    )  # "Changes since here": the entry id (the window opens the Changes panel)

    def __init__(self, parent: QWidget | None = None, *, settings: Any = None) -> None:
        super().__init__(parent)
        self._settings = settings
        self.session: Session | None = None
        self.tree: SessionTree | None = None
        self.navigator: AgentNavigator | None = None
        self.model: SessionTreeModel | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._navigation: asyncio.Task[Any] | None = None
        self._background = BackgroundTasks()
        self._layout_task: asyncio.Task[Any] | None = None
        self._layout_cancel = threading.Event()
        self._first_layout: asyncio.Task[Any] | None = None  # the open session's first layout, in a worker
        self._after_loading: list[Callable[[], None]] = []  # what waits for it (a search hit's selection)
        self._marking: asyncio.Task[Any] | None = None  # the context edits' marks, read in a worker
        self.progress: QProgressDialog | None = None
        self._change_pending = False
        self._follow_leaf = True
        self.branch_dialog: BranchChoiceDialog | None = None
        self.replacement_dialog: ReplacementDialog | None = None
        self._leaving = (0, 0)  # entries and summarizable messages of the branch being left
        self.rewind: FileRewind | None = None  # restores the project's files (set by the window)

        self.filter_box = QComboBox()
        for mode in FILTER_MODES:  # words in the box, Pi's mode ids (treeFilterMode) behind them
            self.filter_box.addItem(FILTER_WORDS.get(mode, mode), mode)
        self.filter_box.setAccessibleName("Show entries")
        self.filter_box.setAccessibleDescription("Which entries the tree lists (all, or only some kinds)")
        self.set_filter_mode(normalize_mode(self._setting(TREE_FILTER_MODE)))
        self.search_field = QLineEdit(placeholderText="Search entries")
        self.search_field.setAccessibleName("Search entries")
        self.search_field.setToolTip("Shows the entries that contain all the words typed")
        self._search_timer = QTimer(self, singleShot=True, interval=_SEARCH_DELAY_MS)
        self._search_timer.timeout.connect(self._apply_search)
        self.go_button = QPushButton("Go to entry")
        self.go_button.setAccessibleDescription(
            "Move to the selected entry (Enter in the tree does the same)"
        )
        # Filter and "Go to entry" on one row (two in a narrow dock), the search field on its own.
        self.filter_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.filter_box.setMinimumContentsLength(12)  # a narrow dock cuts the longest mode names short
        top = QVBoxLayout()
        top.setSpacing(2)
        first_row = FlowLayout(spacing=4)
        first_row.addWidget(self.filter_box, 1)
        first_row.addWidget(self.go_button)
        top.addLayout(first_row)
        top.addWidget(self.search_field)

        self.view = QTreeView()
        self.view.setAccessibleName("Session tree outline")
        self.view.setAccessibleDescription(
            "Every entry of the session; Enter goes to the selected entry, Ctrl+L labels it."
        )
        self.view.setHeaderHidden(True)
        self.view.setUniformRowHeights(True)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.view.setExpandsOnDoubleClick(False)
        self.detail = QPlainTextEdit(readOnly=True)
        self.detail.setAccessibleName("Selected entry")
        self.detail.setAccessibleDescription("The whole text of the entry selected in the tree")
        self.detail.setPlaceholderText("Select an entry to read it in full.")
        self.details = EntryDetails(self.detail)
        self.labels = LabelWriter(self._set_status)
        self.status = plain_label()
        self.status.setWordWrap(True)
        self.diagnostics_label = plain_label()
        self.diagnostics_label.setWordWrap(True)
        self.graph = BranchGraphView()
        self.branch_tools = BranchTools(self)
        self.files_button = QPushButton("Files…")
        self.files_button.setToolTip(
            "Files read, written and edited on the path to the selected entry, with diffs"
        )
        self.compare_button = QPushButton("Compare…")
        self.compare_button.setToolTip(
            "Two entries side by side from where their paths part: the two selected (Ctrl+click a "
            "second one), else the selected entry and the current position"
        )
        self.graph.toolbar.addWidget(self.files_button)
        self.graph.toolbar.addWidget(self.compare_button)
        self.views = QTabWidget()
        self.views.setDocumentMode(True)
        self.views.addTab(self.view, "Outline")
        self.views.addTab(self.graph, "Graph")
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(self.views)
        splitter.addWidget(self.detail)
        splitter.setStretchFactor(0, 3)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(top)
        layout.addWidget(self.diagnostics_label)
        layout.addWidget(splitter, 1)
        layout.addWidget(self.status)
        self.diagnostics_label.hide()

        self.filter_box.currentIndexChanged.connect(lambda _i: self._on_filter_changed(self.filter_mode()))
        self.search_field.textChanged.connect(lambda _t: self._search_timer.start())
        self.go_button.clicked.connect(self.activate_current)
        self.view.activated.connect(lambda _index: self.activate_current())
        self.view.customContextMenuRequested.connect(self._context_menu)
        self.view.installEventFilter(self)  # Ctrl+L / Ctrl+Shift+L while the tree has the focus
        self.graph.list.installEventFilter(self)
        self.graph.current_changed.connect(self._on_graph_current_changed)
        self.graph.activated.connect(self.navigate_to)
        self.graph.menu_requested.connect(lambda position: self.build_context_menu().popup(position))
        self.views.currentChanged.connect(lambda _i: self._show_detail(self.current_entry_id()))
        self.files_button.clicked.connect(lambda: self.branch_tools.files_touched(self.current_entry_id()))
        self.compare_button.clicked.connect(self.compare_selected)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched in (self.view, self.graph.list) and event.type() == QEvent.Type.KeyPress:
            key_event = cast(QKeyEvent, event)
            if (
                key_event.key() == Qt.Key.Key_L
                and key_event.modifiers() & Qt.KeyboardModifier.ControlModifier
            ):
                if key_event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
                    self.clear_label()
                else:
                    self.prompt_label()
                return True
        return super().eventFilter(watched, event)

    # -- settings -------------------------------------------------------------------------------
    def _setting(self, setting: Setting[T]) -> T:
        """A declared setting's checked value (its default without settings)."""
        if self._settings is None:
            return setting.default
        value: T = self._settings.values.value(setting)
        return value

    def set_settings(self, settings: Any) -> None:
        """Use ``settings`` (piwork.core.settings.Settings) for the branch-summary preference."""
        self._settings = settings

    def _skip_prompt(self) -> bool:
        return self._setting(BRANCH_SUMMARY_SKIP_PROMPT)

    async def _remember_skip_prompt(self) -> None:
        if self._settings is None:
            return
        try:  # a locked read-modify-write of settings.json: in a worker
            await asyncio.to_thread(self._settings.set_value, BRANCH_SUMMARY_SKIP_PROMPT.key, True, "global")
        except (PiworkError, OSError) as exc:
            self._set_status(f"The preference could not be saved: {exc}")
            return
        self._set_status(
            "From now on moving in the tree never asks about a summary; change it in Settings → Compaction."
        )

    # -- session ----------------------------------------------------------------------------------
    def set_session(
        self, session: Session, navigator: AgentNavigator | None = None, display: DisplayTree | None = None
    ) -> None:
        """Show `session`; without a navigator the tree can be browsed but not moved."""
        self._detach()
        self.branch_tools.reset()
        self.details.show(None, None)  # a read still running was for the previous session
        self.session = session
        self.tree = session.tree
        self.navigator = navigator
        self.model = SessionTreeModel(session.tree, self.filter_mode(), self, display=display)
        self.view.setModel(self.model)
        self.view.selectionModel().currentChanged.connect(self._on_current_changed)
        self.model.rebuilt.connect(self.reveal_leaf)  # a reset loses the selection: show the leaf
        self.model.rowsAboutToBeInserted.connect(lambda *_a: self._before_change())
        self.model.rowsAboutToBeRemoved.connect(lambda *_a: self._before_change())
        self.graph.set_filter(self.filter_mode(), self.model.query)
        self.graph.set_tree(session.tree)
        self._show_diagnostics()
        self.reveal_leaf()
        self.refresh_edit_marks()

    def refresh_edit_marks(self) -> None:
        """Mark the entries the context edits in force on the current branch change (read in a worker)."""
        if self.tree is not None and loop_running():  # browsing without the window's loop: no marks
            self._marking = self._background.spawn(self._mark_edits(self.tree))

    @property
    def marks_pending(self) -> bool:
        """The marks of the context edits in force are not known yet (laid out or read in a worker);
        ``edit_marks_shown`` follows."""
        return self.loading or (self._marking is not None and not self._marking.done())

    async def _mark_edits(self, tree: SessionTree) -> None:
        try:
            marks = await asyncio.to_thread(edit_marks, tree)
        except (OSError, PiworkError, ValueError) as exc:
            self._set_status(f"The context edits of this session could not be read: {exc}")
            return
        if self._marking is asyncio.current_task():
            self._marking = None
        if self.model is not None and self.tree is tree:
            self.model.set_edit_marks(marks)
            self.graph.set_edit_marks(marks)
            self.edit_marks_shown.emit()

    async def open_file(self, path: str, writable: bool = False) -> None:
        """Load a session file in a worker thread, then show it (browse only)."""
        self._set_status(f"Opening {path}…")
        try:
            loaded = await asyncio.to_thread(load_for_view, path, self.filter_mode(), writable)
        except (PiworkError, OSError) as exc:
            self._set_status(f"Cannot open {path}: {exc}")
            return
        self.set_session(loaded.session, None, loaded.display if loaded.mode == self.filter_mode() else None)
        self._set_status("")
        self.loaded.emit()

    def _detach(self) -> None:
        self._stop_layout()
        if self._first_layout is not None:  # another session replaces the one being laid out
            self._first_layout.cancel()
            self._first_layout = None
            self._after_loading = []
        self._query = ""  # a new model starts without the search
        self.graph.clear()
        if self.model is not None:
            self.model.detach()
            self.view.setModel(None)
            self.model.deleteLater()
            self.model = None

    def _show_diagnostics(self) -> None:
        problems = self.tree.diagnostics if self.tree is not None else []
        if not problems:
            self.diagnostics_label.hide()
            return
        lines = [f"line {d.line}: {d.message}" for d in problems[:50]]
        self.diagnostics_label.setText(f"{len(problems)} problem(s) in this session file (hover for details)")
        self.diagnostics_label.setToolTip(plain_tip("\n".join(lines)))
        self.diagnostics_label.show()

    def reveal_leaf(self) -> None:
        """Expand down to the leaf's row, select it and scroll it into view."""
        if self.model is not None:
            self._reveal(self.model.landing_index())

    def _reveal(self, index: QModelIndex) -> None:
        if not index.isValid():
            return
        parent = index.parent()
        chain = []
        while parent.isValid():
            chain.append(parent)
            parent = parent.parent()
        for ancestor in reversed(chain):
            self.view.expand(ancestor)
        self.view.setCurrentIndex(index)
        self.view.scrollTo(index, QAbstractItemView.ScrollHint.PositionAtCenter)

    def _before_change(self) -> None:
        """Before rows are inserted or removed: keep following the leaf only if the user was on it."""
        if self._change_pending or self.model is None:
            return
        self._change_pending = True
        current = self.view.currentIndex()
        self._follow_leaf = not current.isValid() or current == self.model.landing_index()
        QTimer.singleShot(0, self._after_change)

    def _after_change(self) -> None:
        self._change_pending = False
        if self._follow_leaf:
            self.reveal_leaf()

    def filter_mode(self) -> str:
        """The tree filter's mode id (``default``, ``no-tools``, ``user-only``, ``labeled-only``, ``all``)."""
        return str(self.filter_box.currentData() or "default")

    def set_filter_mode(self, mode: str) -> None:
        index = self.filter_box.findData(mode)
        if index >= 0:
            self.filter_box.setCurrentIndex(index)

    def _on_filter_changed(self, mode: str) -> None:
        if self.model is not None:
            self._lay_out_again(mode, self._query)

    def _apply_search(self) -> None:
        if self.model is not None:
            self._lay_out_again(self.filter_mode(), self.search_field.text())

    @property
    def laying_out(self) -> bool:
        """Whether a new filter or search is being applied in a worker thread."""
        return self._layout_task is not None and not self._layout_task.done()

    def _lay_out_again(self, mode: str, query: str) -> None:
        """Search and lay the outline out for a new filter or search in worker threads, then show it
        (a newer one cancels this one); without an event loop, at once."""
        model = self.model
        assert model is not None
        self._query = query
        self._stop_layout()
        if (normalize_mode(mode), query) == (model.filter_mode, model.query):
            self.laid_out.emit()
            return
        if not loop_running():
            keep = self.current_entry_id()
            model.set_filter_mode(mode)
            model.set_search(query)
            self._filter_graph(keep)
            self.laid_out.emit()
            return
        self._layout_cancel = threading.Event()
        self._layout_task = self._background.spawn(self._lay_out(model, mode, query, self._layout_cancel))

    def _stop_layout(self) -> None:
        if self._layout_task is not None:
            self._layout_task.cancel()
            self._layout_cancel.set()
            self._layout_task = None

    async def _lay_out(
        self, model: SessionTreeModel, mode: str, query: str, cancelled: threading.Event
    ) -> None:
        result: tuple[SearchMatches | None, DisplayTree] | None = None
        for _attempt in range(LAYOUT_ATTEMPTS):
            generation = model.generation
            try:
                matches = (
                    await asyncio.to_thread(search_entries, model.tree, query, cancelled)
                    if query.split()
                    else None
                )
                display = await asyncio.to_thread(model.display_work(mode, query, matches))
            except SearchCancelled:
                return
            except RuntimeError:  # the tree changed under the worker (a dict resized): again
                continue
            except (OSError, PiworkError) as exc:  # the session file could not be read back
                self._set_status(f"The entries could not be searched: {exc}")
                return
            if model is not self.model:
                return
            if model.generation == generation:  # else entries came meanwhile: again
                result = matches, display
                break
        if result is None:  # the tree keeps changing: lay it out here
            matches = search_entries(model.tree, query) if query.split() else None
            result = matches, model.display_work(mode, query, matches)()
        keep = self.current_entry_id()
        model.show_display(mode, query, *result)
        self._filter_graph(keep)
        self.laid_out.emit()

    def _filter_graph(self, keep: str | None) -> None:
        """The graph shows what the outline now shows (the same search result); both keep the entry that
        was selected (or the nearest one still shown above it)."""
        assert self.model is not None
        self.graph.set_filter(self.model.filter_mode, self.model.query, self.model.matches)
        index = self.model.nearest_shown_index(keep)
        if index.isValid():
            self._reveal(index)
            self.graph.select(str(index.data(ENTRY_ID_ROLE)), unfold=False)

    def _on_current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        entry_id = current.data(ENTRY_ID_ROLE) if current.isValid() else None
        if entry_id is not None and self.graph.current_entry_id() != entry_id:
            self.graph.select(str(entry_id), unfold=False)
        self._show_detail(entry_id)

    def _on_graph_current_changed(self, entry_id: str | None) -> None:
        """An entry picked in the graph is selected in the outline too (when the outline shows it);
        only while the graph is the view shown, so its own following of the leaf moves nothing else."""
        if self.views.currentWidget() is not self.graph:
            return
        if (
            entry_id is not None
            and self.model is not None
            and self.view.currentIndex().data(ENTRY_ID_ROLE) != entry_id
        ):
            index = self.model.index_of_id(entry_id)
            if index.isValid():
                self._reveal(index)
        self.entry_selected.emit(entry_id)
        self._show_detail(entry_id)

    def _show_detail(self, entry_id: object) -> None:
        self.details.show(self.tree, entry_id)  # a body not in memory is read in a worker thread

    def sizeHint(self) -> QSize:
        """Wide enough, as a dock, for entry titles with their labels."""
        hint = super().sizeHint()
        return QSize(max(hint.width(), 400), hint.height())

    def current_entry_id(self) -> str | None:
        """The selected entry's id in the view shown (None when nothing or a group/fold row is selected)."""
        if self.views.currentWidget() is self.graph:
            return self.graph.current_entry_id()
        value = self.view.currentIndex().data(ENTRY_ID_ROLE)
        return str(value) if value is not None else None

    def select_entry(self, entry_id: str) -> bool:
        if self.model is None:
            return False
        index = self.model.index_of_id(entry_id)
        self._reveal(index)
        in_graph = self.graph.select(entry_id)
        return index.isValid() or in_graph

    def show_graph(self) -> None:
        self.views.setCurrentWidget(self.graph)
        self.graph.list.setFocus()

    def focus_shown_view(self) -> None:
        """Keyboard focus to the tab on show: the Outline, or the Graph's rows (Up then moves in it)."""
        if self.views.currentWidget() is self.graph:
            self.graph.list.setFocus()
        else:
            self.view.setFocus()

    def compare_selected(self) -> None:
        """Compare the two entries selected in the graph, or the selected one with the current position."""
        picked = self.graph.selected_entry_ids() if self.views.currentWidget() is self.graph else []
        if len(picked) >= 2:
            self.branch_tools.compare(picked[0], picked[-1])
        elif self.current_entry_id() is None:
            self._set_status(
                "Select an entry to compare with the current position (Ctrl+click a second one)."
            )
        else:
            self.branch_tools.compare_with_current(self.current_entry_id())

    def show_status(self, text: str) -> None:
        self._set_status(text)

    def _set_status(self, text: str) -> None:
        self.status.setText(text)
        self.status_changed.emit(text)

    # -- labels --------------------------------------------------------------------------------
    def set_label(self, entry_id: str, label: str | None) -> bool:
        """Label the entry now; its line is written to the session file in a worker thread."""
        if self.session is None:
            return False
        return self.labels.set(self.session, entry_id, label or None)

    def prompt_label(self) -> None:
        entry_id = self.current_entry_id()
        if entry_id is None or self.tree is None:
            return
        dialog = QInputDialog(self)
        dialog.setWindowTitle("Label")
        dialog.setLabelText("Label for this entry (empty clears it):")
        dialog.setTextValue(self.tree.label(entry_id) or "")
        dialog.textValueSelected.connect(lambda text: self.set_label(entry_id, text.strip() or None))
        dialog.finished.connect(dialog.deleteLater)
        dialog.open()
        self.label_dialog = dialog

    def clear_label(self) -> None:
        entry_id = self.current_entry_id()
        if entry_id is not None and self.tree is not None and self.tree.label(entry_id):
            self.set_label(entry_id, None)

    # -- context menu, fork and clone ------------------------------------------------------------
    def _context_menu(self, position: QPoint) -> None:
        index = self.view.indexAt(position)
        if not index.isValid():
            return
        self.view.setCurrentIndex(index)
        menu = self.build_context_menu()
        menu.popup(self.view.viewport().mapToGlobal(position))

    def build_context_menu(self) -> QMenu:
        menu = QMenu(self)
        entry_id = self.current_entry_id()
        record = self.tree.record(entry_id) if self.tree is not None and entry_id else None
        actions: list[tuple[str, Any, bool]] = [
            ("Go to entry", self.activate_current, self.navigator is not None),
            ("Set label…", self.prompt_label, True),
            ("Clear label", self.clear_label, bool(record and self.tree and self.tree.label(record.id))),
            ("Fork from here", self.fork_current, bool(record and record.role == "user")),
            ("Clone up to here", self.clone_current, record is not None),
            ("Copy entry id", lambda: QGuiApplication.clipboard().setText(entry_id or ""), True),
            *self._context_edit_actions(record),
            *self._file_actions(entry_id),
        ]
        for index, (text, slot, enabled) in enumerate(actions + self.branch_tools.menu_actions(entry_id)):
            if index == len(actions):
                menu.addSeparator()
            action = QAction(text, menu)
            action.setEnabled(enabled)
            action.triggered.connect(slot)
            menu.addAction(action)
        return menu

    def _file_actions(self, entry_id: str | None) -> list[tuple[str, Any, bool]]:
        """Restore the project's files to the entry (asks first, listing them), or review what changed
        since it (in the Changes panel, when the window has one)."""
        rewind = self.rewind
        has = entry_id is not None and self.navigator is not None
        changes = self.receivers(SIGNAL_CHANGES_SINCE) > 0
        return [
            (RESTORE_FILES_TEXT, lambda: rewind.restore_to(entry_id) if rewind and entry_id else None, has and rewind is not None),
            (CHANGES_SINCE_TEXT, lambda: self.changesSinceRequested.emit(entry_id or ""), has and changes),
        ]  # fmt: skip

    def _context_edit_actions(self, record: EntryRecord | None) -> list[tuple[str, Any, bool]]:
        """Leave out / replace / restore what the model sees of a message on the current branch."""
        editable = bool(
            record is not None
            and self.navigator is not None
            and self.model is not None
            and self.model.data(self.view.currentIndex(), ACTIVE_ROLE)
            and (
                (record.type == "message" and record.role in ("user", "assistant", "toolResult"))
                or record.type == "custom_message"
            )
        )
        marked = (
            editable and record is not None and self.model is not None and self.model.edit_mark(record.id)
        )
        entry_id = record.id if record is not None else ""
        return [
            (LEAVE_OUT_TEXT, lambda: self.context_edit_requested.emit("leave-out", entry_id, None), editable),
            (REPLACE_TEXT, lambda: self.prompt_replacement(entry_id), editable),
            (RESTORE_TEXT, lambda: self.context_edit_requested.emit("restore", entry_id, None), bool(marked)),
        ]

    def prompt_replacement(self, entry_id: str) -> None:
        """Ask for the text the model sees instead of the entry's, starting from what it sees now."""
        if self.tree is not None and loop_running():
            self._background.spawn(self._ask_replacement(self.tree, entry_id))

    async def _ask_replacement(self, tree: SessionTree, entry_id: str) -> None:
        mark = self.model.edit_mark(entry_id) if self.model is not None else None
        if mark is not None and not mark.left_out:
            current = mark.now_sees
        else:
            try:
                entry = await asyncio.to_thread(tree.entry, entry_id)
            except (OSError, PiworkError, ValueError) as exc:
                self._set_status(f"The entry could not be read: {exc}")
                return
            current = content_text(entry_content(entry))
        dialog = ReplacementDialog(current, self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.accepted.connect(
            lambda: self.context_edit_requested.emit("replace", entry_id, dialog.text.toPlainText())
        )
        self.replacement_dialog = dialog
        dialog.open()

    def fork_current(self) -> asyncio.Task[Any] | None:
        """A new session holding the path before the selected user message, its text for the editor;
        made in a worker (every body on the path is read, and the new file written and fsynced)."""
        entry_id = self.current_entry_id()
        if self.session is None or entry_id is None:
            return None
        return self._background.spawn(self._fork(self.session, entry_id))

    async def _fork(self, session: Session, entry_id: str) -> None:
        self._set_status("Forking…")
        try:
            forked, editor_text, where = await asyncio.to_thread(_forked, session, entry_id)
        except PiworkError as exc:
            self._set_status(str(exc))
            return
        self._set_status("")
        self.branch_made.emit(
            "Forked",
            f"A new session starts just before “{_quote(editor_text)}”; that message is in the editor "
            "to change and send. " + where,
        )
        self.session_created.emit(forked, editor_text)

    def clone_current(self) -> asyncio.Task[Any] | None:
        """A new session holding the path up to the selected entry (the whole active branch at the leaf),
        made in a worker like a fork."""
        entry_id = self.current_entry_id()
        if self.session is None or entry_id is None:
            return None
        return self._background.spawn(self._clone(self.session, entry_id))

    async def _clone(self, session: Session, entry_id: str) -> None:
        whole = entry_id == session.tree.leaf_id
        record = session.tree.record(entry_id)
        self._set_status("Cloning…")
        try:
            created, where = await asyncio.to_thread(_cloned, session, entry_id, whole)
        except PiworkError as exc:
            self._set_status(str(exc))
            return
        self._set_status("")
        upto = "the whole active branch" if whole or record is None else f"up to “{_quote(record.preview)}”"
        self.branch_made.emit("Cloned", f"A copy of this session, {upto}, is now open. " + where)
        self.session_created.emit(created, "")

    # -- navigation ------------------------------------------------------------------------------
    def activate_current(self) -> None:
        entry_id = self.current_entry_id()
        if entry_id is not None:
            self.navigate_to(entry_id)

    def navigate_to(self, entry_id: str) -> asyncio.Task[Any] | None:
        """Start moving to `entry_id` (asks about a summary first unless skipPrompt is set)."""
        if self.tree is None or self.navigator is None:
            self._set_status("This session is open for browsing only.")
            return None
        if self.navigator.is_streaming:
            self._set_status(STREAMING_REFUSAL)
            return None
        if entry_id == self.tree.leaf_id or self._navigation is not None:
            return None
        self._set_status("")
        task = asyncio.ensure_future(self._navigate(entry_id))
        self._navigation = task
        self._tasks.add(task)
        task.add_done_callback(self._task_done)
        return task

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if task is self._navigation:
            self._navigation = None
        if not task.cancelled() and task.exception() is not None:
            self._set_status(f"Navigation failed: {task.exception()}")

    async def _ask_choice(self, entry_id: str) -> BranchChoice | None:
        assert self.tree is not None
        if self._skip_prompt():
            return BranchChoice(False)
        # The engine's own collection and budget: what a summary would really be given, whether the
        # entries' bodies are in memory or read back from the file (in a worker: it reads every body
        # of the branch being left).
        budget = self.navigator.summary_budget if self.navigator is not None else None
        tree = self.tree
        entries, messages, title = await asyncio.to_thread(
            _branch_left, tree, tree.leaf_id, entry_id, budget or 0
        )
        if self.tree is not tree:  # another session (or none) is shown meanwhile
            return None
        self._leaving = (entries, messages)
        restore = RestoreOption() if self.rewind is not None else None
        dialog = BranchChoiceDialog(entries, messages, title, self, restore=restore)
        if restore is not None and self.rewind is not None:
            restore.start(self.rewind, entry_id)  # the files are looked at in a worker meanwhile
        can_summarize = self.navigator is not None and self.navigator.can_summarize
        dialog.summarize.setEnabled(can_summarize)
        dialog.focused.setEnabled(can_summarize)
        if not can_summarize:
            dialog.summarize.setToolTip("No model available for summarization")
        self.branch_dialog = dialog
        try:
            accepted = await ask(dialog)
        finally:
            self.branch_dialog = None
            if restore is not None:
                restore.stop()
            dialog.close()
            dialog.deleteLater()
        if not accepted:
            return None
        choice = dialog.choice()
        if choice.dont_ask_again:
            await self._remember_skip_prompt()
        return choice

    async def _navigate(self, entry_id: str) -> None:
        try:
            await self._navigate_steps(entry_id)
        finally:
            self._navigation = None  # listeners of the signals below may start the next move

    async def _navigate_steps(self, entry_id: str) -> None:
        choice = await self._ask_choice(entry_id)
        if choice is None or self.navigator is None:
            return
        if choice.summarize:
            self._show_progress()
        try:
            result: NavigationResult = await self.navigator.navigate(
                entry_id,
                summarize=choice.summarize,
                focus=choice.focus,
                replace_instructions=choice.replace_instructions,
                label=choice.label,
                on_progress=self._on_progress,
            )
        except asyncio.CancelledError:
            self._set_status("Navigation cancelled; nothing was changed.")
            raise
        except PiworkError as exc:
            reason = str(exc).rstrip(".")
            way_on = " Try again, or move with No summary." if choice.summarize else ""
            self._set_status(f"Not moved: {reason}. Nothing was changed.{way_on}")
            return
        finally:
            self._hide_progress()
        if result.cancelled:
            self._set_status("Navigation cancelled; nothing was changed.")
            return
        self._navigation = None
        self._set_status(result.notice or "")
        if result.editor_text is not None:
            self.editor_text_requested.emit(result.editor_text)
        self.navigated.emit(result)
        if choice.restore_files and self.rewind is not None:
            self.rewind.restore_after_move(entry_id)

    def _show_progress(self) -> None:
        dialog = QProgressDialog("Summarizing the branch you are leaving…", "Cancel", 0, 0, self)
        dialog.setWindowTitle("Branch summary")
        dialog.setMinimumDuration(0)
        dialog.canceled.connect(self.cancel_navigation)
        dialog.show()
        self.progress = dialog

    def _hide_progress(self) -> None:
        if self.progress is not None:
            self.progress.canceled.disconnect(self.cancel_navigation)
            self.progress.close()
            self.progress.deleteLater()
            self.progress = None

    def _on_progress(self, progress: BranchSummaryProgress) -> None:
        if self.progress is not None:
            entries, messages = self._leaving
            known = messages if entries == progress.entry_count else None  # else the branch changed since
            texts = {
                "collected": "Collected the branch: "
                + (
                    branch_contents(entries, messages)
                    if known is not None
                    else f"{progress.entry_count:,} entries"
                )
                + "…",
                "summarizing": summarizing_text(progress.entry_count, known),
                "written": "Summary written.",
            }
            self.progress.setLabelText(texts.get(progress.stage, ""))

    def cancel_navigation(self) -> None:
        if self._navigation is not None:
            self._navigation.cancel()

    def attach(self, runtime: AgentRuntime) -> None:
        """Show the open session's tree, moving in it through its agent session: laid out in a worker
        while the window's loop runs (a 100k-entry session takes most of a second), at once without it."""
        self.set_settings(runtime.resources.settings)
        self.branch_tools.agent_dir = Path(runtime.resources.agent_dir)  # where its checkpoints are
        navigator = AgentNavigator(runtime.session)
        if not loop_running():
            self.set_session(runtime.store, navigator)
            return
        self._detach()
        self.branch_tools.reset()
        self.details.show(None, None)
        self.session, self.tree, self.navigator = runtime.store, runtime.store.tree, navigator
        self._set_status("Laying out the session's entries…")
        self._first_layout = self._background.spawn(self._lay_out_first(runtime.store, navigator))

    @property
    def loading(self) -> bool:
        """The open session's tree is still being laid out in a worker (``model`` is None until then)."""
        return self._first_layout is not None and not self._first_layout.done()

    def when_loaded(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` once the open session's tree is shown (at once when it is)."""
        if self.loading:
            self._after_loading.append(callback)
        else:
            callback()

    async def _lay_out_first(self, session: Session, navigator: AgentNavigator) -> None:
        """The display tree of a session just attached, built in a worker; built again when entries came
        or the filter changed meanwhile (a few times, then here), then shown as ``set_session`` shows it."""
        display: DisplayTree | None = None
        for _attempt in range(LAYOUT_ATTEMPTS):
            changes: list[object] = []
            unsubscribe = session.tree.subscribe(changes.append)
            mode = self.filter_mode()
            try:
                built = await asyncio.to_thread(build_display_tree, session.tree, mode)
            except RuntimeError:  # the tree changed under the worker (a dict resized): again
                continue
            except (OSError, PiworkError) as exc:  # an entry's body could not be read back
                self._set_status(f"The entries could not be laid out: {exc}")
                built = None
            finally:
                unsubscribe()
            if self.session is not session:
                return
            if not changes and mode == self.filter_mode():
                display = built
                break
        self._first_layout = None
        waiting, self._after_loading = self._after_loading, []
        self.set_session(session, navigator, display)  # without a display: built here
        if self.status.text() == "Laying out the session's entries…":
            self._set_status("")
        self.loaded.emit()
        for callback in waiting:
            callback()

    def detach(self) -> None:
        """Nothing to let go: the tree shown stays until the next session replaces it."""

    def shutdown(self) -> None:
        """Cancel background work (call before the window closes)."""
        for task in list(self._tasks):
            task.cancel()
        self._layout_cancel.set()
        self._background.cancel_all()
        self.details.shutdown()
        self.labels.shutdown()
        self.branch_tools.shutdown()
        with contextlib.suppress(RuntimeError):
            self._detach()
