"""What the user sends from the chat, as engine calls: a prompt (steering the agent while it works, a long
one offered as an intake file, local images attached), a follow-up queued for when it is done, a ``!cmd``
or ``!!cmd``, and Stop. Nothing typed is lost: what cannot be sent now goes back into the editor."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, Protocol

from piwork.core.agent import AgentSession
from piwork.gui.chat.chat_panel import ChatPanel
from piwork.gui.context.context_commands import ContextCommands
from piwork.gui.key_status import KeyStatus
from piwork.gui.main_window import MainWindow


class SendingHost(Protocol):
    keys: KeyStatus
    chat: ChatPanel  # the tab's chat

    @property
    def session(self) -> AgentSession | None: ...

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]: ...

    def key_unknown(self, session: AgentSession) -> bool: ...


class PromptSending:
    def __init__(self, host: SendingHost, window: MainWindow, context_commands: ContextCommands) -> None:
        self.host = host
        self.composer = host.chat.composer
        self.presenter = host.chat.presenter
        self.context_commands = context_commands
        chat = host.chat
        chat.promptSubmitted.connect(self.submit)
        chat.followUpSubmitted.connect(self.submit_follow_up)
        chat.userCommandSubmitted.connect(self.run_user_command)
        chat.stopRequested.connect(self.stop)

    def submit(self, text: str) -> None:
        if self.host.session is None:
            self.composer.set_text(text)  # not lost: it waits in the editor
            self.presenter.add_notice("No session", "The session is still opening; send again in a moment.")
            return
        if self.context_commands.offer_intake(text):
            return
        self.send_prompt(text)

    def send_prompt(self, text: str) -> None:
        """Send ``text`` now (steering a running agent), without the long-prompt offer."""
        session = self.host.session
        if session is None:
            self.composer.set_text(text)
            return
        if self.host.key_unknown(session):  # sent before the keyring answered: send once it has
            self.host.spawn(self._send_when_keys_known(session, text))
            return
        if self.context_commands.names_images(text):  # local image paths: attached, read in a worker
            self.host.spawn(self.context_commands.send_with_images(session, text))
        elif session.is_streaming:
            self.host.spawn(session.steer(text))
        else:
            self.host.spawn(session.prompt(text))

    async def _send_when_keys_known(self, session: AgentSession, text: str) -> None:
        await self.host.keys.refresh()
        if session is self.host.session:
            self.host.spawn(session.steer(text) if session.is_streaming else session.prompt(text))

    def submit_follow_up(self, text: str) -> None:
        """Alt+Enter: while the agent works, queue ``text`` for when it is done; otherwise just send it."""
        session = self.host.session
        if session is not None and session.is_streaming:
            self.host.spawn(session.follow_up(text))
        else:
            self.submit(text)

    def run_user_command(self, command: str, excluded: bool) -> None:
        """``!cmd`` (its output goes to the model with the next message) or ``!!cmd`` (shown and saved, never
        sent): run in a worker by the engine, its output streamed into the chat. One at a time."""
        session = self.host.session
        typed = ("!!" if excluded else "!") + command
        if session is None:
            self.composer.set_text(typed)  # not lost: it waits in the editor
            self.presenter.add_notice("No session", "The session is still opening; run it again in a moment.")
            return
        if session.user_commands.running:
            self.composer.set_text(typed)
            self.presenter.add_notice(
                "A command is already running",
                "Press Esc to stop it first, or wait for it to end.",
                error=True,
            )
            return
        self.host.spawn(session.run_user_command(command, exclude_from_context=excluded))

    def stop(self) -> None:
        """Stop the agent. Messages still queued are not sent: they go back into the editor, before what
        is being typed there, so nothing is lost and nothing runs after Stop. A command of the user's that
        is running stops too."""
        session = self.host.session
        if session is None:
            return
        if session.user_commands.running:
            session.abort_user_commands()
            if not session.is_streaming:
                return
        steering, follow_up = session.clear_queues()
        queued = [*steering, *follow_up]
        if queued:
            typed = self.composer.toPlainText()
            self.composer.set_text("\n\n".join(t for t in [*queued, typed] if t.strip()))
        self.host.spawn(session.abort())
