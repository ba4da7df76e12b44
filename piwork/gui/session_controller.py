"""Connects the window to the engine: builds the AgentSession for a folder, hands it to the window's panels
and views, and forwards its events to them. It owns the session's lifecycle (open, reload, branch, close),
the tasks it starts and the model and key state; the rest lives in modules of their own, each given this
controller as a small declared host: the trust flow (``trust_flow``), the model pickers (``model_choice``),
the dialogs (``dialog_openers``), the tool set and system prompt (``tool_set``), the branch the chat shows
(``branch_view``), what the user sends (``prompt_sending``) and slash commands (``commands``, run with a
``CommandContext``).

One controller per tab (``piwork.gui.tabs``): it drives the tab's own chat (``tab.chat``, never the window's
chat in front) and keeps its session running in the background; the window-wide parts (menus, the docks'
panels, the status bar, the title) reach it and show its session only while its tab is in front
(``links``, ``set_front``). A controller made without a tab takes the window's first one.

All engine work runs as asyncio tasks on the qasync loop; the controller keeps a reference to every task it
starts, reports failures in the chat (engine errors) or through the notification path (anything else), and
cancels what is left on shutdown.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import os
from collections.abc import Callable, Coroutine, Mapping
from pathlib import Path
from typing import Any, Protocol

import shiboken6
from PySide6.QtCore import QCoreApplication, QObject, QTimer, Signal

from piwork.core.agent import (
    AgentEvent,
    AgentSession,
    AgentSettled,
    CompactionEnd,
    ModelChanged,
    NoModel,
    ThinkingLevelChanged,
)
from piwork.core.errors import PiworkError
from piwork.core.llm import CredentialStore, KeyRecord, Model, ModelRegistry, Tokenizers, is_loopback
from piwork.core.resources import TrustOption, TrustRequest
from piwork.core.session import Session, closed_in_worker, read_header
from piwork.core.workflows import AgentRuntime, RuntimeOptions, create_runtime
from piwork.gui.branch_view import BranchView
from piwork.gui.chat.conversation import (
    FIRST_TAIL,
    Conversation,
    adopt_preview,
    prepare_preview,
    prepare_session_conversation,
)
from piwork.gui.chat.reply_again import ReplyAgain
from piwork.gui.command_surface import CommandSurface
from piwork.gui.commands import BUILTIN, CommandContext, SlashCommand
from piwork.gui.context.context_commands import ContextCommands
from piwork.gui.context.edits import ContextEdits
from piwork.gui.context.feed import ContextFeed
from piwork.gui.context.navigation import ContextNavigator
from piwork.gui.context.preflight_flow import PreflightFlow
from piwork.gui.dialog_openers import DialogOpeners
from piwork.gui.key_status import KeyStatus
from piwork.gui.main_window import MainWindow
from piwork.gui.model_choice import ModelChoice
from piwork.gui.notifications import NOTIFIED, NotificationCenter, describe_exception, describe_view_failure
from piwork.gui.prompt_sending import PromptSending
from piwork.gui.recent_projects import remember_project
from piwork.gui.resources.prompt_parts import session_prompt_parts
from piwork.gui.search.landing import select_in_tree
from piwork.gui.session_file_watch import SessionFileWatch
from piwork.gui.session_owner import SessionOwnership
from piwork.gui.tabs.chat_tab import ChatTab
from piwork.gui.tabs.front_links import FrontLinks
from piwork.gui.tool_set import ToolSet
from piwork.gui.trust_flow import TrustFlow

log = logging.getLogger(__name__)


class TabHost(Protocol):
    """The window's tabs, as a controller asks them to open a session somewhere else."""

    def tab_with_file(self, session_file: str, besides: SessionController) -> AgentRuntime | None:
        """The session of the other tab (in any window) that has ``session_file`` open, brought to the
        front; None when no other tab has it."""

    async def open_in_new_tab(
        self, beside: SessionController, session_file: str | None, cwd: str, *, most_recent: bool = False
    ) -> AgentRuntime:
        """Open a session in a new tab of ``beside``'s window, in front."""


class SessionController(QObject):
    sessionOpened = Signal(object)  # AgentRuntime
    idle = Signal()  # no task of the controller is running any more

    def __init__(
        self,
        window: MainWindow,
        notifications: NotificationCenter,
        cwd: str,
        agent_dir: Path,
        *,
        approve: bool | None = None,
        env: Mapping[str, str] | None = None,
        credentials: CredentialStore | None = None,
        tab: ChatTab | None = None,
    ) -> None:
        super().__init__(window)
        self.window = window
        self.tab = tab or window.first_tab
        self.chat = self.tab.chat
        self.links = FrontLinks(front=window.front_tab is self.tab)
        self.tab_host: TabHost | None = None  # set when the window keeps several tabs
        self.notifications = notifications
        self._view_failures: set[tuple[str, str]] = set()  # (view, event type) already reported
        self.cwd = os.path.abspath(cwd)
        self.agent_dir = agent_dir
        self.env = dict(env if env is not None else os.environ)
        self.models = ModelRegistry(agent_dir)
        # What the window knows about keys: read from memory, asked of the keyring only in workers.
        self.keys = KeyStatus(
            credentials
            or CredentialStore(
                env=self.env,
                config_key=self.models.config_api_key,
                config_key_pending=self.models.config_api_key_pending,
                record=KeyRecord.of(agent_dir),  # the keys it stores and removes kept current there
            ),
            lambda: self.models.providers(),
            self,
        )
        self.tokenizers = Tokenizers(agent_dir, env=self.env)
        self.runtime: AgentRuntime | None = None
        self.tasks: set[asyncio.Task[Any]] = set()
        self._unsubscribe: Any = None
        self.trust = TrustFlow(self, window, approve)
        self._branch_notice: tuple[str, str] | None = None  # what the last fork/clone did, shown once open
        self._preview: Conversation | None = None  # the leaf's last messages shown while the session opens
        self.context_feed = ContextFeed(self.tokenizers, self)
        self.file_watch = SessionFileWatch(self)  # reads outside changes ahead, off the GUI thread
        # another program writing the open file: read-only, followed, forked or taken over
        self.ownership = SessionOwnership(self, self.chat.owner_banner, self.file_watch, self)
        self.tool_set = ToolSet(self, window, self.context_feed)
        self.branch_view = BranchView(self, window, self.tool_set, notifications)
        self.context_commands = ContextCommands(
            self,
            self.chat.presenter,
            self.chat.composer,
            window,
            prompter=self.trust.prompter,
            show_system_prompt=self.tool_set.show_system_prompt,
            show_preflight=lambda planned: self.preflight.show(planned),
        )
        self.context_navigator = ContextNavigator(window, self.context_feed, self, chat=self.chat)
        self.context_edits = ContextEdits(self, window.tree_panel, self.chat.view, self.chat.presenter)
        self.sending = PromptSending(self, window, self.context_commands)
        self.reply_again = ReplyAgain(self, self.chat.view, self.chat.presenter, self.chat.composer, self)
        self.preflight = PreflightFlow(
            self,
            window,
            self.context_feed,
            self.context_navigator,
            self.context_commands,
            self.tool_set.toggle_tool,
            self.trust.show,
        )
        self.model_choice = ModelChoice(self, window)
        self.dialogs = DialogOpeners(self, window, self.model_choice)
        # what a slash command's handler is given (never this controller as such)
        self.command_context = CommandContext(
            notices=self.chat.presenter,
            tasks=self,
            sessions=self,
            model_choice=self.model_choice,
            composer=self.chat.composer,
            window=CommandSurface(window, self.dialogs, self.trust.show, self.chat, self.show_title),
            context=self.context_commands,
        )
        self._wire()
        app = QCoreApplication.instance()
        if app is not None:  # the loop may stop before ``shutdown`` runs: long work in workers stops first
            app.aboutToQuit.connect(self._stop_workers)

    def _stop_workers(self) -> None:
        """The application quits: what workers compute for the views (the Context feed's figures, the
        chat's earlier rows) is not wanted any more, and the process must not wait for it."""
        self.context_feed.stop_workers()
        self.branch_view.cancel()

    @property
    def credentials(self) -> CredentialStore:
        return self.keys.credentials

    @credentials.setter
    def credentials(self, store: CredentialStore) -> None:
        self.keys.credentials = store

    @property
    def session(self) -> AgentSession | None:
        return self.runtime.session if self.runtime is not None else None

    @property
    def front(self) -> bool:
        """The tab is in front of its window: the window-wide parts show and act on its session."""
        return self.links.front

    def _wire(self) -> None:
        self.chat.commandSubmitted.connect(self.run_command)
        self.chat.presenter.assistantFinished.connect(lambda _m: self.refresh_status())
        self.chat.presenter.compactionFinished.connect(self.refresh_status)
        self.trust.prompter.asking.append(lambda _question: self.tab.status.set_trust_question(True))
        self._link_window()
        if self.front:
            self._point_rewind()

    def _link_window(self) -> None:
        """What the window's menus and docks ask of the session, heard while the tab is in front (in the
        order the parts were made: the tree's moves reach the branch shown before a fork opens)."""
        link, window = self.links.connect, self.window
        a, tree, dialogs = window.action_map, window.tree_panel, self.dialogs
        link(a["trust"].triggered, self.trust.show)
        link(tree.navigated, lambda _result: self.branch_view.show())
        link(tree.status_changed, self.branch_view.show_tree_status)
        self.context_edits.link_window(link)
        self.preflight.link_window(link)
        link(a["open_session"].triggered, dialogs.choose_session_file)
        link(a["open_folder"].triggered, dialogs.choose_project_folder)
        link(a["sessions_browser"].triggered, dialogs.show_sessions_browser)
        link(a["search_sessions"].triggered, dialogs.show_search)
        link(a["command_palette"].triggered, dialogs.show_palette)
        link(a["settings"].triggered, dialogs.show_settings)
        link(a["new_session"].triggered, lambda: self.spawn(self.open_session(None)))
        link(window.projectChosen, lambda folder: self.spawn(self.open_project(folder)))
        link(window.sessionFileChosen, lambda path: self.spawn(self.open_session(path)))
        link(a["export"].triggered, lambda: self.run_command(SlashCommand("export", "")))
        link(a["import_session"].triggered, lambda: self.run_command(SlashCommand("import", "")))
        link(a["compact"].triggered, lambda: self.run_command(SlashCommand("compact", "")))
        link(a["name_session"].triggered, lambda: self.run_command(SlashCommand("name", "")))
        link(a["reload_resources"].triggered, self.reload)
        link(tree.branch_made, self._remember_branch_notice)
        link(tree.session_created, self.open_branched)

    def set_front(self, front: bool) -> None:
        """The tab comes to the front of its window (the docks, status and title show its session) or goes
        behind another (its session goes on; the next tab's session replaces it in the docks)."""
        if front == self.front:
            return
        self.links.set_front(front)
        self.tab.status.set_front(front)
        if not front:
            if self.runtime is not None:
                self.window.panels.detach()
            return
        self._point_rewind()
        if self.runtime is not None:
            self.spawn(self._show_in_front(self.runtime))

    def move_to(self, window: MainWindow) -> None:
        """The tab moves to another top-level window, its session running on: every part that reached the
        old window's menus, docks, status bar and dialogs reaches the new one's (the tab comes to the front
        there through ``set_front``)."""
        self.set_front(False)
        self.links.clear()
        self.window = window
        self.setParent(window)
        self.trust.window = window
        self.trust.prompter.parent = window
        self.tool_set.window = window
        self.branch_view.window = window
        self.context_commands.parent = window
        self.context_navigator.window = window
        self.context_edits.tree_panel = window.tree_panel
        self.context_edits.setParent(window.tree_panel)
        self.preflight.window = window
        self.preflight.setParent(window)
        self.preflight.watch_docks()
        self.tool_set.watch_dock()
        self.model_choice.status = window.status
        self.dialogs.window = window
        surface = CommandSurface(window, self.dialogs, self.trust.show, self.chat, self.show_title)
        self.command_context = dataclasses.replace(self.command_context, window=surface)
        self._link_window()

    def _point_rewind(self) -> None:
        """The window's file rewind tells this tab's chat (in front) and waits for its branch shown."""
        rewind = self.window.rewind
        rewind.chat_shown = self.branch_shown  # a restore after a move tells it below the branch
        rewind.set_presenter(self.chat.presenter)

    async def _show_in_front(self, runtime: AgentRuntime) -> None:
        # one panel per event-loop turn, as on opening (a long session costs each of them milliseconds)
        for panel in self.window.panels:
            await asyncio.sleep(0)
            if not self.front or self.runtime is not runtime:
                return
            panel.attach(runtime)
        self.show_title(runtime.session.tree.name or None)
        self.tool_set.show_system_prompt()
        self.context_feed.replay()
        self.refresh_status()

    def show_title(self, name: str | None) -> None:
        """The session's name on its tab (else its first prompt), and in the window's title while in front."""
        self.tab.set_title(name or self._first_prompt())
        self.tab.set_project(self.cwd)
        if self.front:
            self.window.set_session_title(name, self.cwd)

    def _first_prompt(self) -> str:
        """The start of the session's first prompt, as the sessions browser names an unnamed session."""
        session = self.session
        for message in session.messages if session is not None else ():
            if message.get("role") != "user":
                continue
            content = message.get("content")
            parts = content if isinstance(content, list) else [{"type": "text", "text": content}]
            text = " ".join(
                str(part.get("text", ""))
                for part in parts
                if isinstance(part, dict) and part.get("type") == "text"
            )
            return " ".join(text.split())[:80]
        return ""

    # ---- tasks -------------------------------------------------------------------------------

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(coro)
        self.tasks.add(task)
        task.add_done_callback(self._task_done)
        return task

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        self.tasks.discard(task)
        if not shiboken6.isValid(self):  # the window closed while the task was finishing
            return
        if not task.cancelled():
            error = task.exception()
            if isinstance(error, NoModel):
                hint = (
                    "Add a local server or a provider key in Settings → Providers (Ctrl+,), "
                    "then pick a model below."
                )
                self.chat.presenter.add_notice("No model to answer", str(error), hint=hint, error=True)
            elif isinstance(error, PiworkError):
                self.chat.presenter.add_notice("Could not do that", str(error), error=True)
            elif error is not None:
                self.notifications.post(describe_exception(error))
        if not self.tasks:
            self.idle.emit()

    async def shutdown(self) -> None:
        session = self.session
        if session is not None and session.is_streaming:
            with contextlib.suppress(TimeoutError):  # a stuck tool must not keep the window from closing
                await asyncio.wait_for(session.abort(), timeout=5)
        self.keys.cancel()
        for task in list(self.tasks):
            task.cancel()
        if self.tasks:
            await asyncio.gather(*self.tasks, return_exceptions=True)
        # Quitting: the window is already gone; the last lines are written and fsynced in a worker
        # while the loop keeps turning, and the process ends only once they are on disk.
        await self._let_go()

    # ---- opening sessions --------------------------------------------------------------------

    async def open_session(
        self, session_file: str | None, *, reopen_current: bool = False, most_recent: bool = False
    ) -> AgentRuntime:
        """Build the runtime for ``session_file`` (None: a new session in the current folder, or with
        ``most_recent`` the folder's latest session at its leaf when it has one).
        ``reopen_current``: reopen whatever session is open once trust is settled, since a first message
        sent while a trust question waited gives the open session its file only then.
        With several tabs, a session open in another tab is brought to the front there (never opened
        twice), and opening while this tab's reply runs opens a new tab beside it (the reply goes on)."""
        if self.tab_host is not None and not reopen_current:
            if session_file and not self.is_open_file(session_file):
                other = self.tab_host.tab_with_file(session_file, self)
                if other is not None:
                    return other
            if self.session is not None and self.session.is_streaming:
                return await self.tab_host.open_in_new_tab(
                    self, session_file, self.cwd, most_recent=most_recent
                )
        if self.session is not None and self.session.is_streaming:
            await self.session.abort()
        # The keyring is asked in a worker (about providers not asked yet); the session opens without
        # waiting for it when its model does not depend on the answer, and says "checking" meanwhile.
        checking = self.keys.checking
        self.keys.refresh()
        if checking:
            self.model_choice.fill_pickers()
        if session_file:
            header = await asyncio.to_thread(read_header, Path(session_file)) or {}
            header_cwd = header.get("cwd")
            if isinstance(header_cwd, str) and os.path.isdir(header_cwd):
                self.cwd = os.path.abspath(header_cwd)
        try:
            trust = await self.trust.decide()
        finally:
            self.tab.status.set_trust_question(False)
        if reopen_current:
            if self.session is not None and self.session.is_streaming:  # sent while the question waited
                await self.session.wait_for_idle()
            session_file = self._current_session_file()
        options = RuntimeOptions(
            cwd=self.cwd,
            agent_dir=self.agent_dir,
            session_file=session_file,
            continue_recent=most_recent and not session_file,
            trust_override=trust.override,
            trust_reviewed=trust.baseline,
            ask_trust=self._ask_trust,
            credentials=self.credentials,
            keys_loaded_by_caller=True,  # by ``self.keys``, in a worker
            env=self.env,
            tokenizers=self.tokenizers,  # the governor counts with the model's tokenizer (loaded in a thread)
            # the file's totals (every entry read) are counted by the Context feed's worker once the chat shows
            count_stats_at_open=False,
            # the chat of a window opening its first session shows the leaf's last messages at once
            preview=self._show_preview if self.runtime is None else None,
            preview_messages=FIRST_TAIL,
        )
        if session_file and self.is_open_file(session_file):
            # Reopening (or reloading) the open file: let go of its writer lock first, or the new
            # runtime would find the file held and open it read-only.
            await self._let_go()
        try:
            runtime = await create_runtime(options)
        except BaseException:
            if self._preview is not None and self.runtime is None:  # not opened after all: not shown either
                self._preview = None
                self.chat.presenter.show_messages([])
            raise
        preview, self._preview = self._preview, None
        # The chat's rows of a session of thousands of messages take tens of milliseconds to build: in a
        # worker, so that what follows (the window showing the session) stays short on the GUI thread; of
        # a long branch only its last messages' (the earlier ones follow from a worker once it shows).
        # The session left behind is written out and fsynced in a worker, and its file let go, before
        # the new one shows (the window keeps running meanwhile).
        try:
            prepared = await asyncio.to_thread(_rows_of, runtime.session, preview)
            await self._let_go()
            # Each panel (the tree, resources, logs and context panels) takes the session in an event-loop
            # turn of its own, before the chat: a long session costs each of them milliseconds on the GUI
            # thread, and with the chat's layout and the window's paint in the same pass they held it over
            # 50 ms (the tree's outline is laid out in a worker, and shows after the chat).
            for panel in self.window.panels if self.front else ():
                await asyncio.sleep(0)
                panel.attach(runtime)
            self.tab.status.reset()
            for panel in self.tab.panels:  # the tab's own: its approvals, its chat's recent sessions...
                panel.attach(runtime)
        except BaseException:  # cancelled meanwhile: nor is the new file kept
            runtime.store.close()
            raise
        self.runtime = runtime
        remember_project(self.window.ui_state, self.cwd)  # File → Open Recent
        # a model change, the session's name, the governor's state...: written by a worker, in order
        runtime.store.write_appends_in_worker(asyncio.get_running_loop())
        self.trust.opened(runtime, trust.baseline)
        self._unsubscribe = runtime.session.subscribe(self._on_event)
        self.file_watch.watch(runtime.store)
        self.ownership.attach(runtime)
        self.tool_set.show_system_prompt()
        resources = runtime.resources
        self.chat.composer.set_extra_commands(
            [f"skill:{skill.name}" for skill in resources.skill_commands]
            + [prompt.name for prompt in resources.prompts]
        )
        self.branch_view.show(prepared)
        self.context_edits.note_edits_in_force()  # the tree may have marked the edits before the chat showed
        session = runtime.session
        self.preflight.session_opened()
        self.context_feed.attach(
            session,
            lambda: session_prompt_parts(session, runtime.resources),
            self.agent_dir / "piwork" / "telemetry",
        )
        for notice in runtime.notices:  # e.g. why the file opened read-only
            self.chat.presenter.add_notice("Session file", notice)
        for warning in runtime.file_warnings():  # a broken settings.json, models.json, trust.json...
            self.chat.presenter.add_notice("A file needs attention", warning)
        self.model_choice.fill_pickers()
        self.refresh_status()
        self.sessionOpened.emit(runtime)
        return runtime

    async def _show_preview(self, messages: list[dict[str, Any]]) -> None:
        """The leaf's last messages, read as soon as the session file is: shown in the chat while the rest
        of the session opens (the rows are kept once it has, when they are the same messages)."""
        preview = await asyncio.to_thread(prepare_preview, messages)
        if self.runtime is None:
            self.chat.presenter.show_messages(messages, preview)
            self._preview = preview

    async def _ask_trust(self, request: TrustRequest) -> TrustOption | None:
        """The engine's trust question; the tab says it waits for the user until it is answered."""
        try:
            return await self.trust.ask(request)
        finally:
            self.tab.status.set_trust_question(False)

    def reload(self) -> None:
        """Re-read resources (and trust) by reopening the current session file."""
        session = self.session
        if session is not None and session.is_streaming:
            self.chat.presenter.add_notice(
                "Not now", "Wait for the agent to finish (or stop it) first.", error=True
            )
            return
        self.spawn(self.open_session(self._current_session_file(), reopen_current=True))

    def _current_session_file(self) -> str | None:
        path = self.runtime.store.path if self.runtime and self.runtime.store.flushed else None
        return str(path) if path else None

    async def open_project(self, folder: str) -> AgentRuntime | None:
        """Switch the tab to another project folder: its trust is decided as at a first start, and it
        opens in its latest session (or a new one, per Session → Reopen Last Session at Start). While the
        tab's reply runs, the project opens in a new tab instead."""
        if not await asyncio.to_thread(os.path.isdir, folder):
            self.chat.presenter.add_notice(
                "Cannot open that project", f"{folder} is not a folder (any more)."
            )
            return None
        most_recent = self.window.reopens_last_session()
        if self.tab_host is not None and self.session is not None and self.session.is_streaming:
            return await self.tab_host.open_in_new_tab(
                self, None, os.path.abspath(folder), most_recent=most_recent
            )
        self.cwd = os.path.abspath(folder)
        return await self.open_session(None, most_recent=most_recent)

    async def branch_shown(self) -> None:
        """Once the chat shows the branch the session is on (after a move, its rows build in a worker)."""
        await self.branch_view.shown()

    def add_notice(self, title: str, text: str, error: bool = False) -> None:
        self.chat.presenter.add_notice(title, text, error=error)

    def _remember_branch_notice(self, title: str, text: str) -> None:
        self._branch_notice = (title, text)

    def open_branched(self, session: Any, editor_text: str, notice: tuple[str, str] | None = None) -> None:
        """Continue in a session made by a fork or clone (in the tree, /fork, /clone); it is on disk once
        it holds a reply. ``notice``: what to say once it is open (else what the tree said it made)."""
        notice, self._branch_notice = notice or self._branch_notice, None
        path = getattr(session, "path", None)
        close = getattr(session, "close", None)
        if callable(close):
            close()  # release its writer lock: the runtime reopens the file and must be able to write it
        opening = str(path) if path is not None and Path(path).is_file() else None

        async def open_and_tell() -> None:
            await self.open_session(opening)
            # in the same turn as the session shows, so nothing sees it open without its notice
            if notice is not None:
                self.chat.presenter.add_notice(*notice)
            if editor_text:
                self.chat.composer.set_text(editor_text)

        self.spawn(open_and_tell())

    async def open_at(self, path: str, entry_id: str | None) -> None:
        """Open ``path`` (unless it is the open session) and select ``entry_id`` in the tree."""
        if not self.is_open_file(path):
            await self.open_session(path)
        if entry_id is not None:
            # After the tree has followed what opening appended (it moves to the new leaf on a
            # zero-delay timer), so the selection stays on the entry.
            QTimer.singleShot(0, lambda: select_in_tree(self.window, entry_id))

    def is_open_file(self, session_file: str) -> bool:
        path = self.runtime.store.path if self.runtime is not None else None
        return path is not None and os.path.realpath(path) == os.path.realpath(session_file)

    def _detach(self) -> Session | None:
        """Unhook the open session from the window; returns its store, still to be closed."""
        self.branch_view.cancel()
        self.context_feed.detach()
        if self.front:
            self.window.panels.detach()
        self.tab.panels.detach()
        self.file_watch.watch(None)
        self.ownership.detach()
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        store = self.runtime.store if self.runtime is not None else None
        self.runtime = None
        return store

    def close_session_file(self) -> None:
        """Write what the open session still has queued, fsync it and let the file go, blocking: for
        the end of the process, once the window and its loop are gone."""
        runtime, self.runtime = self.runtime, None
        if runtime is not None:
            runtime.store.close()

    async def _let_go(self) -> None:
        """Unhook the open session and close its file, the disk waited on in a worker."""
        store = self._detach()
        if store is not None:
            await closed_in_worker(store)

    def _on_event(self, event: AgentEvent) -> None:
        """Each view takes the event on its own: one that fails says so, naming itself and the event, and
        the others (and the session) go on."""
        self._in_view("the chat", event, self.chat.presenter.handle)
        self._in_view("the tab", event, self.tab.status.handle)
        self._in_view("the Context panel", event, self.context_feed.handle)
        self._in_view("the window", event, self._follow_event)

    def _in_view(self, part: str, event: AgentEvent, handle: Callable[[AgentEvent], None]) -> None:
        try:
            handle(event)
        except Exception as exc:
            log.exception("%s failed on a %s event", part, event.type, extra={NOTIFIED: True})  # shown below
            if (part, event.type) not in self._view_failures:  # once each: a stream has thousands of deltas
                self._view_failures.add((part, event.type))
                self.notifications.post(describe_view_failure(part, f"a “{event.type}” event", exc))

    def _follow_event(self, event: AgentEvent) -> None:
        if isinstance(event, AgentSettled | ModelChanged | ThinkingLevelChanged | CompactionEnd):
            self.refresh_status()
        if isinstance(event, AgentSettled):  # a new session's file exists once it holds a reply
            self.file_watch.arm()
            if self.session is not None:  # a first prompt names an unnamed session's tab
                self.show_title(self.session.tree.name or None)
        if isinstance(event, ModelChanged):  # the token counter follows the model
            self.tool_set.show_system_prompt()

    # ---- status, models and keys --------------------------------------------------------------

    def refresh_status(self) -> None:
        session = self.session
        if session is None or self.runtime is None:
            return
        model = session.model
        if self.front:  # the status bar is the window's: it shows the tab in front
            status = self.window.status
            trust = self.runtime.resources.trust
            if trust is None:
                status.set_trust("unknown")
            elif trust.source == "no-project-resources":
                status.set_trust("no-project-resources")
            else:
                status.set_trust("trusted" if trust.trusted else "untrusted")
        self.context_feed.schedule()  # meter and billed figures: computed off the GUI thread
        self.chat.footer.thinking_picker.select(session.thinking_level)
        source = self.runtime.resources.settings.default_thinking_source().describe()
        self.chat.footer.thinking_picker.explain_model(model, source)
        self.chat.set_session_state(session.read_only_reason, model is not None)
        if model is not None:
            self.chat.footer.model_picker.select((model.provider, model.id))

    def model_usable(self, model: Model | None) -> bool | None:
        """A key is available, or the server is on this machine (local servers need none); None while
        the keyring has not answered about the model's provider yet."""
        if model is None:
            return False
        if is_loopback(model.base_url):
            return True
        return self.keys.has_key(model.provider)

    def key_unknown(self, session: AgentSession) -> bool:
        """The keyring has not said yet whether the session's model has a key: asking for it now would
        ask the keyring from the GUI thread."""
        return session.model is not None and self.model_usable(session.model) is None

    async def keys_known(self, session: AgentSession) -> None:
        """Returns once the keyring has said whether the session's model has a key (asked in a worker)."""
        if self.key_unknown(session):
            await self.keys.refresh()

    # ---- what the user sends and the commands ------------------------------------------------

    def submit(self, text: str) -> None:
        """What the user typed, sent as the chat sends it (see ``PromptSending``)."""
        self.sending.submit(text)

    def send_prompt(self, text: str) -> None:
        """Send ``text`` now, without the long-prompt offer."""
        self.sending.send_prompt(text)

    def run_command(self, command: SlashCommand) -> None:
        """A slash command typed in the composer (or chosen in the palette or a menu), run by its handler."""
        BUILTIN.run(self.command_context, command.name, command.args)

    def name_session(self, name: str) -> None:
        self.run_command(SlashCommand("name", name))


def _rows_of(session: AgentSession, preview: Conversation | None) -> Conversation:
    """The chat's rows for an opened session: those of the preview shown while it opened when it showed
    the session's last messages, else built (a long branch's last ones first). Any thread."""
    adopted = adopt_preview(preview, session.messages) if preview is not None else None
    return adopted if adopted is not None else prepare_session_conversation(session, FIRST_TAIL)
