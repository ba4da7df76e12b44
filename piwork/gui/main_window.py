"""The main window: lays out the chat, the docks, menus and status bar, and wires the window-level actions.

Everything that talks to the engine lives in the session controller; this class only arranges widgets,
remembers geometry and dock layout (QSettings), exposes actions and docks for the controller to wire, and
keeps the panels that attach to the open session (``panels``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, cast

from PySide6 import __version__ as pyside_version
from PySide6.QtCore import QByteArray, QEvent, QObject, QSettings, QSize, Qt, QTimer, Signal, qVersion
from PySide6.QtGui import (
    QAction,
    QCloseEvent,
    QDragEnterEvent,
    QDragMoveEvent,
    QDropEvent,
    QIcon,
    QKeySequence,
    QShowEvent,
)
from PySide6.QtWidgets import (
    QDockWidget,
    QFrame,
    QMainWindow,
    QMenu,
    QMessageBox,
    QScrollArea,
    QTabWidget,
    QWidget,
)

from piwork import __version__
from piwork.gui.accessibility import name_unnamed_controls
from piwork.gui.actions import ACTIONS, MENUS, SESSION_ACTIONS
from piwork.gui.assets import resource_path
from piwork.gui.desktop_notices import NOTIFY_KEY, ReplyNotifier, notices_enabled
from piwork.gui.panels import LazyPanel, SessionPanels
from piwork.gui.project_switcher import ProjectSwitcher, project_name
from piwork.gui.recent_projects import age_text, recent_projects
from piwork.gui.rewind import FileRewind
from piwork.gui.status_bar import WorkbenchStatusBar
from piwork.gui.tabs.chat_tab import ChatTab
from piwork.gui.tabs.strip import TabStrip
from piwork.gui.theme import Theme, load_theme
from piwork.gui.tree.chat_link import chat_row_of_entry
from piwork.gui.tree.tree_panel import SessionTreePanel
from piwork.gui.window_drops import REFUSED_HINT, DropTarget, drop_target
from piwork.gui.window_layout import CHAT_MIN_WIDTH, SIDE_MIN_WIDTH, restore_tabs, save_tabs, side_widths
from piwork.gui.worktrees.flow import WorktreeFlow

if TYPE_CHECKING:
    from piwork.gui.approval_flow import WindowApprovals
    from piwork.gui.changes.panel import ChangesPanel
    from piwork.gui.chat.chat_panel import ChatPanel
    from piwork.gui.context.context_panel import ContextPanel
    from piwork.gui.logs.panel import LogViewerPanel
    from piwork.gui.panels import SessionPanel
    from piwork.gui.recent_sessions import RecentSessionsFeed
    from piwork.gui.resources.panel import ResourcePanel
    from piwork.gui.shortcuts_dialog import ShortcutsDialog

GEOMETRY_KEY = "mainWindow/geometry"
STATE_KEY = "mainWindow/state"
STATE_VERSION = 1


DOCK_MIN_SIZE = QSize(180, 120)


def _scrollable(widget: QWidget | None = None) -> QScrollArea:
    """A panel inside a scroll area: opening a dock never widens the window to the panel's minimum size;
    a panel narrower than its content scrolls instead of being cut off. Without ``widget``, the panel
    is put in when it is made (``hold``)."""
    holder = QScrollArea()
    holder.setWidgetResizable(True)
    holder.setFrameShape(QFrame.Shape.NoFrame)
    holder.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # the panel's own controls take focus, not the frame
    holder.setMinimumSize(DOCK_MIN_SIZE)
    if widget is not None:
        hold(holder, widget)
    return holder


def hold(holder: QScrollArea, widget: QWidget) -> None:
    holder.setObjectName(widget.objectName() + "Scroll" if widget.objectName() else "")
    holder.setWidget(widget)


class _Dock(QDockWidget):
    """A dock whose panel may be made as it is first shown: before it is laid out, so the dock opens as it
    always did (its size fitted to the panel, its controls in the first frame that shows it)."""

    def __init__(self, title: str, parent: QWidget, make: Callable[[], object] | None) -> None:
        super().__init__(title, parent)
        self._make = make

    def setVisible(self, visible: bool) -> None:
        if visible and self._make is not None:
            make, self._make = self._make, None
            make()
        super().setVisible(visible)


REOPEN_LAST_KEY = "session/reopenLast"  # window.ini


PREFERRED_SIZE = QSize(1100, 780)


def first_size(available: QSize | None) -> QSize:
    """The window's size at a first start: its preferred size, within the screen's free area (a 1000×700
    screen gets a window that fits, title bar and footer included)."""
    if available is None or available.isEmpty():
        return PREFERRED_SIZE
    return QSize(
        min(PREFERRED_SIZE.width(), available.width() - 20),
        min(PREFERRED_SIZE.height(), available.height() - 40),  # the window manager's title bar
    )


class MainWindow(QMainWindow):
    closing = Signal()
    themeToggled = Signal(bool)  # True = dark
    projectChosen = Signal(str)  # a folder picked in File → Open Recent or the switcher, or dropped
    sessionFileChosen = Signal(str)  # a session file (.jsonl) dropped on the window

    def __init__(
        self, ui_state: QSettings, theme: Theme | None = None, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setObjectName("mainWindow")
        self.setWindowTitle("piwork")
        self.setWindowIcon(QIcon(str(resource_path("icons", "piwork.svg"))))
        self.setDockOptions(
            QMainWindow.DockOption.AnimatedDocks
            | QMainWindow.DockOption.AllowNestedDocks
            | QMainWindow.DockOption.AllowTabbedDocks
        )
        self.ui_state = ui_state
        self.theme = theme or load_theme("light")
        # the sessions open in this window, one chat each, as tabs (see ``piwork.gui.tabs``)
        self.strip = TabStrip(self.theme, self)
        self.setCentralWidget(self.strip)
        self.status = WorkbenchStatusBar(self)
        self.setStatusBar(self.status)
        self.action_map: dict[str, QAction] = {}
        self.menus: dict[str, object] = {}
        self.docks: dict[str, QDockWidget] = {}
        self._held_actions: list[QAction] = []  # disabled until the session's parts are made
        self._build_menus()
        self.tree_panel = SessionTreePanel(self)
        self.add_dock("tree", "Session Tree", self.tree_panel, Qt.DockWidgetArea.LeftDockWidgetArea, "Alt+1")
        # The other docks start hidden: each panel is made when its dock is first shown (before the frame
        # that shows it), or when something asks for it (``dock_panel``), not before the window's first frame.
        self._makers: dict[str, Callable[[], QWidget]] = {}
        self._made: dict[str, QWidget] = {}
        self._lazy: dict[str, LazyPanel] = {}
        self.add_lazy_dock("resources", "Resources", self._make_resources, Qt.DockWidgetArea.RightDockWidgetArea,
                           "Alt+2")  # fmt: skip
        self.add_lazy_dock("logs", "Tool Output Logs", self._make_logs, Qt.DockWidgetArea.BottomDockWidgetArea,
                           "Alt+3")  # fmt: skip
        self.add_lazy_dock("context", "Context", self._make_context, Qt.DockWidgetArea.RightDockWidgetArea,
                           "Alt+4")  # fmt: skip
        self.add_lazy_dock("changes", "Changes", self._make_changes, Qt.DockWidgetArea.RightDockWidgetArea,
                           "Alt+6")  # fmt: skip
        for dock_id in ("resources", "logs", "context", "changes"):
            self.docks[dock_id].hide()
        # each panel attaches to the session of the tab in front itself (see ``piwork.gui.panels``)
        self.panels = SessionPanels()
        self.panels.register(self.tree_panel)
        for dock_id in ("resources", "logs", "context", "changes"):
            self.panels.register(self._lazy[dock_id])
        # the first tab: a window opens with one session (a controller claims it, see ``SessionController``)
        self.first_tab = self.new_tab()
        # restoring the project's files to a point of the conversation, and undoing it (its notices go to
        # the chat in front: ``rewind.set_presenter`` as a tab comes to the front)
        self.rewind = FileRewind(self.chat.presenter, self)
        self.tree_panel.rewind = self.rewind
        self.panels.register(self.rewind)
        self.switcher = ProjectSwitcher(ui_state, self.action_map["open_folder"], self.status)
        self.switcher.projectChosen.connect(self.projectChosen)
        self.status.insertPermanentWidget(0, self.switcher)
        self._title = ("", "")  # the session's name and folder, for the title
        self._worktree: tuple[str, str] | None = None  # the branch and repository of a worktree session
        self._waiting = 0  # what waits for the user in the inbox, counted first in the title
        self.worktrees = WorktreeFlow(self)
        self.panels.register(self.worktrees)
        self._wire_window_actions()
        # Folders and session files dropped anywhere on the window open (see ``eventFilter``).
        self.setAcceptDrops(True)
        self._drag: DropTarget | None = None
        # Drops kept while the session's parts are made, then opened one by one in the order dropped (a drop
        # meanwhile waits behind them; see ``next_held_drop``); None: a drop opens as it comes.
        self._held_drops: list[DropTarget] | None = None
        for dock in self.docks.values():  # a panel may build its fields when first shown
            dock.visibilityChanged.connect(self._watch_drops_when_shown)
        self.resize(first_size(self.screen().availableGeometry().size() if self.screen() else None))
        # The tree starts narrow enough to leave the conversation most of the width (a saved layout wins).
        left, _right = side_widths(self.width(), True, False)
        self.resizeDocks([self.docks["tree"]], [left], Qt.Orientation.Horizontal)
        self.docks["tree"].setProperty("fitted", True)
        # The tabbed panels whose current tab is remembered with the layout (each as it is made).
        self.tabbed: dict[str, QTabWidget] = {"tree": self.tree_panel.views}

    # ---- tabs --------------------------------------------------------------------------------

    @property
    def front_tab(self) -> ChatTab:
        return self.strip.front or self.first_tab

    @property
    def chat(self) -> ChatPanel:
        """The chat of the tab in front (what the window's actions act on)."""
        return self.front_tab.chat

    @property
    def approvals(self) -> WindowApprovals:
        return self.front_tab.approvals

    @property
    def recent_sessions(self) -> RecentSessionsFeed:
        return self.front_tab.recent_sessions

    @property
    def reply_notifier(self) -> ReplyNotifier:
        return self.front_tab.reply_notifier

    def new_tab(self, *, front: bool = True) -> ChatTab:
        """A new tab with an empty chat (its controller opens a session into it)."""
        tab = ChatTab(self.theme, self, self.ui_state)
        self.adopt_tab(tab, front=front)
        return tab

    def adopt_tab(self, tab: ChatTab, *, front: bool = True) -> None:
        """Show ``tab`` (new, or moved from another window) as one of this window's tabs."""
        if tab.parent() is not self:
            tab.move_to(self)
        tab.chat.view.openLogRequested.connect(self.open_log)
        tab.chat.footer.contextPanelRequested.connect(self._show_context_of_chat)
        tab.sessionChosen.connect(self.sessionFileChosen)
        self.strip.add(tab, front=front)
        if self.isVisible():
            name_unnamed_controls(tab.chat)
            self.watch_drops()

    def release_tab(self, tab: ChatTab) -> None:
        """``tab`` leaves this window (closed, or moved to another)."""
        tab.chat.view.openLogRequested.disconnect(self.open_log)
        tab.chat.footer.contextPanelRequested.disconnect(self._show_context_of_chat)
        tab.sessionChosen.disconnect(self.sessionFileChosen)
        self.strip.remove(tab)

    def _show_context_of_chat(self) -> None:
        self.show_context_panel(0)

    # ---- docks made when first shown -----------------------------------------------------------

    @property
    def resource_panel(self) -> ResourcePanel:
        return cast("ResourcePanel", self.dock_panel("resources"))

    @property
    def log_panel(self) -> LogViewerPanel:
        return cast("LogViewerPanel", self.dock_panel("logs"))

    @property
    def context_panel(self) -> ContextPanel:
        return cast("ContextPanel", self.dock_panel("context"))

    @property
    def changes_panel(self) -> ChangesPanel:  # ``show_since(entry_id)``: "Changes since here"
        return cast("ChangesPanel", self.dock_panel("changes"))

    def panel_made(self, dock_id: str) -> bool:
        return dock_id in self._made or dock_id not in self._makers

    def add_lazy_dock(
        self,
        dock_id: str,
        title: str,
        make: Callable[[], QWidget],
        area: Qt.DockWidgetArea,
        shortcut: str = "",
    ) -> QDockWidget:
        """A dock whose panel ``make`` builds when the dock is first shown or the panel first asked for; it
        attaches to the session shown by then (through its place in ``panels``)."""
        self._makers[dock_id] = make
        self._lazy[dock_id] = LazyPanel(lambda: cast("SessionPanel", self.dock_panel(dock_id)))
        dock = self.add_dock(dock_id, title, None, area, shortcut)
        # shown along with the window (a restored layout), where ``_Dock.setVisible`` is not asked
        dock.visibilityChanged.connect(lambda visible: self.dock_panel(dock_id) if visible else None)
        return dock

    def dock_panel(self, dock_id: str) -> QWidget:
        """The panel of dock ``dock_id``, made now if it was not yet."""
        panel = self._made.get(dock_id)
        if panel is not None:
            return panel
        dock = self.docks[dock_id]
        holder = dock.widget()
        if dock_id not in self._makers:  # a dock made with its panel
            assert isinstance(holder, QScrollArea)
            widget = holder.widget()
            assert widget is not None
            return widget
        panel = self._makers[dock_id]()
        self._made[dock_id] = panel
        assert isinstance(holder, QScrollArea)
        hold(holder, panel)
        tabs = getattr(panel, "tabs", None)
        if isinstance(tabs, QTabWidget):
            self.tabbed[dock_id] = tabs
            restore_tabs(self.ui_state, {dock_id: tabs})
        self._lazy[dock_id].made()
        if self.isVisible():
            name_unnamed_controls(panel)
            self.watch_drops()
        return panel

    def _make_resources(self) -> QWidget:
        from piwork.gui.resources.panel import ResourcePanel

        return ResourcePanel(self)

    def _make_logs(self) -> QWidget:
        from piwork.gui.logs.panel import LogViewerPanel

        panel = LogViewerPanel(self)
        panel.send_to_chat.connect(lambda text: self.chat.composer.insert_text(text))
        return panel

    def _make_context(self) -> QWidget:
        from piwork.gui.context.context_panel import ContextPanel

        return ContextPanel(self)

    def _make_changes(self) -> QWidget:
        from piwork.gui.changes.panel import ChangesPanel

        return ChangesPanel(self)

    # ---- building ----------------------------------------------------------------------------

    def _build_menus(self) -> None:
        bar = self.menuBar()
        for name in MENUS:
            self.menus[name] = bar.addMenu("&" + name)
        for spec in ACTIONS:
            action = QAction(spec.text, self)
            action.setObjectName("action_" + spec.id)
            if spec.shortcut:
                action.setShortcut(QKeySequence(spec.shortcut))
                action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
            if spec.tip:
                action.setStatusTip(spec.tip)
                action.setToolTip(spec.tip)
            action.setCheckable(spec.checkable)
            if spec.id == "quit":
                action.setMenuRole(QAction.MenuRole.QuitRole)
            if spec.id == "about":
                action.setMenuRole(QAction.MenuRole.AboutRole)
            menu = self.menus[spec.menu]
            if spec.id in ("quit", "settings", "focus_composer", "trust", "stop"):
                menu.addSeparator()  # type: ignore[attr-defined]
            menu.addAction(action)  # type: ignore[attr-defined]
            self.action_map[spec.id] = action
            if spec.id == "open_folder" and isinstance(menu, QMenu):
                self.recent_menu = self._recent_menu(menu)
        self.menus["View"].addSeparator()  # type: ignore[attr-defined]

    def add_dock(
        self, dock_id: str, title: str, widget: QWidget | None, area: Qt.DockWidgetArea, shortcut: str = ""
    ) -> QDockWidget:
        """Dock ``widget`` (None: see ``add_lazy_dock``); its show/hide toggle goes in the View menu. Layout
        is remembered by ``dock_id``."""
        dock = _Dock(title, self, (lambda: self.dock_panel(dock_id)) if widget is None else None)
        dock.setObjectName("dock_" + dock_id)
        dock.setWidget(_scrollable(widget))
        dock.setFeatures(
            QDockWidget.DockWidgetFeature.DockWidgetMovable
            | QDockWidget.DockWidgetFeature.DockWidgetClosable
            | QDockWidget.DockWidgetFeature.DockWidgetFloatable
        )
        self.addDockWidget(area, dock)
        toggle = dock.toggleViewAction()
        toggle.setObjectName("action_toggle_" + dock_id)
        if shortcut:
            toggle.setShortcut(QKeySequence(shortcut))
        self.menus["View"].addAction(toggle)  # type: ignore[attr-defined]
        self.docks[dock_id] = dock
        dock.visibilityChanged.connect(lambda visible, d=dock: self._fit_when_shown(d, visible))
        return dock

    def _fit_when_shown(self, dock: QDockWidget, visible: bool) -> None:
        if not visible or dock.isFloating():
            return
        if self.dockWidgetArea(dock) in (
            Qt.DockWidgetArea.BottomDockWidgetArea,
            Qt.DockWidgetArea.TopDockWidgetArea,
        ):
            self._fit_bottom_dock(dock)
        else:  # once the layout has placed it
            QTimer.singleShot(0, self, lambda: self.fit_side_docks(dock))

    def _side_docks(self) -> dict[str, list[QDockWidget]]:
        sides: dict[str, list[QDockWidget]] = {"left": [], "right": []}
        names = {Qt.DockWidgetArea.LeftDockWidgetArea: "left", Qt.DockWidgetArea.RightDockWidgetArea: "right"}
        for dock in self.docks.values():
            side = names.get(self.dockWidgetArea(dock))
            if side and dock.isVisible() and not dock.isFloating():
                sides[side].append(dock)
        return sides

    def fit_side_docks(self, opened: QDockWidget | None = None) -> None:
        """A side dock opening for the first time takes its preferred width, and whenever opening one
        leaves the conversation narrower than ``CHAT_MIN_WIDTH`` or a dock narrower than
        ``SIDE_MIN_WIDTH``, the open side docks share the width again (see ``side_widths``)."""
        first = opened is not None and opened.property("fitted") is None
        if opened is not None:
            opened.setProperty("fitted", True)
        sides = self._side_docks()
        shown = sides["left"] + sides["right"]
        central = self.centralWidget()
        cramped = (central is not None and central.width() < CHAT_MIN_WIDTH) or any(
            dock.width() < SIDE_MIN_WIDTH for dock in shown
        )
        if not shown or not (first or cramped):
            return
        left, right = side_widths(self.width(), bool(sides["left"]), bool(sides["right"]))
        widths = {"left": left, "right": right}
        docks: list[QDockWidget] = []
        sizes: list[int] = []
        for side, listed in sides.items():
            for dock in listed:
                docks.append(dock)
                sizes.append(widths[side] if cramped or dock is opened else min(dock.width(), widths[side]))
        self.resizeDocks(docks, sizes, Qt.Orientation.Horizontal)

    def _fit_bottom_dock(self, dock: QDockWidget) -> None:
        """A bottom panel opens at a third of the window's height, leaving the conversation readable."""
        if dock.property("fitted") is None:
            dock.setProperty("fitted", True)
            self.resizeDocks([dock], [max(160, self.height() // 3)], Qt.Orientation.Vertical)

    def _wire_window_actions(self) -> None:
        a = self.action_map
        a["quit"].triggered.connect(self.close)
        a["about"].triggered.connect(self.show_about)
        a["shortcuts"].triggered.connect(self.show_shortcuts)
        # what acts on a chat acts on the chat in front when it is triggered
        a["focus_composer"].triggered.connect(lambda: self.chat.composer.setFocus())
        a["stop"].triggered.connect(lambda: self.chat.stopRequested.emit())
        a["pick_model"].triggered.connect(lambda: self.chat.footer.model_picker.showPopup())
        a["cycle_thinking"].triggered.connect(lambda: self.chat.footer.thinking_picker.cycle())
        a["session_tree"].triggered.connect(self.show_tree)
        a["undo_restore"].setEnabled(False)
        a["undo_restore"].triggered.connect(lambda: self.rewind.undo_last())
        self.rewind.undoAvailable.connect(a["undo_restore"].setEnabled)
        self.rewind.told.connect(self.tree_panel.show_status)
        session_menu = self.menus["Session"]
        if isinstance(session_menu, QMenu):  # a revert in the Changes panel can be undone like a restore
            session_menu.aboutToShow.connect(self.rewind.refresh_undo)
        self.tree_panel.changesSinceRequested.connect(
            lambda entry_id: self.changes_panel.show_since(entry_id)
        )
        # the files moved under it (a panel not made yet reads them when it is)
        self.rewind.restored.connect(
            lambda _plan: self.changes_panel.refresh() if self.panel_made("changes") else None
        )
        self.tree_panel.editor_text_requested.connect(lambda text: self.chat.composer.set_text(text))
        self.tree_panel.entry_selected.connect(self.show_entry_in_chat)
        a["toggle_theme"].setChecked(self.theme.dark)
        a["toggle_theme"].toggled.connect(self.themeToggled)
        # Reopen Last Session at Start and Start Fresh are the two answers to one setting.
        a["reopen_last"].setChecked(self.reopens_last_session())
        a["start_fresh"].setChecked(not self.reopens_last_session())
        a["reopen_last"].toggled.connect(self._set_reopen_last)
        a["start_fresh"].toggled.connect(lambda fresh: self._set_reopen_last(not fresh))
        a["desktop_notices"].setChecked(notices_enabled(self.ui_state))
        a["desktop_notices"].toggled.connect(lambda on: self.ui_state.setValue(NOTIFY_KEY, on))

    def _recent_menu(self, parent: QMenu) -> QMenu:
        """File → Open Recent: the project folders opened lately, with when; filled as it opens."""
        menu = parent.addMenu("Open &Recent")
        menu.setObjectName("recentMenu")
        menu.aboutToShow.connect(lambda: self.fill_recent_menu(menu))
        return menu

    def fill_recent_menu(self, menu: QMenu) -> None:
        menu.clear()
        now = time.time()
        listed = recent_projects(self.ui_state)
        for folder, when in listed:
            action = menu.addAction(f"{folder}    ({age_text(now - when)})")
            action.setToolTip(folder)
            action.triggered.connect(lambda _checked=False, f=folder: self.projectChosen.emit(f))
        if not listed:
            menu.addAction("No project opened yet").setEnabled(False)

    # ---- before the session's parts are made --------------------------------------------------

    def wait_for_session_parts(self) -> None:
        """The window shows before the parts that answer its session's actions are made (``piwork.gui.app``):
        until ``session_parts_made``, those actions (and File → Open Recent) are disabled, their menu items
        greyed and their shortcuts inert, rather than doing nothing when used; so is the project switcher,
        whose menu is Open Recent's projects and Open Folder. A drop cannot be greyed (it comes from outside
        the window): one made meanwhile is kept and opens once the parts are made (``next_held_drop``)."""
        if self._held_drops is None:
            self._held_drops = []
        self.switcher.set_waiting(True)
        for action in [
            *(self.action_map[action_id] for action_id in SESSION_ACTIONS),
            self.recent_menu.menuAction(),
        ]:
            if action.isEnabled():
                action.setEnabled(False)
                self._held_actions.append(action)

    def session_parts_made(self) -> None:
        """The actions held by ``wait_for_session_parts`` act again, as they did before. What was dropped
        meanwhile is the first tab's to open, drop by drop (``next_held_drop``); until the last has been
        taken, a new drop waits behind them."""
        held, self._held_actions = self._held_actions, []
        for action in held:
            action.setEnabled(True)
        self.switcher.set_waiting(False)
        if not self._held_drops:
            self._held_drops = None

    def holds_drops(self) -> bool:
        """Something dropped on the window waits to be opened (see ``next_held_drop``)."""
        return bool(self._held_drops)

    def next_held_drop(self) -> DropTarget | None:
        """The first of the drops kept while the session's parts were made (the status bar says it opens);
        None once there is none left, and from then on a drop opens as it comes. None too once the window
        has closed: what was dropped on it is forgotten with it."""
        held = self._held_drops
        if not held:
            self._held_drops = None
            return None
        target = held.pop(0)
        self.status.showMessage(self._opening_text(target), 5000)
        return target

    # ---- behaviour ---------------------------------------------------------------------------

    def _set_reopen_last(self, on: bool) -> None:
        self.ui_state.setValue(REOPEN_LAST_KEY, on)
        for action_id, checked in (("reopen_last", on), ("start_fresh", not on)):
            action = self.action_map[action_id]
            action.blockSignals(True)
            action.setChecked(checked)
            action.blockSignals(False)

    def reopens_last_session(self) -> bool:
        """Whether opening a project continues its latest session (Session → Reopen Last Session at
        Start; on unless turned off)."""
        return bool(self.ui_state.value(REOPEN_LAST_KEY, True, type=bool))

    def show_context_panel(self, tab: int | None = None) -> None:
        dock = self.docks["context"]
        dock.show()
        dock.raise_()
        if tab is not None:
            self.context_panel.tabs.setCurrentIndex(tab)

    def show_tree(self) -> None:
        dock = self.docks["tree"]
        dock.show()
        dock.raise_()
        self.tree_panel.focus_shown_view()

    def show_entry_in_chat(self, entry_id: str | None) -> bool:
        """Scroll the chat to the row of an entry picked in the branch graph (if the chat shows it)."""
        tree = self.tree_panel.tree
        if tree is None or entry_id is None:
            return False
        key = chat_row_of_entry(tree.entry(entry_id), self.chat.presenter.message_rows())
        return key is not None and self.chat.view.reveal_row_key(key)

    def open_log(self, path: str) -> None:
        dock = self.docks["logs"]
        dock.show()
        dock.raise_()
        if path:
            self.log_panel.open_log(path)

    def set_theme(self, theme: Theme) -> None:
        self.theme = theme
        self.strip.set_theme(theme)
        action = self.action_map["toggle_theme"]
        action.blockSignals(True)
        action.setChecked(theme.dark)
        action.blockSignals(False)

    def show_about(self) -> QMessageBox:
        import platform

        box = QMessageBox(self)
        box.setWindowTitle("About piwork")
        box.setIconPixmap(QIcon(str(resource_path("icons", "piwork.svg"))).pixmap(64, 64))
        box.setTextFormat(Qt.TextFormat.RichText)
        box.setText(
            f"<h3>piwork {__version__}</h3>"
            "<p>A desktop workbench for coding-agent sessions. It reads and writes Pi's session and resource "
            "files, so the same sessions open in both.</p>"
            f"<p>Python {platform.python_version()} · Qt {qVersion()} · PySide6 {pyside_version}</p>"
            "<p>MIT licence.</p>"
        )
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.setModal(False)
        box.show()
        return box

    def show_shortcuts(self) -> ShortcutsDialog:
        from piwork.gui.shortcuts_dialog import ShortcutsDialog

        docks = [
            ("View", dock.windowTitle(), dock.toggleViewAction().shortcut().toString())
            for dock in self.docks.values()
            if not dock.toggleViewAction().shortcut().isEmpty()
        ]
        dialog = ShortcutsDialog(extra=docks, parent=self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.show()
        return dialog

    def set_session_title(self, name: str | None, cwd: str) -> None:
        """The title names the session (when named) and the project; the switcher shows the project."""
        self._title = (name or "", cwd)
        self._show_title()
        self.setWindowFilePath(cwd)
        self.switcher.set_folder(cwd)

    def set_worktree(self, branch: str | None, repo: str | None) -> None:
        """A session in a git worktree: the title names its branch and the repository it belongs to."""
        self._worktree = (branch, repo) if branch and repo else None
        self._show_title()

    def set_waiting_count(self, count: int) -> None:
        """How many things wait for the user (the inbox): "(2) session — folder — piwork"; 0 shows none."""
        self._waiting = count
        self._show_title()

    def _show_title(self) -> None:
        name, cwd = self._title
        project = project_name(cwd)
        if self._worktree is not None:
            project += f" [{self._worktree[0]}, worktree of {self._worktree[1]}]"
        title = f"{name} — {project} — piwork" if name else f"{project} — piwork"
        self.setWindowTitle(f"({self._waiting}) {title}" if self._waiting else title)

    # ---- drops -------------------------------------------------------------------------------

    def _watch_drops_when_shown(self, visible: bool) -> None:
        if visible:
            self.watch_drops()

    def watch_drops(self) -> None:
        """Route drags over the widgets that take drops themselves (the composer, search fields...) through
        ``eventFilter``; the others pass their drags up to the window, which is watched too."""
        for widget in [self, *self.findChildren(QWidget)]:
            if widget.acceptDrops() and not widget.property("dropsWatched"):
                widget.setProperty("dropsWatched", True)
                widget.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """A drag of files or folders over any part of this window is the window's to take or refuse (the
        composer would otherwise paste the file's URL as text); a drag of text goes where it is dropped."""
        kind = event.type()
        if kind not in (QEvent.Type.DragEnter, QEvent.Type.DragMove, QEvent.Type.DragLeave, QEvent.Type.Drop):
            return False
        if not isinstance(watched, QWidget) or watched.window() is not self:
            return False
        if kind == QEvent.Type.DragLeave:
            if self._drag is not None:
                self._drag = None
                self.status.clearMessage()
            return False
        if not isinstance(event, QDropEvent) or not event.mimeData().hasUrls():
            return False
        if isinstance(event, QDragEnterEvent):
            self._drag = drop_target(event.mimeData())
            self.status.showMessage(self._drag_text(self._drag), 8000)
        if self._drag is None:  # a drop without its enter (sent straight to a widget)
            self._drag = drop_target(event.mimeData())
        target = self._drag
        if target.kind is None:
            event.ignore()
        else:
            event.setDropAction(Qt.DropAction.CopyAction)
            event.accept()
        if kind == QEvent.Type.Drop:
            self._drag = None
            self._take_drop(target)
        return True

    @staticmethod
    def _drag_text(target: DropTarget) -> str:
        if target.kind == "folder":
            return f"Drop to open the project {target.path}"
        if target.kind == "session":
            return f"Drop to open the session {target.path}"
        return f"Cannot open this: {target.reason}"

    @staticmethod
    def _opening_text(target: DropTarget, later: str = "") -> str:
        what = "project" if target.kind == "folder" else "session"
        return f"Opening the {what} {target.path}{later}…"

    def _take_drop(self, target: DropTarget) -> None:
        if target.kind is None:
            self.status.showMessage(f"Not opened: {target.reason}", 8000)
            return
        held = self._held_drops
        if held is not None:  # nobody hears the window's choices yet, or earlier drops still wait to open
            held.append(target)
            waiting = f" ({len(held)} drops waiting)" if len(held) > 1 else ""
            self.status.showMessage(self._opening_text(target, " once piwork has started") + waiting)
            return
        self.status.showMessage(self._opening_text(target), 5000)
        if target.kind == "folder":
            self.projectChosen.emit(target.path)
        else:
            self.sessionFileChosen.emit(target.path)

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        # Only drags without files or folders get here (see ``eventFilter``): nothing to open.
        self.status.showMessage(f"Cannot open this: not a file or folder. {REFUSED_HINT}", 8000)
        event.ignore()

    def dragMoveEvent(self, event: QDragMoveEvent) -> None:
        event.ignore()

    # ---- layout persistence ------------------------------------------------------------------

    def restore_layout(self) -> bool:
        """Restore geometry, dock layout and each panel's current tab saved by an earlier run; False when
        there was none. What Qt cannot read back (a damaged or foreign value) leaves the defaults."""
        geometry = self.ui_state.value(GEOMETRY_KEY)
        state = self.ui_state.value(STATE_KEY)
        restored = False
        if isinstance(geometry, QByteArray | bytes) and geometry:
            restored = self.restoreGeometry(QByteArray(geometry))
        if (
            isinstance(state, QByteArray | bytes)
            and state
            and self.restoreState(QByteArray(state), STATE_VERSION)
        ):
            restored = True
            for dock in self.docks.values():  # a saved layout keeps its widths
                dock.setProperty("fitted", True)
        restore_tabs(self.ui_state, self.tabbed)
        return restored

    def save_layout(self) -> None:
        self.ui_state.setValue(GEOMETRY_KEY, self.saveGeometry())
        self.ui_state.setValue(STATE_KEY, self.saveState(STATE_VERSION))
        save_tabs(self.ui_state, self.tabbed)
        self.ui_state.sync()

    def showEvent(self, event: QShowEvent) -> None:
        # Panels name their controls; whatever a panel left unnamed is named after its placeholder, tab or dock.
        name_unnamed_controls(self)
        self.watch_drops()
        super().showEvent(event)

    def closeEvent(self, event: QCloseEvent) -> None:
        if self._held_drops is not None:  # nothing opens for a window that is gone
            self._held_drops.clear()
        self.save_layout()
        self.closing.emit()
        self.panels.shutdown()
        for tab in self.strip.tabs:  # each tab's own: its approvals, its chat's list, its desktop notices
            tab.panels.shutdown()
        super().closeEvent(event)
