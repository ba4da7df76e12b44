"""When AgentSession compacts: the three checkpoints, overflow recovery and manual compaction.

A: between a tool batch and the next request (threshold only). B: after a low-level run ends (overflow
recovery with one retry, or threshold). C: before a new user prompt (same checks, never continues). The
summarizing itself is done by the compaction engine behind :class:`CompactionPort`.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from piwork.core.agent.events import CompactionEnd, CompactionReason, CompactionStart, Message
from piwork.core.compaction.settings import CompactionSettings
from piwork.core.compaction.tokens import calculate_context_tokens, estimate_context_tokens, should_compact
from piwork.core.errors import PiworkError
from piwork.core.llm.errors import is_context_overflow

if TYPE_CHECKING:
    from piwork.core.agent.loop import CompletedTurn
    from piwork.core.agent.session import AgentSession

OVERFLOW_RETRY_FAILED = (
    "Context overflow recovery failed after one compact-and-retry attempt. "
    "Try reducing context or switching to a larger-context model."
)
LENGTH_RETRY_FAILED = "Truncated response recovery failed after one compact-and-retry attempt."
NO_MODEL = "No model selected. Choose a model before compacting."


class CompactionCancelled(PiworkError):
    def __init__(self, message: str = "Compaction cancelled") -> None:
        super().__init__(message)


@dataclass
class CompactionOutcome:
    """A compaction written to the session: the result shown to users and the rebuilt context."""

    result: dict[str, Any]
    messages: list[Message]


@dataclass
class CompactionRequest:
    reason: CompactionReason
    will_retry: bool
    custom_instructions: str | None
    cancel: asyncio.Event = field(default_factory=asyncio.Event)


class CompactionPort(Protocol):
    """What AgentSession needs from the compaction engine and the session store."""

    def latest_compaction_ms(self) -> float | None:
        """Timestamp (ms) of the latest compaction on the current branch, if any."""

    def can_compact(self) -> bool:
        """False when there is nothing to compact (the automatic paths then do nothing)."""

    async def compact(self, request: CompactionRequest) -> CompactionOutcome:
        """Summarize and append the compaction entry; raise :class:`PiworkError` with a user message
        (``Already compacted``, ``Nothing to compact (session too small)``, ...) or
        :class:`CompactionCancelled`."""


class CompactionCheckpoints:
    def __init__(self, session: AgentSession) -> None:
        self._session = session
        self.port: CompactionPort | None = None
        self.manual_running = False
        self._overflow_attempted = False
        self._active: CompactionRequest | None = None

    @property
    def settings(self) -> CompactionSettings:
        return CompactionSettings.from_settings(self._session.settings)

    def reset_overflow_attempt(self) -> None:
        self._overflow_attempted = False

    def abort(self) -> None:
        if self._active is not None:
            self._active.cancel.set()

    def _window(self) -> int:
        model = self._session.model
        return model.context_window if model is not None else 0

    # ---- checkpoint A ------------------------------------------------------------------------------

    async def before_next_request(self, turn: CompletedTurn) -> list[Message] | None:
        window = self._window()
        if not turn.will_continue or self.port is None or window <= 0:
            return None
        if not should_compact(estimate_context_tokens(turn.messages).tokens, window, self.settings):
            return None
        outcome = await self._auto("threshold", will_retry=False)
        return list(outcome.messages) if outcome is not None else None

    # ---- checkpoints B and C -----------------------------------------------------------------------

    async def check(self, message: Message, *, skip_aborted: bool) -> bool:
        """Compact if needed after ``message``; True when the run should continue (overflow retry or
        queued messages)."""
        settings = self.settings
        window = self._window()
        model = self._session.model
        if not settings.enabled or self.port is None or model is None or window <= 0:
            return False
        if skip_aborted and message.get("stopReason") == "aborted":
            return False
        latest = self.port.latest_compaction_ms()
        timestamp = message.get("timestamp")
        if latest is not None and isinstance(timestamp, int | float) and timestamp <= latest:
            return False
        same_model = message.get("provider") == model.provider and message.get("model") == model.id
        overflow = same_model and is_context_overflow(message, window)
        usage = message.get("usage")
        usage = usage if isinstance(usage, dict) else {}
        recoverable_length = (
            same_model
            and message.get("stopReason") == "length"
            and model.max_tokens > 0
            and (usage.get("output") or 0) < model.max_tokens
        )
        if overflow or recoverable_length:
            return await self._recover(message, overflow)
        return await self._threshold(message, latest)

    async def _recover(self, message: Message, overflow: bool) -> bool:
        if message.get("stopReason") == "stop":
            outcome = await self._auto("overflow", will_retry=False)
            return outcome is not None and self._has_queued()
        if self._overflow_attempted:
            text = OVERFLOW_RETRY_FAILED if overflow else LENGTH_RETRY_FAILED
            self._session.emit(CompactionEnd("overflow", None, False, False, text))
            return False
        self._overflow_attempted = True
        self._drop_trailing_failure(any_assistant=True)
        outcome = await self._auto("overflow", will_retry=True)
        if outcome is None:
            return False
        self._drop_trailing_failure(any_assistant=False)
        return True

    async def _threshold(self, message: Message, latest: float | None) -> bool:
        usage = message.get("usage")
        direct = calculate_context_tokens(usage) if isinstance(usage, dict) else 0
        tokens: float = direct
        if message.get("stopReason") == "error" or direct == 0:
            messages = self._session.messages
            estimate = estimate_context_tokens(messages)
            if estimate.last_usage_index is not None and latest is not None:
                source = messages[estimate.last_usage_index]
                stamp = source.get("timestamp")
                if source.get("role") == "assistant" and isinstance(stamp, int | float) and stamp <= latest:
                    return False
            tokens = estimate.tokens
        if not should_compact(tokens, self._window(), self.settings):
            return False
        outcome = await self._auto("threshold", will_retry=False)
        return outcome is not None and self._has_queued()

    def _has_queued(self) -> bool:
        steering, follow_up = self._session.queued
        return bool(steering or follow_up)

    def _drop_trailing_failure(self, *, any_assistant: bool) -> None:
        messages = self._session.messages
        last = messages[-1] if messages else None
        if (
            last is not None
            and last.get("role") == "assistant"
            and (any_assistant or last.get("stopReason") in ("error", "length"))
        ):
            self._session.replace_messages(messages[:-1])

    # ---- running a compaction ----------------------------------------------------------------------

    async def _auto(self, reason: CompactionReason, *, will_retry: bool) -> CompactionOutcome | None:
        port = self.port
        if port is None or not port.can_compact():
            return None
        self._session.emit(CompactionStart(reason))
        request = self._active = CompactionRequest(reason, will_retry, None)
        try:
            outcome = await port.compact(request)
        except CompactionCancelled:
            self._session.emit(CompactionEnd(reason, None, True, False))
            return None
        except PiworkError as err:
            prefix = "Context overflow recovery failed" if reason == "overflow" else "Auto-compaction failed"
            self._session.emit(CompactionEnd(reason, None, False, False, f"{prefix}: {err}"))
            return None
        finally:
            self._active = None
        self._session.replace_messages(outcome.messages)
        self._session.emit(CompactionEnd(reason, outcome.result, False, will_retry))
        return outcome

    async def manual(self, custom_instructions: str | None) -> dict[str, Any]:
        """``/compact [focus]``: raises :class:`PiworkError` with the reason when it cannot compact."""
        self._session.emit(CompactionStart("manual"))
        self.manual_running = True
        request = self._active = CompactionRequest("manual", False, custom_instructions)
        try:
            if self.port is None or self._session.model is None:
                raise PiworkError(NO_MODEL)
            outcome = await self.port.compact(request)
        except CompactionCancelled:
            self._session.emit(CompactionEnd("manual", None, True, False))
            raise
        except PiworkError as err:
            self._session.emit(CompactionEnd("manual", None, False, False, f"Compaction failed: {err}"))
            raise
        finally:
            self._active = None
            self.manual_running = False
        self._session.replace_messages(outcome.messages)
        self._session.emit(CompactionEnd("manual", outcome.result, False, False))
        return outcome.result
