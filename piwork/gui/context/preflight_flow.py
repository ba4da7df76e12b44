"""The context views' wiring and the preflight dialog: the feed's figures to the footer, the Context and
Resources panels; the dialog opened on request, when the governor withholds a request, or between runs
when the next request would be in the pricing zone; and what the manifest's rows and the dialog's choices
ask for."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Sequence
from typing import Any, Protocol

import shiboken6
from PySide6.QtCore import QObject, Qt, SignalInstance
from PySide6.QtWidgets import QDockWidget

from piwork.core.context import GovernorDecision, ManifestEntry
from piwork.core.workflows import AgentRuntime
from piwork.gui.chat.chat_panel import ChatPanel
from piwork.gui.commands import SlashCommand
from piwork.gui.context.context_commands import ContextCommands
from piwork.gui.context.feed import ContextFeed
from piwork.gui.context.navigation import ContextNavigator
from piwork.gui.context.preflight_dialog import DIALOG_VERDICTS, PreflightDialog
from piwork.gui.context.reading import MeterReading
from piwork.gui.main_window import MainWindow


class PreflightHost(Protocol):
    runtime: AgentRuntime | None
    cwd: str
    chat: ChatPanel  # the tab's chat

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]: ...

    def run_command(self, command: SlashCommand) -> None: ...


class PreflightFlow(QObject):
    def __init__(
        self,
        host: PreflightHost,
        window: MainWindow,
        feed: ContextFeed,
        navigator: ContextNavigator,
        context_commands: ContextCommands,
        toggle_tool: Callable[[str, bool], None],
        show_trust: Callable[[], object],
    ) -> None:
        super().__init__(window)
        self.host = host
        self.window = window
        self.feed = feed
        self.navigator = navigator
        self.context_commands = context_commands
        self.show_trust = show_trust
        self.dialog: PreflightDialog | None = None
        self._auto_key: tuple[str, int] | None = None
        self.auto_task: asyncio.Task[Any] | None = None  # the latest automatic check
        self._toggle_tool = toggle_tool
        self._docks: tuple[QDockWidget, ...] = ()
        self.watch_docks()
        feed, footer = self.feed, host.chat.footer
        feed.readingChanged.connect(footer.set_reading)
        feed.readingChanged.connect(self._maybe_auto_preflight)
        feed.decisionAdded.connect(self._on_governor_decision)
        feed.billedChanged.connect(footer.set_billed)
        self.navigator.missed.connect(lambda text: self.window.status.showMessage(text, 8000))

    def link_window(self, link: Callable[[SignalInstance, Callable[..., Any]], None]) -> None:
        """The window's Context and Resources panels and its Preflight action, through ``link`` (they
        show this session's figures, and act on it, while its tab is in front)."""
        feed, panel, window = self.feed, self.window.context_panel, self.window
        link(feed.xrayChanged, panel.set_xray)
        link(feed.toolsChanged, window.resource_panel.set_tools)
        link(window.resource_panel.toolToggled, self._toggle_tool)
        link(feed.manifestChanged, lambda manifest: panel.set_manifest(manifest, self.host.cwd))
        link(feed.decisionAdded, panel.add_decision)
        link(feed.decisionsReset, panel.set_decisions)
        link(feed.seriesChanged, panel.plot.set_series)
        link(panel.jumpRequested, self.navigator.jump)
        link(panel.showOriginalRequested, self.navigator.show_original)
        link(panel.preflightRequested, lambda *_: self.show())
        link(panel.manifestActionRequested, self.on_manifest_action)
        link(window.action_map["context_preflight"].triggered, lambda *_: self.show())

    def watch_docks(self) -> None:
        """The figures are made once something shows them: the meter (it shows a count once there is a
        model), the window's Context panel, its Resources panel (the tools' counts)."""
        for dock in self._docks:
            dock.visibilityChanged.disconnect(self._dock_shown)
        window = self.window
        docks = self._docks = (window.docks["context"], window.docks["resources"])
        self.feed.counts_shown = lambda: self._model_chosen() or any(dock.isVisible() for dock in docks)
        self.feed.partials_wanted = docks[0].isVisible()
        for dock in docks:
            dock.visibilityChanged.connect(self._dock_shown)

    def _model_chosen(self) -> bool:
        """The meter shows a count (with no model it says so instead)."""
        session = self.feed.session
        return session is not None and session.model is not None

    def _dock_shown(self, visible: bool) -> None:
        self.feed.partials_wanted = self.window.docks["context"].isVisible()
        if visible:
            self.feed.counts_wanted()

    def session_opened(self) -> None:
        self._auto_key = None  # a session (re)opened is checked afresh

    def show(
        self, planned_files: Sequence[str] = (), *, only_if_needed: bool = False
    ) -> asyncio.Task[Any] | None:
        """/context preflight for the next request (computed in the executor), then the dialog;
        ``only_if_needed`` opens it only for a verdict that asks for a decision (pricing zone, overflow)."""
        runtime = self.host.runtime
        if runtime is None:
            return None
        return self.host.spawn(self._preflight(runtime, tuple(planned_files), only_if_needed))

    async def _preflight(
        self, runtime: AgentRuntime, planned_files: tuple[str, ...], only_if_needed: bool = False
    ) -> PreflightDialog | None:
        result = await self.feed.preflight(runtime.resources, planned_files)
        if result is None or not shiboken6.isValid(self.window):
            return None
        if only_if_needed and result.get("verdict") not in DIALOG_VERDICTS:
            return None  # the governor's projection brings the next request under the marks
        previous = self.dialog
        if previous is not None and shiboken6.isValid(previous) and previous.isVisible():
            previous.close()  # one preflight dialog at a time, with the latest figures
        # /fresh task hands a task over: offered only when the branch has one
        has_task = result.get("task") is not None
        dialog = PreflightDialog(result, self.feed.reading, self.window, can_fresh=has_task)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.choice.connect(self._on_choice)
        dialog.show()
        self.dialog = dialog
        return dialog

    def on_manifest_action(self, action: str, entry: ManifestEntry) -> None:
        if action == "open":
            self.navigator.open_manifest_entry(entry, self.host.cwd)
        elif action in ("exclude", "include"):
            self.context_commands.change_exclusion(action, entry)
        elif action == "rebuild-index":
            self.host.run_command(SlashCommand("context", "rebuild"))
        elif action == "trust":
            self.show_trust()

    def _maybe_auto_preflight(self, reading: MeterReading) -> None:
        """Between runs, a next request in the pricing zone or past the compaction threshold opens the
        preflight dialog (once per state of the conversation). The meter may show the transcript before
        any projection (a session just opened), so the dialog opens only if the preflight, which applies
        the governor, agrees."""
        runtime = self.host.runtime
        session = runtime.session if runtime is not None else None
        if session is None or session.is_streaming or reading.zone not in DIALOG_VERDICTS:
            return
        key = (reading.zone, len(session.messages))
        if key != self._auto_key:
            self._auto_key = key
            self.auto_task = self.show(only_if_needed=True)

    def _on_governor_decision(self, decision: GovernorDecision) -> None:
        if decision.decision == "context-limit":  # the governor withheld a request at the pricing mark
            self.show()

    def _on_choice(self, choice: str) -> None:
        runtime = self.host.runtime
        session = runtime.session if runtime is not None else None
        if choice == "compact":  # the dialog's advice names /context compact: the governor's own compaction
            self.host.run_command(SlashCommand("context", "compact"))
        elif choice == "fresh":
            self.host.run_command(SlashCommand("fresh", "task"))
        elif choice == "send-anyway" and session is not None and not session.is_streaming:
            session.governance.send_once_anyway()  # the withheld request goes out once
            self.host.spawn(session.continue_run())
