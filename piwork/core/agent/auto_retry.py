"""Agent-level retry of transient provider failures: 2 s, 4 s, 8 s by default, honouring Retry-After.

The failed reply stays in the session file but leaves the in-memory context before the run is continued.
piwork additions: a server this session has never reached (refused connection, unknown host) is a setup
problem, reported at once rather than after the whole backoff; and the attempts of one reply share one
``ReplyBudget``, so the silence limit and the whole-reply limit bound the reply with its retries (a
retry that would start after the reply's time is up does not happen).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Protocol

from piwork.core.agent.abort import Aborted, AbortSignal
from piwork.core.agent.events import AgentEvent, AutoRetryEnd, AutoRetryStart, ErrorNotice, Message
from piwork.core.agent.retry import RetrySettings, decide_retry
from piwork.core.llm.errors import is_context_overflow, is_retryable_text
from piwork.core.llm.reply_limits import ReplyBudget
from piwork.core.llm.transport import REFUSED_HERE
from piwork.core.llm.types import ErrorInfo, Model, StreamOptions

if TYPE_CHECKING:
    from piwork.core.agent.loop import CallRecord
    from piwork.core.session.tree import SessionTree

# errorMessage openings of transport failures that happen before any byte reached the server
NEVER_CONNECTED_PREFIXES = ("Connection error:", "Connection timed out after")


class RetryHost(Protocol):
    """What retrying needs from its session: the model and retry settings to judge a failure, the context
    to drop the failed reply from, the clock to wait on, and the events to say so."""

    @property
    def model(self) -> Model | None: ...
    @property
    def retry_settings(self) -> RetrySettings: ...
    @property
    def messages(self) -> list[Message]: ...
    @property
    def sleep(self) -> Callable[[float], Awaitable[None]]: ...
    @property
    def base_options(self) -> StreamOptions: ...
    @property
    def tree(self) -> SessionTree: ...
    @property
    def read_only_reason(self) -> str | None: ...
    def replace_messages(self, messages: list[Message]) -> None: ...
    def emit(self, event: AgentEvent) -> None: ...


class AutoRetry:
    def __init__(self, session: RetryHost) -> None:
        self._session = session
        self.attempt = 0
        self.last_error: ErrorInfo | None = None  # classification of the latest failed call
        self._reached_provider = False
        self._signal: AbortSignal | None = None
        self._budget: ReplyBudget | None = None

    def reply_budget(self) -> ReplyBudget:
        """The limits' account of the reply about to be requested: a fresh one unless it is a retry."""
        if self.attempt == 0 or self._budget is None:
            self._budget = ReplyBudget()
        return self._budget

    @property
    def waiting(self) -> bool:
        return self._signal is not None

    def abort(self) -> None:
        if self._signal is not None:
            self._signal.abort()

    def _spent_limit(self, delay_s: float) -> str | None:
        if self._budget is None:
            return None
        options = self._session.base_options
        return self._budget.spent(options.idle_timeout, options.total_timeout, delay_s)

    def note_call(self, record: CallRecord) -> None:
        text = str(record.message.get("errorMessage") or "")
        if record.message.get("stopReason") != "error" or not text.startswith(NEVER_CONNECTED_PREFIXES):
            self._reached_provider = True
        self.last_error = record.error

    def is_retryable(self, message: Message) -> bool:
        if message.get("stopReason") != "error":
            return False
        model = self._session.model
        if is_context_overflow(message, model.context_window if model is not None else 0):
            return False  # compaction handles it
        text = str(message.get("errorMessage") or "")
        if not self._reached_provider and text.startswith(NEVER_CONNECTED_PREFIXES):
            return False
        if text.startswith(REFUSED_HERE):
            return False  # a local server that is not running: waiting does not start it
        return is_retryable_text(text)

    def will_retry(self, new_messages: list[Message]) -> bool:
        settings = self._session.retry_settings
        if not settings.enabled or self.attempt >= settings.max_retries:
            return False
        for message in reversed(new_messages):
            if message.get("role") == "assistant":
                return self.is_retryable(message)
        return False

    def on_reply(self, message: Message) -> None:
        """A reply ended: a successful one closes a retry sequence."""
        if message.get("stopReason") != "error" and self.attempt > 0:
            self._session.emit(AutoRetryEnd(True, self.attempt))
            self.attempt = 0

    async def handle(self, message: Message) -> bool:
        """After a run ended on ``message``: True when it should be run again (after the backoff)."""
        if self.is_retryable(message) and await self._wait_for_retry(message):
            return True
        if message.get("stopReason") == "error" and self.attempt > 0:
            self._session.emit(AutoRetryEnd(False, self.attempt, message.get("errorMessage")))
            self.attempt = 0
        return False

    async def _wait_for_retry(self, message: Message) -> bool:
        settings = self._session.retry_settings
        retry_after = self.last_error.retry_after_ms if self.last_error is not None else None
        decision = decide_retry(self.attempt + 1, settings, retry_after)
        if decision.refused_reason is not None:
            self._session.emit(ErrorNotice(decision.refused_reason, "retry"))
        if not decision.retry:
            return False
        limit = self._spent_limit(decision.delay_ms / 1000)
        if limit is not None:
            self._session.emit(
                ErrorNotice(
                    f"Not retried: the reply has used up its {limit} (counted across retries).", "retry"
                )
            )
            return False
        self.attempt += 1
        error_text = str(message.get("errorMessage") or "Unknown error")
        self._session.emit(AutoRetryStart(self.attempt, settings.max_retries, decision.delay_ms, error_text))
        # the failed reply stays in the file but is left out of every later request
        from piwork.core.agent.recovery_omission import omit_failed_attempt  # only after a failed reply

        await omit_failed_attempt(self._session, message)
        signal = self._signal = AbortSignal()
        try:
            await signal.run(self._session.sleep(decision.delay_ms / 1000))
        except Aborted:
            attempt, self.attempt = self.attempt, 0
            self._session.emit(AutoRetryEnd(False, attempt, "Retry cancelled"))
            return False
        finally:
            self._signal = None
        return True
