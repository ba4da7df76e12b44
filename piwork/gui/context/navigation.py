"""Where the Context panel's rows lead: a message or tool result in the chat and the session tree, a
context file or the skills in the Resources panel, a tool schema in its Tools list; and "show original"
for an elided tool result.

The X-ray row knows its message's position in the request; the chat presenter knows which row shows that
message, and the session tree's context for the leaf gives the entry id (built in the executor: it may
read entry bodies from the file).
"""

from __future__ import annotations

import asyncio
import logging
import os
import stat
from datetime import datetime
from typing import Any

import shiboken6
from PySide6.QtCore import QObject, QUrl, Signal
from PySide6.QtGui import QDesktopServices

from piwork.core.context import ManifestEntry
from piwork.gui.chat.chat_panel import ChatPanel
from piwork.gui.context.feed import ContextFeed
from piwork.gui.context.xray_model import JumpTarget
from piwork.gui.main_window import MainWindow

log = logging.getLogger(__name__)


class ContextNavigator(QObject):
    landed = Signal(
        str, object
    )  # "chat" | "tree" | "resources" | "tools", what was selected (key, id, path, name)
    missed = Signal(str)  # why a jump found nothing

    def __init__(
        self,
        window: MainWindow,
        feed: ContextFeed,
        parent: QObject | None = None,
        *,
        chat: ChatPanel | None = None,
    ) -> None:
        super().__init__(parent or window)
        self.window = window
        self.chat = chat or window.chat  # the tab's chat
        self.feed = feed
        self._tasks: set[asyncio.Task[Any]] = set()

    def jump(self, target: JumpTarget) -> None:
        if target.kind == "resource":
            self._to_resource(target.path or "")
        elif target.kind == "message" and target.message_index is not None:
            self._to_message(target.message_index, expand=False)
        elif target.kind == "tool":
            self._to_tool(target.path or "")
        else:
            self.missed.emit("That part of the request has no place to show")

    def open_manifest_entry(self, entry: ManifestEntry, project: str | None) -> None:
        """A context file: its row in Resources; any other layer's file: the desktop's viewer for it, when it
        is a plain file inside ``project`` (the path comes from the session file: it may name anything)."""
        if entry.layer == 1:
            self._to_resource(entry.path)
            return
        task = asyncio.ensure_future(self._open_file(entry.path, project))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _open_file(self, path: str, project: str | None) -> None:
        found, problem = await asyncio.to_thread(openable_project_file, path, project)
        if not shiboken6.isValid(self):
            return
        if found is None:
            self.missed.emit(problem)
            return
        if QDesktopServices.openUrl(QUrl.fromLocalFile(found)):
            self.landed.emit("file", found)
        else:
            self.missed.emit(f"No application opened {found}")

    def show_original(self, tool_call_id: str) -> None:
        """Open the original (unelided) tool result: the transcript keeps it in full."""
        for index, message in enumerate(self.feed.messages):
            if message.get("role") == "toolResult" and message.get("toolCallId") == tool_call_id:
                self._to_message(index, expand=True)
                return
        self.missed.emit(f"The tool result {tool_call_id} is no longer in this branch's context")

    def _to_resource(self, path: str) -> None:
        dock = self.window.docks["resources"]
        dock.show()
        dock.raise_()
        panel = self.window.resource_panel
        found = panel.select_path("", "skill") if path == "skills" else panel.select_path(path)
        if found:
            self.landed.emit("resources", path)
        else:
            self.missed.emit(f"{path} is not listed in the Resources panel")

    def _to_tool(self, name: str) -> None:
        dock = self.window.docks["resources"]
        dock.show()
        dock.raise_()
        if self.window.resource_panel.select_tool(name):
            self.landed.emit("tools", name)
        else:
            self.missed.emit(f"The tool {name} is not listed in the Resources panel")

    def _to_message(self, index: int, expand: bool) -> None:
        messages = self.feed.messages
        if not 0 <= index < len(messages):
            self.missed.emit("That message is no longer in the context")
            return
        message = messages[index]
        key = self.chat.presenter.row_key_for_message(message)
        if key is not None and self.chat.view.reveal_row_key(key, expand=expand):
            self.landed.emit("chat", key)
        task = asyncio.ensure_future(self._select_in_tree(message))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _select_in_tree(self, message: dict[str, Any]) -> None:
        session = self.feed.session
        if session is None:
            return
        loop = asyncio.get_running_loop()
        try:
            entry_id = await loop.run_in_executor(None, entry_of_message, session.tree, message)
        except Exception as err:  # a damaged file: the chat jump already happened
            log.warning("session tree entry could not be found: %s", err)
            return
        if shiboken6.isValid(self) and entry_id and self.window.tree_panel.select_entry(entry_id):
            self.landed.emit("tree", entry_id)

    def shutdown(self) -> None:
        for task in list(self._tasks):
            task.cancel()


# Files a desktop opener would run rather than show.
_LAUNCHERS = (".desktop", ".appimage", ".exe", ".bat", ".cmd", ".com", ".msi", ".jar", ".command", ".app")


def openable_project_file(path: str, project: str | None) -> tuple[str | None, str]:
    """``path`` (absolute, or relative to ``project``) resolved, when it is a regular, non-executable file
    inside ``project``; else None and why not. Stats the file: run it in a worker."""
    if not path:
        return None, "That layer has no file to open"
    if not project:
        return None, f"{path} is not opened: no project folder to check it against"
    if "://" in path or path.lower().startswith(("file:", "data:", "javascript:")):
        return None, f"{path} is not opened: it is not a file path"
    root = os.path.realpath(project)
    resolved = os.path.realpath(os.path.join(root, path))
    if os.path.commonpath([root, resolved]) != root:
        return None, f"{path} is not opened: it is outside the project folder"
    try:
        info = os.stat(resolved)
    except OSError as err:
        return None, f"{path} has no file to open ({err.strerror or err})"
    if not stat.S_ISREG(info.st_mode):
        return None, f"{path} is not opened: it is not a regular file"
    if info.st_mode & 0o111 or resolved.lower().endswith(_LAUNCHERS):
        return None, f"{path} is not opened: it is a program, which opening would run"
    return resolved, ""


# Messages the session builds from an entry of another type (the task bundle, summaries): role → type.
_BUILT_FROM = {
    "custom": "custom_message",
    "branchSummary": "branch_summary",
    "compactionSummary": "compaction",
}


def _epoch_ms(stamp: Any) -> int | None:
    try:
        return round(datetime.fromisoformat(str(stamp).replace("Z", "+00:00")).timestamp() * 1000)
    except ValueError:
        return None


def entry_of_message(tree: Any, message: dict[str, Any]) -> str | None:
    """The id of the entry on the current branch that recorded ``message``, newest first (role and
    timestamp match; a tool result also by its call id; a custom or summary message: the entry it was
    built from, by its timestamp). Reads entry bodies, so run it in an executor."""
    role, stamp, call_id = message.get("role"), message.get("timestamp"), message.get("toolCallId")
    built_from = _BUILT_FROM.get(str(role))
    for record in reversed(tree.path()):
        if built_from is not None and record.type == built_from:
            body = tree.body(record)
            if isinstance(body, dict) and _epoch_ms(body.get("timestamp")) == stamp:
                return str(record.id)
            continue
        if record.type != "message":
            continue
        body = tree.body(record)
        recorded = body.get("message") if isinstance(body, dict) else None
        if not isinstance(recorded, dict) or recorded.get("role") != role:
            continue
        if role == "toolResult" and recorded.get("toolCallId") == call_id:
            return str(record.id)
        if role != "toolResult" and recorded.get("timestamp") == stamp:
            return str(record.id)
    return None
