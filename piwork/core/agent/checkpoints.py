"""When AgentSession compacts: the three checkpoints, overflow recovery, manual compaction, navigation.

A: between a tool batch and the next request (threshold only). B: after a low-level run ends (overflow
recovery with one retry, or threshold). C: before a new user prompt (same checks, never continues). The
decisions come from :mod:`piwork.core.compaction.triggers`; summarizing and writing the entry from a
:class:`CompactionPort` (built in: :class:`piwork.core.agent.compaction_port.TreeCompactionPort`). This
module turns outcomes into events and keeps the in-memory context in step with the session file.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from piwork.core.agent.events import (
    AgentEvent,
    CompactionEnd,
    CompactionReason,
    CompactionStart,
    Message,
    TreeNavigated,
)
from piwork.core.agent.stats import projected_tokens
from piwork.core.compaction.settings import BranchSummarySettings, CompactionSettings
from piwork.core.compaction.tokens import should_compact
from piwork.core.compaction.triggers import check_after_response, due_before_next_response
from piwork.core.errors import PiworkError
from piwork.core.llm.types import Model
from piwork.core.session.tree import SessionTree
from piwork.core.session.tree_context import context_records

if TYPE_CHECKING:
    from piwork.core.agent.loop import CompletedTurn
    from piwork.core.compaction.hooks import CompactionHooks
    from piwork.core.compaction.navigate import BranchSummaryProgress, NavigationResult
    from piwork.core.compaction.summarize import Summarizer

NO_MODEL = "No model selected. Choose a model before compacting."
NO_ENGINE = "Compaction is not available in this session."


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

    async def can_compact(self) -> bool:
        """False when there is nothing to compact (the automatic paths then do nothing)."""

    async def compact(self, request: CompactionRequest) -> CompactionOutcome:
        """Summarize and append the compaction entry; raise :class:`PiworkError` with a user message
        (``Already compacted``, ``Nothing to compact (session too small)``, ...) or
        :class:`CompactionCancelled`."""


class CheckpointHost(Protocol):
    """What the checkpoints need from their session: the model and settings the triggers weigh, the
    in-memory context they judge and replace, the queued input, the session tree to navigate, and events."""

    @property
    def model(self) -> Model | None: ...
    @property
    def settings(self) -> Mapping[str, Any]: ...
    @property
    def messages(self) -> list[Message]: ...
    @property
    def queued(self) -> tuple[list[str], list[str]]: ...
    @property
    def tree(self) -> SessionTree: ...
    @property
    def read_only_reason(self) -> str | None: ...
    def replace_messages(self, messages: list[Message]) -> None: ...
    def emit(self, event: AgentEvent) -> None: ...


ProjectedTokens = Callable[[list[Message]], Awaitable[int | None]]


class CompactionCheckpoints:
    def __init__(
        self,
        session: CheckpointHost,
        port: CompactionPort | None = None,
        summarizer_for: Callable[[], Summarizer | None] | None = None,
        hooks: CompactionHooks | None = None,
    ) -> None:
        self._session = session
        # the size of the request that will actually be sent (the context governor's projection); a
        # threshold compaction is made only when that is over the threshold too
        self.projected_tokens: ProjectedTokens | None = None
        self.port = port
        self.summarizer_for = summarizer_for  # for branch summaries
        self.hooks = hooks
        self.manual_running = False
        self.last_error: str | None = None
        self._recovery_attempted = False
        self._active: CompactionRequest | None = None
        self._nav_cancel: asyncio.Event | None = None

    @property
    def settings(self) -> CompactionSettings:
        model = self._session.model
        key = f"{model.provider}/{model.id}" if model is not None else None
        return CompactionSettings.from_settings(self._session.settings, key)

    def reset_overflow_attempt(self) -> None:
        self._recovery_attempted = False

    def abort(self) -> None:
        if self._active is not None:
            self._active.cancel.set()
        if self._nav_cancel is not None:
            self._nav_cancel.set()

    def latest_compaction_ms(self) -> float | None:
        return self.port.latest_compaction_ms() if self.port is not None else None

    # ---- checkpoints -------------------------------------------------------------------------------

    async def before_next_request(self, turn: CompletedTurn) -> list[Message] | None:
        """Checkpoint A; returns the rebuilt context when a compaction was written."""
        if not turn.will_continue:
            return None
        edited = self._edited_context_tokens()
        if not due_before_next_response(turn.messages, self._session.model, self.settings, edited):
            return None
        if await self._projection_fits(turn.messages):
            return None
        if await self._run("threshold", will_retry=False):
            return self._session.messages
        return None

    async def check(self, message: Message, *, skip_aborted: bool) -> bool:
        """Checkpoints B/C. True when the run should continue (overflow retry, or queued input)."""
        decision = check_after_response(
            message,
            model=self._session.model,
            settings=self.settings,
            messages=self._session.messages,
            latest_compaction_ms=self.latest_compaction_ms(),
            skip_aborted=skip_aborted,
            recovery_attempted=self._recovery_attempted,
            strict_pi=False,  # piwork's deviations (compaction-and-branch-summary spec)
            edited_context_tokens=self._edited_context_tokens(),
        )
        if decision.action == "recovery_failed":
            self._session.emit(CompactionEnd("overflow", None, False, False, decision.error_message))
            return False
        if decision.action != "compact":
            return False
        if decision.reason == "threshold" and await self._projection_fits(self._session.messages):
            return False
        if decision.will_retry:
            self._recovery_attempted = True
        if decision.drop_failed_message:
            # left out for good (a context edit), so the compaction and every later request skip it
            from piwork.core.agent.recovery_omission import omit_failed_attempt  # only after an overflow

            await omit_failed_attempt(self._session, message)
        compacted = await self._run(decision.reason, will_retry=decision.will_retry)
        if not compacted:
            return False
        if decision.will_retry:
            self._drop_trailing_assistant(only_failed=True)  # the rebuild may have restored it
            return True
        steering, follow_up = self._session.queued
        return bool(steering or follow_up)

    async def _projection_fits(self, messages: list[Message]) -> bool:
        """Whether the request that will be sent for ``messages`` is under the compaction threshold."""
        model = self._session.model
        if self.projected_tokens is None or model is None:
            return False
        tokens = await self.projected_tokens(messages)
        return tokens is not None and not should_compact(tokens, model.context_window, self.settings)

    def _edited_context_tokens(self) -> float | None:
        """The context's size when context edits are in force on the branch (else None)."""
        tree = self._session.tree
        selected, _ = context_records(tree, tree.path())
        edits = [i for i, record in enumerate(selected) if record.type == "context_edit"]
        if not edits:
            return None
        start = 0 if selected and selected[0].type == "compaction" else edits[-1]
        return projected_tokens(self._session.messages, [tree.body(r) for r in selected[start:]])

    def _drop_trailing_assistant(self, *, only_failed: bool) -> None:
        messages = self._session.messages
        last = messages[-1] if messages else None
        if last is None or last.get("role") != "assistant":
            return
        if only_failed and last.get("stopReason") not in ("error", "length"):
            return
        self._session.replace_messages(messages[:-1])

    # ---- running ------------------------------------------------------------------------------------

    async def _run(self, reason: CompactionReason, *, will_retry: bool, focus: str | None = None) -> bool:
        """One compaction; emits start/end. Automatic runs with nothing to compact do nothing."""
        port = self.port
        self.last_error = None
        if reason != "manual" and (
            port is None or self._session.model is None or not await port.can_compact()
        ):
            return False
        self._session.emit(CompactionStart(reason))
        request = self._active = CompactionRequest(reason, will_retry, focus)
        try:
            if port is None:
                raise PiworkError(NO_ENGINE)
            if self._session.model is None:
                raise PiworkError(NO_MODEL)
            outcome = await port.compact(request)
        except CompactionCancelled:
            self._session.emit(CompactionEnd(reason, None, True, False))
            return False
        except PiworkError as err:
            from piwork.core.compaction.compact import failure_message  # the engine, loaded when it runs

            self.last_error = failure_message(reason, err)
            self._session.emit(CompactionEnd(reason, None, False, False, self.last_error))
            return False
        finally:
            self._active = None
        self._session.replace_messages(outcome.messages)
        self._session.emit(CompactionEnd(reason, outcome.result, False, will_retry))
        return True

    async def manual(self, focus: str | None) -> bool:
        """``/compact [focus]``; the outcome arrives as ``compaction_end`` (``last_error`` on failure)."""
        self.manual_running = True
        try:
            return await self._run("manual", will_retry=False, focus=focus)
        finally:
            self.manual_running = False

    async def navigate(
        self,
        target_id: str,
        *,
        summarize: bool,
        focus: str | None,
        label: str | None,
        replace_instructions: bool | None = None,
        on_progress: Callable[[BranchSummaryProgress], None] | None = None,
    ) -> NavigationResult:
        from piwork.core.compaction.navigate import navigate_tree  # loaded when the leaf first moves

        tree = self._session.tree
        summarizer: Summarizer | None = self.summarizer_for() if summarize and self.summarizer_for else None
        cancel = self._nav_cancel = asyncio.Event()
        try:
            result = await navigate_tree(
                tree,
                target_id,
                summarize=summarize,
                custom_instructions=focus,
                replace_instructions=replace_instructions,
                label=label,
                summarizer=summarizer,
                settings=BranchSummarySettings.from_settings(self._session.settings),
                hooks=self.hooks,
                cancel=cancel,
                on_progress=on_progress,
                strict_pi=False,
            )
        finally:
            self._nav_cancel = None
        if not result.cancelled:
            context = await asyncio.to_thread(tree.build_context)  # reads the whole path
            self._session.replace_messages(context.messages)
            self._session.emit(TreeNavigated(result.new_leaf_id, result.old_leaf_id, result.summary_entry))
        return result
