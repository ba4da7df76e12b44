"""The composer's window commands beyond compact/tree/name/new: model, thinking, session, fork, clone,
copy, export, import, reload, hotkeys, resume, search, trust, settings, quit.

Each takes the command's argument text; the ones that need a choice and got none open the dialog or
picker a user would reach from the menus. File work (export, import) runs off the GUI thread.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtWidgets import QApplication, QFileDialog, QInputDialog

from piwork.core.errors import PiworkError
from piwork.core.export import export_branch_jsonl, export_html, import_session
from piwork.core.llm import THINKING_LEVELS
from piwork.core.messages import message_text
from piwork.core.session import clone_session, default_session_dir, fork_session
from piwork.core.tools import list_session_logs

if TYPE_CHECKING:
    from piwork.gui.session_controller import SessionController

HTML_FILTER = "HTML page, every branch (*.html)"
JSONL_FILTER = "Session file, active branch only (*.jsonl)"
LOGS_LISTED = 20


class WindowCommands:
    def __init__(self, controller: SessionController) -> None:
        self.ctl = controller
        self.handlers: dict[str, Callable[[str], object]] = {
            "model": self.model,
            "thinking": self.thinking,
            "session": self.session_info,
            "fork": self.fork,
            "clone": self.clone,
            "copy": self.copy_last_reply,
            "export": self.export,
            "import": self.import_file,
            "reload": lambda _a: self.ctl.reload(),
            "hotkeys": lambda _a: self.ctl.window.show_shortcuts(),
            "resume": lambda _a: self.ctl.show_sessions_browser(),
            "search": self.search,
            "trust": lambda _a: self.ctl.show_trust(),
            "settings": lambda _a: self.ctl.show_settings(),
            "quit": lambda _a: self.ctl.window.close(),
            "logs": lambda _a: self.ctl.spawn(self.logs()),
        }

    def run(self, name: str, args: str) -> bool:
        handler = self.handlers.get(name)
        if handler is None:
            return False
        handler(args)
        return True

    async def logs(self) -> None:
        """/logs: the session's full-output logs (newest last, read in a worker), and the log viewer."""
        session = self.ctl.session
        folder = session.log_dir if session is not None else None
        found = await asyncio.to_thread(list_session_logs, folder) if folder is not None else []
        if not found:
            self._notice(
                "/logs",
                "No full-output logs yet: a command whose output was cut keeps its whole output in one.",
            )
            return
        lines = [f"{len(found)} full-output log{'s' if len(found) != 1 else ''} in {folder}:"]
        for info in found[-LOGS_LISTED:]:
            command = info.metadata.get("command")
            what = f" — {' '.join(command.split())[:80]}" if isinstance(command, str) and command else ""
            lines.append(f"- {info.path.name} ({info.size:,} bytes){what}")
        if len(found) > LOGS_LISTED:
            lines.insert(1, f"(the last {LOGS_LISTED})")
        self._notice("/logs", "\n".join(lines))
        self.ctl.window.open_log(str(found[-1].path))

    def _notice(self, title: str, text: str, error: bool = False) -> None:
        self.ctl.chat.presenter.add_notice(title, text, error=error)

    # ---- model and thinking ------------------------------------------------------------------
    def model(self, args: str) -> None:
        wanted = args.strip()
        picker = self.ctl.chat.footer.model_picker
        if not wanted:
            picker.showPopup()
            return
        provider, _, model_id = wanted.rpartition("/")
        matches = [
            m for m in self.ctl.models.models if m.id == model_id and (not provider or m.provider == provider)
        ] or [m for m in self.ctl.models.models if wanted.lower() in f"{m.provider}/{m.id}".lower()]
        if len(matches) != 1:
            found = ", ".join(f"{m.provider}/{m.id}" for m in matches[:8])
            self._notice(
                "Model not changed",
                f"“{wanted}” names {len(matches)} models{': ' + found if found else ''}. "
                "Give provider/model, or use the picker (Ctrl+M).",
                error=True,
            )
            return
        self.ctl.pick_model(matches[0].provider, matches[0].id)

    def thinking(self, args: str) -> None:
        level = args.strip().lower()
        if not level:
            self.ctl.chat.footer.thinking_picker.showPopup()
            return
        if level not in THINKING_LEVELS:
            self._notice("Thinking level not changed", f"Levels: {', '.join(THINKING_LEVELS)}.", error=True)
            return
        self.ctl.pick_thinking(level)

    # ---- this session ------------------------------------------------------------------------
    def session_info(self, _args: str) -> None:
        runtime, session = self.ctl.runtime, self.ctl.session
        if runtime is None or session is None:
            return
        stats = session.session_stats()
        store = runtime.store
        tokens = stats.tokens
        lines = [
            f"File: {store.path if store.path is not None and store.flushed else '(not saved yet)'}",
            f"Id: {store.session_id}",
            f"Name: {session.tree.name or '—'}",
            f"Entries: {len(session.tree)} · on the active branch: {len(session.tree.path())}",
            f"Tokens: {int(tokens.get('input', 0))} in · {int(tokens.get('output', 0))} out · "
            f"{int(tokens.get('cacheRead', 0))} cache read · {int(tokens.get('cacheWrite', 0))} cache write",
            f"Cost: ${stats.cost.get('total', 0.0):.4f}",
        ]
        self._notice("Session", "\n".join(lines))

    def copy_last_reply(self, _args: str) -> None:
        session = self.ctl.session
        replies = [m for m in (session.messages if session else []) if m.get("role") == "assistant"]
        text = next((t for t in (message_text(m) for m in reversed(replies)) if t.strip()), "")
        if not text:
            self._notice("Nothing copied", "There is no reply with text yet.", error=True)
            return
        QApplication.clipboard().setText(text)
        self.ctl.window.status.showMessage("Last reply copied to the clipboard", 5000)

    def clone(self, _args: str) -> None:
        runtime = self.ctl.runtime
        if runtime is None:
            return
        try:
            created = clone_session(runtime.store)
        except PiworkError as err:
            self._notice("Not cloned", str(err), error=True)
            return
        self.ctl.open_branched(created, "")

    def fork(self, _args: str) -> None:
        runtime, session = self.ctl.runtime, self.ctl.session
        if runtime is None or session is None:
            return
        tree = session.tree
        choices: list[tuple[str, str]] = []
        for record in reversed(tree.path()):
            body = tree.body(record) if record.type == "message" and record.role == "user" else None
            message = body.get("message") if isinstance(body, dict) else None
            if isinstance(message, dict) and isinstance(record.id, str):
                text = " ".join(message_text(message, " ").split())
                choices.append((record.id, text if len(text) < 90 else text[:89] + "…"))
        if not choices:
            self._notice(
                "Nothing to fork from", "There is no message of yours on this branch yet.", error=True
            )
            return
        labels = [f"{n + 1}. {text}" for n, (_id, text) in enumerate(choices)]
        picked, ok = QInputDialog.getItem(
            self.ctl.window, "Fork", "Start a new session just before this message:", labels, 0, False
        )
        if not ok:
            return
        entry_id = choices[labels.index(picked)][0]
        try:
            result = fork_session(runtime.store, entry_id)
        except PiworkError as err:
            self._notice("Not forked", str(err), error=True)
            return
        self.ctl.open_branched(result.session, result.editor_text)

    # ---- files -------------------------------------------------------------------------------
    def export(self, args: str) -> None:
        runtime = self.ctl.runtime
        source = runtime.store.path if runtime is not None and runtime.store.flushed else None
        if source is None or not Path(source).is_file():
            self._notice("Nothing to export yet", "The session is saved after the first reply.", error=True)
            return
        target = args.strip()
        if not target:
            stem = source.name[: -len(".jsonl")] if source.name.endswith(".jsonl") else source.name
            target, chosen = QFileDialog.getSaveFileName(
                self.ctl.window,
                "Export Session",
                str(Path.home() / f"{stem}.html"),
                f"{HTML_FILTER};;{JSONL_FILTER}",
            )
            if not target:
                return
            if chosen == JSONL_FILTER and not target.endswith(".jsonl"):
                target += ".jsonl"
        self.ctl.spawn(self.export_to(Path(source), Path(target).expanduser()))

    async def export_to(self, source: Path, target: Path) -> Path | None:
        session = self.ctl.session
        try:
            if target.suffix == ".jsonl":
                leaf = str(session.tree.leaf_id) if session is not None and session.tree.leaf_id else None
                written = await asyncio.to_thread(export_branch_jsonl, source, target, leaf)
                what = "The active branch was saved as a new session file"
            else:
                prompt = session.system_prompt() if session is not None else None
                tools = [{"name": n} for n in session.tool_names()] if session is not None else []
                written = await asyncio.to_thread(
                    lambda: export_html(source, target, system_prompt=prompt, tools=tools)
                )
                what = "The whole session was saved as one HTML page (it needs no network to view)"
        except (PiworkError, OSError) as err:
            self._notice("Export failed", str(err), error=True)
            return None
        self._notice("Exported", f"{what}:\n{written}")
        return written

    def import_file(self, args: str) -> None:
        source = args.strip()
        if not source:
            source, _filter = QFileDialog.getOpenFileName(
                self.ctl.window, "Import Session", str(Path.home()), "Sessions (*.jsonl);;All files (*)"
            )
            if not source:
                return
        self.ctl.spawn(self.import_from(Path(source).expanduser()))

    async def import_from(self, source: Path) -> Path | None:
        runtime = self.ctl.runtime
        store = runtime.store if runtime is not None else None
        folder = store.session_dir if store is not None and store.session_dir is not None else None
        folder = folder or default_session_dir(self.ctl.cwd, self.ctl.agent_dir)
        try:
            copy = await asyncio.to_thread(import_session, source, folder)
        except (PiworkError, OSError) as err:
            self._notice("Import failed", str(err), error=True)
            return None
        await self.ctl.open_session(str(copy))
        self._notice("Imported", f"A copy of {source} is now open (the original is unchanged):\n{copy}")
        return copy

    def search(self, args: str) -> None:
        dialog = self.ctl.show_search()
        if args.strip():
            dialog.set_query(args.strip())
