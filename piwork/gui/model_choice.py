"""Choosing the model that answers and how hard it thinks: the footer's pickers filled from what is known
about keys (never asking the keyring), a pick applied to the open session (its ``!command`` headers resolved
in a worker, the latest pick winning), and a provider just added in Settings taken up by a session that
has no usable model."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, Protocol

from piwork.core.agent import AgentSession
from piwork.core.errors import PiworkError
from piwork.core.llm import Model, ModelRegistry
from piwork.gui.chat.chat_panel import ChatPanel
from piwork.gui.chat.empty_state import CHECKING, CHOOSE, MISSING, READY
from piwork.gui.chat.pickers import thinking_clamp_text
from piwork.gui.key_status import KeyStatus
from piwork.gui.main_window import MainWindow


class ModelHost(Protocol):
    """The open session and the controller's model and key state."""

    models: ModelRegistry
    keys: KeyStatus
    chat: ChatPanel  # the tab's chat

    @property
    def session(self) -> AgentSession | None: ...

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]: ...

    def model_usable(self, model: Model | None) -> bool | None: ...

    def refresh_status(self) -> None: ...


class ModelChoice:
    def __init__(self, host: ModelHost, window: MainWindow) -> None:
        self.host = host
        self.chat = host.chat
        self.status = window.status
        self._picks = 0  # models picked so far: a pick resolved in a worker applies only if still the latest
        footer = self.chat.footer
        footer.model_picker.modelPicked.connect(self.pick_model)
        footer.thinking_picker.levelPicked.connect(self.pick_thinking)
        host.keys.changed.connect(self.fill_pickers)

    @property
    def models(self) -> ModelRegistry:
        return self.host.models

    @property
    def keys(self) -> KeyStatus:
        return self.host.keys

    def model_usable(self, model: Model | None) -> bool | None:
        return self.host.model_usable(model)

    def fill_pickers(self) -> None:
        """The model picker and the chat's model state, from what is known about keys (never the keyring)."""
        session = self.host.session
        models = [m for m in self.models.models if m.api_supported]
        usable = {(m.provider, m.id): self.model_usable(m) for m in models}
        available = {key for key, can in usable.items() if can}
        checking = {key for key, can in usable.items() if can is None}
        current = session.model if session else None
        names = {p: self.models.provider_name(p) for p in {m.provider for m in models}}
        self.chat.footer.model_picker.set_models(
            models, available, (current.provider, current.id) if current else None, names, checking
        )
        current_usable = self.model_usable(current)
        if current_usable:
            state = READY
        elif current_usable is None or (checking and not available):
            state = CHECKING  # not "no key": the keyring has not answered yet
        elif session is None and available:
            state = READY  # still opening (the trust question may be up): the session picks a usable model
        else:
            state = CHOOSE if available else MISSING
        self.chat.set_model_state(state)

    def pick_model(self, provider: str, model_id: str) -> None:
        session = self.host.session
        model = self.models.find(provider, model_id)
        if session is None or model is None:
            return
        if self.model_usable(model) is None:  # its key is still being checked: pick once it is known
            self.host.spawn(self._pick_when_checked(provider, model_id))
            return
        self._picks += 1
        if self.models.headers_run_commands(model):
            # a header given as a ``!command`` runs the user's command (a password manager may take
            # seconds): in a worker; the picker shows the choice meanwhile, the latest pick wins
            self.host.spawn(self._set_model_with_commands(session, model, self._picks))
            return
        self._set_model(session, self.models.with_resolved_headers(model))

    async def _set_model_with_commands(self, session: AgentSession, model: Model, pick: int) -> None:
        resolved = await asyncio.to_thread(self.models.with_resolved_headers, model)
        if pick == self._picks and session is self.host.session:  # not picked over, nor another session open
            self._set_model(session, resolved)

    def _set_model(self, session: AgentSession, model: Model) -> None:
        try:
            session.set_model(model)
        except PiworkError as err:
            self.chat.presenter.add_notice(
                "Model not changed",
                str(err),
                hint="Add the provider's key in Settings → Providers.",
                error=True,
            )
        self.host.refresh_status()

    async def _pick_when_checked(self, provider: str, model_id: str) -> None:
        await self.keys.refresh()
        self.pick_model(provider, model_id)

    def pick_thinking(self, level: str) -> None:
        session = self.host.session
        if session is None:
            return
        try:
            effective = session.set_thinking_level(level)  # type: ignore[arg-type]
        except PiworkError as err:
            self.chat.presenter.add_notice("Thinking level not changed", str(err), error=True)
        else:
            if effective != level:  # clamped to what the model can do: say why nothing moved
                self.status.showMessage(thinking_clamp_text(session.model, level, effective), 8000)
        self.host.refresh_status()

    def providers_changed(self, provider: str) -> None:
        """models.json changed in the window (the Providers page has already swapped what it read back,
        in a worker, into the registry); a session without a usable model takes the first model of the
        provider just added — now, or once the keyring has said whether it has a key."""
        loading = self.keys.refresh()  # a provider just added is asked about in a worker
        self._take_first_model_of(provider)
        if provider:
            self.host.spawn(self._when_keys_known(loading, provider))

    async def _when_keys_known(self, loading: asyncio.Task[Any], provider: str) -> None:
        await loading
        self._take_first_model_of(provider)

    def _take_first_model_of(self, provider: str) -> None:
        session = self.host.session
        if session is not None and provider and self.model_usable(session.model) is False:
            first = next((m for m in self.models.models if m.provider == provider and m.api_supported), None)
            if first is not None and self.model_usable(first):
                self.pick_model(first.provider, first.id)  # its header commands run in a worker
        self.fill_pickers()
        self.host.refresh_status()
