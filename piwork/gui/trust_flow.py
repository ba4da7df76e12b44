"""The project's trust as the window decides it: the answer a session opens with (--approve/--no-approve,
an answer for this session only, a saved decision, or a new question when the gated files changed), asking
again when files changed after the decision that loaded them, and Project → Trust.

"This session only" answers are kept per real folder path across reloads and never saved, each with what
it was made on: only files matching that reading load."""

from __future__ import annotations

import asyncio
import dataclasses
import os
from collections.abc import Coroutine, Sequence
from pathlib import Path
from typing import Any, Protocol

from piwork.core.resources import (
    FingerprintStore,
    Snapshot,
    TrustOption,
    TrustRequest,
    TrustResolver,
    TrustState,
    TrustStore,
    display_path,
    trust_resources,
)
from piwork.core.workflows import AgentRuntime
from piwork.gui.chat.chat_panel import ChatPanel
from piwork.gui.main_window import MainWindow
from piwork.gui.tabs.chat_tab import ChatTab
from piwork.gui.trust_dialog import TrustDialog, TrustPrompter


class TrustHost(Protocol):
    """What the trust flow reads of the open session and asks of its lifecycle."""

    cwd: str
    agent_dir: Path
    runtime: AgentRuntime | None
    chat: ChatPanel  # the tab's chat
    tab: ChatTab

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]: ...

    def reload(self) -> None: ...


@dataclasses.dataclass(frozen=True, slots=True)
class TrustDecision:
    """What a session opens with: ``override`` (None: the engine reads the saved decision, or asks) and
    ``baseline``, the files the decision in force was made on (only those load)."""

    override: bool | None
    baseline: Snapshot | None


class TrustFlow:
    def __init__(self, host: TrustHost, window: MainWindow, approve: bool | None) -> None:
        self.host = host
        self.chat: ChatPanel = host.chat
        self.window = window
        self.approve = approve
        self.session_trust: dict[str, bool] = {}
        self._session_reviewed: dict[str, Snapshot | None] = {}
        agent_dir = str(host.agent_dir)
        self.prompter = TrustPrompter(TrustStore(agent_dir), FingerprintStore(agent_dir), parent=window)
        self.prompter.before_asking = self._not_while_typing
        self.prompter.asking.append(lambda question: host.tab.reply_notifier.waiting_for_answer(question))

    def share_session_answers(self, other: TrustFlow) -> None:
        """Keep the answers given "for this session only" together with ``other``'s (another tab's): a
        folder answered in one tab is not asked again in the next."""
        self.session_trust = other.session_trust
        self._session_reviewed = other._session_reviewed

    def _folder(self) -> str:
        return os.path.realpath(self.host.cwd)

    async def ask(self, request: TrustRequest) -> TrustOption | None:
        """The engine's question when no decision is in force (given to ``create_runtime``)."""
        return await self.prompter.ask(request)

    async def _not_while_typing(self, changed: bool) -> None:
        """Hold a trust question back while the user types in the composer, until they choose to review."""
        if self.chat.composer.is_typing():
            await self.chat.trust_banner.wait_for_review(changed)

    async def decide(self) -> TrustDecision:
        """--approve/--no-approve; else, when the gated resources changed since the saved decision, the
        user's new answer; else whatever this session answered before."""
        if self.approve is not None:
            return TrustDecision(self.approve, None)
        folder = self._folder()
        if folder in self.session_trust:
            return TrustDecision(self.session_trust[folder], self._session_reviewed.get(folder))
        state = await TrustResolver(self.prompter.store).resolve(self.host.cwd)
        if not await asyncio.to_thread(self.prompter.needs_recheck, state):  # fingerprints the files
            baseline = None
            if state.source == "saved" and state.trusted:
                baseline = await asyncio.to_thread(self.prompter.snapshots.load, self.host.cwd)
            return TrustDecision(None, baseline)
        decided = await self.prompter.recheck(state)
        saved = decided.source == "prompt" and decided.saved_path is not None
        return TrustDecision(None if saved else decided.trusted, decided.reviewed)

    def opened(self, runtime: AgentRuntime, baseline: Snapshot | None) -> None:
        """A session opened: remember an answer for this session only (a reload must not ask again), and
        when gated files changed after the decision that loaded it, say so and ask again."""
        trust = runtime.resources.trust
        if trust is None:
            return
        if trust.source == "session-only":
            self.session_trust[self._folder()] = trust.trusted
            self._session_reviewed[self._folder()] = trust.reviewed
        if runtime.resources.unreviewed:
            self._tell_unreviewed(runtime.resources.unreviewed)
            self.host.spawn(self._ask_again_about(trust, trust.reviewed or baseline))

    def _tell_unreviewed(self, paths: Sequence[str]) -> None:
        names = ", ".join(display_path(p, self._folder()) for p in paths)
        self.chat.presenter.add_notice(
            "Changed since you reviewed it",
            f"{names} changed after you reviewed this project for trust, so it was not loaded. "
            "piwork asks again, showing the change.",
        )

    async def _ask_again_about(self, state: TrustState, baseline: Snapshot | None) -> None:
        """Gated files changed after the decision that loaded this project: ask again, showing the
        change, and reload with the answer."""
        resources = tuple(await asyncio.to_thread(trust_resources, self.host.cwd))
        decided = await self.prompter.ask_about_changes(
            dataclasses.replace(state, resources=resources), baseline
        )
        folder = self._folder()
        if decided.source == "prompt" and decided.saved_path is not None:
            self.session_trust.pop(folder, None)
        else:  # this session only, or dismissed (untrusted): nothing saved
            self.session_trust[folder] = decided.trusted
        self._session_reviewed[folder] = decided.reviewed
        self.host.reload()

    def show(self) -> asyncio.Task[TrustDialog]:
        """Project → Trust, once trust.json and the folder are read (in a worker)."""
        return self.host.spawn(self._show())

    async def _show(self) -> TrustDialog:
        runtime = self.host.runtime
        trust = runtime.resources.trust if runtime is not None else None
        now = None
        if trust is not None:
            how = trust.describe().split(": ", 1)[-1]
            now = f"{'trusted' if trust.trusted else 'not trusted'} ({how})"
        dialog = await TrustDialog.read_saved_decision(
            self.host.cwd, TrustStore(str(self.host.agent_dir)), self.window, session_state=now
        )
        dialog.accepted.connect(lambda: self.host.spawn(self._apply_choice(dialog)))
        dialog.show()
        return dialog

    async def _apply_choice(self, dialog: TrustDialog) -> None:
        """Project → Trust answered: remember what was decided on, then reload with the new state."""
        chosen = dialog.chosen
        folder = self._folder()
        if dialog.forgot:
            self.session_trust.pop(folder, None)  # the reload asks again
        elif chosen is not None and not chosen.updates:
            self.session_trust[folder] = chosen.trusted  # this session only: nothing saved
            reading = dialog.request.reading
            self._session_reviewed[folder] = reading.snapshot if reading and chosen.trusted else None
        elif chosen is not None:
            self.session_trust.pop(folder, None)
            await asyncio.to_thread(self.prompter.record, dialog.request)
        self.host.reload()
