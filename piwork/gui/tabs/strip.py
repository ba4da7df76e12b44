"""The window's central area: a tab bar over a stack of chats, one per session. The bar hides while one
tab is open (the window then looks as it always did); each tab shows its session's title, its state as a
word and a dot of colour (see ``tab_state``), and the user's label and colour (see ``labels``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QPoint, Qt, Signal
from PySide6.QtGui import QColor, QIcon, QPainter, QPixmap
from PySide6.QtWidgets import QStackedWidget, QTabBar, QVBoxLayout, QWidget

from piwork.gui.tabs.tab_state import TabState

if TYPE_CHECKING:
    from piwork.gui.tabs.chat_tab import ChatTab
    from piwork.gui.theme import Theme

STATE_ACCENTS = {  # the theme's accent each state is drawn with
    TabState.RUNNING: "running",
    TabState.WAITING: "badge",
    TabState.FAILED: "fail",
    TabState.DONE: "ok",
}
TITLE_CHARS = 24  # a tab's title is cut to this many characters (the tooltip has it all)


def dot_icon(colour: QColor | None, ring: QColor | None = None, size: int = 12) -> QIcon:
    """A filled dot (the user's colour) inside a ring (the state's colour); empty when neither is set."""
    pixmap = QPixmap(size, size)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    if ring is not None:
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(ring)
        painter.drawEllipse(0, 0, size, size)
    if colour is not None:
        inset = 3 if ring is not None else 1
        painter.setBrush(colour)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.drawEllipse(inset, inset, size - 2 * inset, size - 2 * inset)
    painter.end()
    return QIcon(pixmap)


def tab_text(title: str, label: str, state: TabState) -> str:
    shown = label or title or "New session"
    if len(shown) > TITLE_CHARS:
        shown = shown[: TITLE_CHARS - 1] + "…"
    return f"{shown} · {state.short}" if state.short else shown


class TabStrip(QWidget):
    frontChanged = Signal(object)  # ChatTab now in front
    closeRequested = Signal(object)  # ChatTab whose close button was pressed
    menuRequested = Signal(object, QPoint)  # ChatTab, global position

    def __init__(self, theme: Theme, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("sessionTabs")
        self.theme = theme
        self.bar = QTabBar(self)
        self.bar.setObjectName("sessionTabBar")
        self.bar.setAutoHide(True)  # one tab: the window as it always was
        self.bar.setTabsClosable(True)
        self.bar.setMovable(True)
        self.bar.setExpanding(False)
        self.bar.setDocumentMode(True)
        self.bar.setElideMode(Qt.TextElideMode.ElideNone)  # cut in ``tab_text``: the state word stays
        self.bar.setUsesScrollButtons(True)
        self.bar.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.stack = QStackedWidget(self)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.bar)
        layout.addWidget(self.stack, 1)
        self.tabs: list[ChatTab] = []
        self._labels: dict[int, tuple[str, QColor | None]] = {}  # id(tab) → (label, colour)
        self.bar.currentChanged.connect(self._on_current)
        self.bar.tabMoved.connect(self._on_moved)
        self.bar.tabCloseRequested.connect(lambda index: self.closeRequested.emit(self.tabs[index]))
        self.bar.customContextMenuRequested.connect(self._on_menu)

    # ---- tabs --------------------------------------------------------------------------------

    @property
    def front(self) -> ChatTab | None:
        index = self.bar.currentIndex()
        return self.tabs[index] if 0 <= index < len(self.tabs) else None

    def add(self, tab: ChatTab, *, front: bool = True) -> None:
        self.stack.addWidget(tab.chat)
        self.tabs.append(tab)
        self.bar.blockSignals(True)  # the tab is told it is in front below, once it is listed
        self.bar.addTab("")
        self.bar.blockSignals(False)
        tab.titleChanged.connect(lambda _title, t=tab: self.refresh(t))
        tab.status.changed.connect(lambda _state, t=tab: self.refresh(t))
        self.refresh(tab)
        if front or len(self.tabs) == 1:
            self.show_tab(tab)

    def remove(self, tab: ChatTab) -> None:
        if tab not in self.tabs:
            return
        index = self.tabs.index(tab)
        self.tabs.pop(index)
        self._labels.pop(id(tab), None)
        self.stack.removeWidget(tab.chat)
        self.bar.removeTab(index)  # the next tab comes to the front (``_on_current``)

    def show_tab(self, tab: ChatTab) -> None:
        index = self.tabs.index(tab)
        if self.bar.currentIndex() == index:
            self.stack.setCurrentWidget(tab.chat)
            self.frontChanged.emit(tab)
        else:
            self.bar.setCurrentIndex(index)

    def set_label(self, tab: ChatTab, label: str, colour: QColor | None) -> None:
        self._labels[id(tab)] = (label, colour)
        self.refresh(tab)

    def label_of(self, tab: ChatTab) -> tuple[str, QColor | None]:
        return self._labels.get(id(tab), ("", None))

    def set_theme(self, theme: Theme) -> None:
        self.theme = theme
        for tab in self.tabs:
            tab.chat.set_theme(theme)
            self.refresh(tab)

    def refresh(self, tab: ChatTab) -> None:
        if tab not in self.tabs:
            return
        index = self.tabs.index(tab)
        label, colour = self.label_of(tab)
        state = tab.status.state
        accent = STATE_ACCENTS.get(state)
        ring = self.theme.accent(accent) if accent else None
        self.bar.setTabText(index, tab_text(tab.title, label, state))
        self.bar.setTabIcon(index, dot_icon(colour, ring) if colour or ring else QIcon())
        tip = tab.title or "New session"
        if label:
            tip = f"{label} — {tip}"
        if tab.project:
            tip += f"\n{tab.project}"
        self.bar.setTabToolTip(index, f"{tip} ({state.value})" if state.value else tip)
        self.bar.setTabData(index, state.name)

    # ---- the bar's signals -------------------------------------------------------------------

    def _on_current(self, index: int) -> None:
        if 0 <= index < len(self.tabs):
            tab = self.tabs[index]
            self.stack.setCurrentWidget(tab.chat)
            self.frontChanged.emit(tab)

    def _on_moved(self, source: int, target: int) -> None:
        self.tabs.insert(target, self.tabs.pop(source))

    def _on_menu(self, point: QPoint) -> None:
        index = self.bar.tabAt(point)
        if 0 <= index < len(self.tabs):
            self.menuRequested.emit(self.tabs[index], self.bar.mapToGlobal(point))
