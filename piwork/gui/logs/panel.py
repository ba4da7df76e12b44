"""LogViewerPanel: every cut tool output of the session, what the model saw, and the full output.

Usage from the main window::

    panel = LogViewerPanel()
    panel.set_messages(session_messages)      # AgentMessage dicts of the session (any order of roles)
    panel.add_message(message)                # live: each new toolResult / bashExecution message
    panel.set_log_dir(log_dir)                # also list the session's log folder (read in a worker)
    panel.open_log(path)                      # any log file (e.g. a spill file named in the chat)
    panel.send_to_chat.connect(composer.insert_text)
    panel.reset()                             # another session opened

The left list shows the truncated results (newest last) with the command or path and what was cut;
the right side shows the model's text and, lazily, the full output file (see FullOutputView).
"""

from __future__ import annotations

import asyncio
import html
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QFontDatabase, QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QLabel,
    QListView,
    QPlainTextEdit,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from piwork.core.agent import AgentEvent, MessageEnd, TreeNavigated
from piwork.core.tools import LogInfo, list_session_logs
from piwork.gui.background import BackgroundTasks
from piwork.gui.flat_models import FlatListModel
from piwork.gui.inert_text import plain_label, plain_tip
from piwork.gui.logs.full_output_view import FullOutputView
from piwork.gui.logs.truncated_results import TruncatedOutput, collect_truncated_outputs, outputs_from_logs

if TYPE_CHECKING:
    from piwork.core.workflows import AgentRuntime

AnyIndex = QModelIndex | QPersistentModelIndex
FOLLOWED_ROLES = frozenset({"assistant", "toolResult", "bashExecution"})


class TruncatedOutputsModel(FlatListModel):
    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.items: list[TruncatedOutput] = []

    def shown_rows(self) -> int:
        return len(self.items)

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not self.is_shown(index):
            return None
        item = self.items[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            title = item.title if len(item.title) <= 80 else item.title[:79] + "…"
            return f"{item.tool_name}: {title}\n{item.cut_summary()}"
        if role == Qt.ItemDataRole.ToolTipRole:
            return plain_tip(f"{item.title}\n{item.full_output_path or 'no full output file'}")
        return None

    def replace_all(self, items: list[TruncatedOutput]) -> None:
        with self.replacing_rows():
            self.items = items

    def append(self, items: list[TruncatedOutput]) -> None:
        with self.appending_rows(len(items)):
            self.items.extend(items)


class LogViewerPanel(QWidget):
    send_to_chat = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._calls: dict[str, Mapping[str, Any]] = {}
        self._messages: list[Mapping[str, Any]] = []
        self._log_dir: Path | None = None
        self._folder_logs: list[LogInfo] = []
        self._listing = BackgroundTasks()
        # the open session, once attached
        self._unsubscribe: Callable[[], None] | None = None
        self._session_messages: Callable[[], list[dict[str, Any]]] = list
        self._session_log_dir: Path | None = None
        # Messages given while the panel is out of view are listed once it is shown: a long session's
        # branch is tens of thousands of messages to look through.
        self._unlisted = False
        self.outputs = TruncatedOutputsModel(self)
        self.list_view = QListView()
        self.list_view.setModel(self.outputs)
        self.list_view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.list_view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.list_view.setWordWrap(True)
        self.list_view.selectionModel().currentChanged.connect(self._on_current_changed)
        self.list_view.setAccessibleName("Cut tool outputs")
        self.list_view.setAccessibleDescription(
            "Tool results the model saw cut short; pick one to inspect it."
        )

        self.title_label = QLabel("Select a cut output to inspect it.")
        self.title_label.setWordWrap(True)
        self.title_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.cut_label = plain_label()
        self.cut_label.setWordWrap(True)
        self.cut_label.hide()  # shown with a cut output's summary; no empty line above the tabs otherwise
        self.model_text = QPlainTextEdit(readOnly=True)
        self.model_text.setAccessibleName("What the model saw")
        self.model_text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.full_output = FullOutputView()
        self.full_output.send_to_chat.connect(self.send_to_chat)
        self.tabs = QTabWidget()
        self.tabs.addTab(self.full_output, "Full output")
        self.tabs.addTab(self.model_text, "What the model saw")

        details = QWidget()
        details_layout = QVBoxLayout(details)
        # Tight, so that the full output's button row fits in a short bottom dock without scrolling.
        details_layout.setContentsMargins(4, 0, 0, 0)
        details_layout.setSpacing(2)
        details_layout.addWidget(self.title_label)
        details_layout.addWidget(self.cut_label)
        details_layout.addWidget(self.tabs, 1)
        splitter = QSplitter()
        splitter.addWidget(self.list_view)
        splitter.addWidget(details)
        splitter.setStretchFactor(1, 3)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(splitter)

    def reset(self) -> None:
        """Forget everything shown: the list, the details and the open file (a new session opened)."""
        self._calls.clear()
        self._messages = []
        self._unlisted = False
        self._log_dir = None
        self._folder_logs = []
        self._listing.cancel_all()
        self.outputs.replace_all([])
        self.title_label.setText("Select a cut output to inspect it.")
        self.cut_label.clear()
        self.cut_label.hide()
        self.model_text.clear()
        self.full_output.reset()
        self.tabs.setCurrentWidget(self.full_output)

    def set_messages(self, messages: Iterable[Mapping[str, Any]]) -> None:
        """Show the cut outputs among `messages` (replaces the list; out of view, once shown)."""
        self._messages = list(messages)
        if not self.isVisible():
            self._unlisted = True
            return
        self._unlisted = False
        self._remember_calls(self._messages)
        self._refresh()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self._unlisted:
            self.set_messages(self._messages)

    def set_log_dir(self, log_dir: Path | None) -> asyncio.Task[None] | None:
        """Also list full-output logs of this folder that no message refers to (e.g. of a run stopped
        before its result was saved). The folder is read in a worker; the list grows when it answers."""
        self._listing.cancel_all()
        self._log_dir = log_dir
        self._folder_logs = []
        if log_dir is None:
            if not self._unlisted:
                self._refresh()
            return None
        return self._listing.spawn(self._list_folder(log_dir))

    async def _list_folder(self, log_dir: Path) -> None:
        logs = await asyncio.to_thread(list_session_logs, log_dir)
        if log_dir == self._log_dir:
            self._folder_logs = logs
            if not self._unlisted:
                self._refresh()

    def _refresh(self) -> None:
        items = collect_truncated_outputs(self._with_calls(self._messages))
        if self._folder_logs:
            known = {item.full_output_path for item in items if item.full_output_path}
            items.extend(outputs_from_logs(self._folder_logs, known))
        self.outputs.replace_all(items)

    def add_message(self, message: Mapping[str, Any]) -> None:
        """Feed one new session message; cut outputs are appended to the list."""
        self._messages.append(message)
        if self._unlisted:
            return  # listed with the rest once the panel is shown
        self._remember_calls([message])
        if message.get("role") in ("toolResult", "bashExecution"):
            new = collect_truncated_outputs(self._with_calls([message]))
            listed = {item.full_output_path for item in self.outputs.items if item.full_output_path}
            if any(item.full_output_path in listed for item in new):
                self._refresh()  # the log was listed from the folder already: now it has its message
            else:
                self.outputs.append(new)

    def _remember_calls(self, messages: list[Mapping[str, Any]]) -> None:
        for message in messages:
            if message.get("role") == "assistant" and isinstance(message.get("content"), list):
                for block in message["content"]:
                    if isinstance(block, dict) and block.get("type") == "toolCall":
                        self._calls[str(block.get("id"))] = block

    def _with_calls(self, messages: list[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
        """Prefix a synthetic assistant message so tool calls seen earlier name their results."""
        calls = {"role": "assistant", "content": list(self._calls.values())}
        return [calls, *messages]

    def select_output(self, row: int) -> None:
        self.list_view.setCurrentIndex(self.outputs.index(row))

    def open_log(self, path: str) -> bool:
        """Open a log file in the full output tab (selecting its cut output when it is listed)."""
        for row, item in enumerate(self.outputs.items):
            if item.full_output_path == path:
                if self.list_view.currentIndex().row() != row:
                    self.select_output(row)
                self.tabs.setCurrentWidget(self.full_output)
                return self.full_output.path == path and not self.full_output.error_text
        self.list_view.clearSelection()
        self.title_label.setText(f"<code>{html.escape(path, quote=False)}</code>")
        self.cut_label.clear()
        self.cut_label.hide()
        self.tabs.setCurrentWidget(self.full_output)
        return self.full_output.open_file(path)

    def _on_current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if not current.isValid():
            return
        item = self.outputs.items[current.row()]
        self.title_label.setText(
            f"<b>{html.escape(item.tool_name, quote=False)}</b> — {html.escape(item.title, quote=False)}"
        )
        status = " (failed)" if item.is_error else ""
        self.cut_label.setText(item.cut_summary() + status)
        self.cut_label.show()
        self.model_text.setPlainText(item.model_text)
        if item.full_output_path:
            self.full_output.open_file(item.full_output_path)
            self.tabs.setCurrentWidget(self.full_output)
        else:
            self.full_output.close_file()
            self.tabs.setCurrentWidget(self.model_text)

    # ---- following the open session ----------------------------------------------------------------

    def attach(self, runtime: AgentRuntime) -> None:
        """Show the cut outputs of the open session's branch and follow it: each new message, and the
        branch another move in the tree shows."""
        self.detach()
        self.reset()  # nothing of the previous session's logs stays on show
        session = runtime.session
        self._session_messages = lambda: session.messages
        self.set_messages(session.messages)
        self.set_log_dir(session.log_dir)
        self._session_log_dir = session.log_dir
        self._unsubscribe = session.subscribe(self._follow)

    def detach(self) -> None:
        unsubscribe, self._unsubscribe = self._unsubscribe, None
        if unsubscribe is not None:
            unsubscribe()

    def _follow(self, event: AgentEvent) -> None:
        # the assistant message too: its tool calls name the cut outputs of their results
        if isinstance(event, MessageEnd) and event.message.get("role") in FOLLOWED_ROLES:
            self.add_message(event.message)
        elif isinstance(event, TreeNavigated):  # another branch: its messages are the session's now
            self.set_messages(self._session_messages())
            self.set_log_dir(self._session_log_dir)

    def shutdown(self) -> None:
        """Stop background readers (call before the window closes)."""
        self.detach()
        self._listing.cancel_all()
        self.full_output.close_file()
