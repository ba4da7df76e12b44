"""The context governor inside an AgentSession: per-request working sets, telemetry, settle-time work.

Before every provider call the governor may send a smaller working set (never touching the transcript or
the session file) and may withhold a request that would reach the pricing mark. Nothing is written while
the agent runs: once it has settled (run, retries and queued input done) this saves the sticky elisions as
a state-only ``piwork.governorState`` entry, writes the governor's durable compaction when the working set
is at the ceiling or a request was withheld, and after a withheld request continues the run once.
Host compaction (its three checkpoints and overflow recovery) is not changed by any of this.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from piwork.core.agent.events import (
    AgentEvent,
    BilledEvent,
    CompactionEnd,
    CompactionStart,
    ErrorNotice,
    GovernorEvent,
    Message,
    OccupancyEvent,
)
from piwork.core.agent.loop import CallRecord, RequestSetup
from piwork.core.compaction.settings import CompactionSettings
from piwork.core.context.budget import GovernorSettings, effective_marks
from piwork.core.context.contract import CONTRACT_CUSTOM_TYPE
from piwork.core.context.estimate import TokenEstimator
from piwork.core.context.governor import STATE_CUSTOM_TYPE, Governor, GovernorOutcome, RequestShape
from piwork.core.context.manifest_upkeep import ManifestUpkeep
from piwork.core.context.records import GovernorDecision, OccupancySample
from piwork.core.context.telemetry import ContextTelemetry
from piwork.core.errors import PiworkError
from piwork.core.llm.tokens import TokenCounter
from piwork.core.llm.types import Model, ToolSpec
from piwork.core.resources.system_prompt import PromptPart
from piwork.core.session.timestamps import js_date_ms
from piwork.core.session.tree import SessionTree
from piwork.core.tools.base import ToolRegistry
from piwork.core.usage import calculate_context_tokens

if TYPE_CHECKING:
    from piwork.core.compaction.summarize import Summarizer
    from piwork.core.context.xray import Xray

STILL_OVER = (
    "the working set is still at the pricing mark after compaction: compact now, start a fresh task, "
    "or send once anyway"
)

WITHHELD_UNCOMPACTED = (
    "the next request would reach the pricing mark and the working set could not be compacted: compact "
    "now, start a fresh task, or allow the pricing zone (piwork.contextGovernor.allowPricingZone)"
)


class GovernanceHost(Protocol):
    """What the governor needs from its session: the model, clock and compaction settings a request is
    shaped by, the prompt parts and tools an X-ray shows, the context and session tree it compacts and saves
    to (unless read-only), the summarizer its compaction uses, and events."""

    @property
    def model(self) -> Model | None: ...
    @property
    def now_ms(self) -> Callable[[], int]: ...
    @property
    def compaction_settings(self) -> CompactionSettings: ...
    @property
    def registry(self) -> ToolRegistry: ...
    @property
    def messages(self) -> list[Message]: ...
    @property
    def tree(self) -> SessionTree: ...
    @property
    def read_only_reason(self) -> str | None: ...
    def tool_names(self) -> list[str]: ...
    def system_prompt_parts(self) -> list[PromptPart]: ...
    def summarizer(self) -> Summarizer | None: ...
    def replace_messages(self, messages: list[Message]) -> None: ...
    def emit(self, event: AgentEvent) -> None: ...


class SessionGovernance:
    def __init__(
        self,
        session: GovernanceHost,
        settings: GovernorSettings,
        counter: TokenCounter | None = None,
        telemetry: ContextTelemetry | None = None,
        verifiers: Callable[[], Sequence[str]] = tuple,
        now_ms: Callable[[], int] | None = None,
        counter_for: Callable[[Model], TokenCounter] | None = None,
        manifest: ManifestUpkeep | None = None,
        project: Callable[[list[Message]], list[Message]] | None = None,
    ) -> None:
        self._session = session
        # the task's excluded parts replaced by markers: what the next request is built from
        self.project: Callable[[list[Message]], list[Message]] = project or (lambda messages: messages)
        self._manifest = manifest
        self._counter_for = counter_for
        model = session.model
        self._counted_model = (model.provider, model.id) if model is not None else None
        self._now_ms = now_ms or session.now_ms
        self.telemetry = telemetry or ContextTelemetry()
        self.verifiers = verifiers
        self.governor = Governor(settings, TokenEstimator(counter), verifiers, self._now_ms)
        self.last_outcome: GovernorOutcome | None = None
        self._last_shape: RequestShape | None = None
        self._withheld = False
        self._send_once = False
        self._contract_id: object = None
        # why the last run ended on a request it did not send (the pricing mark), None when it did not
        self.stopped: str | None = None
        self._restore()

    # ---- state -----------------------------------------------------------------------------------------

    def _restore(self) -> None:
        tree = self._session.tree
        state_found = contract_found = False
        for record in reversed(tree.path()):
            if record.type != "custom":
                continue
            body = tree.body(record)
            kind = body.get("customType") if isinstance(body, dict) else None
            if kind == STATE_CUSTOM_TYPE and not state_found:
                self.governor.restore(body.get("data"))
                state_found = True
            elif kind == CONTRACT_CUSTOM_TYPE and not contract_found:
                self._contract_id = record.id
                self.governor.set_boundary(js_date_ms(body.get("timestamp")), pending=False)
                contract_found = True
            if state_found and contract_found:
                break

    def _check_contract(self) -> None:
        """A new Task Contract entry (a new task or phase) is a boundary."""
        tree = self._session.tree
        for record in reversed(tree.path()):
            if record.type != "custom":
                continue
            body = tree.body(record)
            if isinstance(body, dict) and body.get("customType") == CONTRACT_CUSTOM_TYPE:
                if record.id != self._contract_id:
                    self._contract_id = record.id
                    self.governor.set_boundary(js_date_ms(body.get("timestamp")), pending=True)
                return

    def verifier_reused(self, receipt: Any) -> None:
        """The verifier gate answered a verifier command with a receipt instead of running it: a log row."""
        command = str(getattr(receipt, "command", ""))
        receipt_id = str(getattr(receipt, "id", ""))
        digest = str(getattr(receipt, "tree_digest", ""))[:12]
        detail = f"{command}: passed on this exact tree (receipt {receipt_id}, tree {digest})"
        self._log(
            GovernorDecision(
                time_ms=self._now_ms(),
                turn=self.governor.calls,
                decision="verifier-reused",
                detail=detail,
                tokenizer=self.governor.estimator.tokenizer,
            )
        )

    def xray(self, entry_ids: Sequence[str | None] | None = None) -> Xray:
        """The next request by source, with the governor's tokenizer and its per-message counts: the
        system prompt part by part (each context file apart, the skills index), each tool schema, and
        every message of the transcript (``entry_ids`` parallel to ``session.messages``, when known)."""
        session = self._session
        names = session.tool_names()
        tools = [ToolSpec(s.name, s.description, s.parameters) for s in session.registry.specs(names)]
        parts = session.system_prompt_parts()
        from piwork.core.context.xray import xray  # a view's question, never a run's

        return xray(parts, tools, self.project(session.messages), self.governor.estimator, entry_ids)

    def next_shape(self) -> RequestShape | None:
        """The shape of the next request: the last one's system prompt and tools on the current model
        (before any request: the prompt and tools the session would send now); None without a model."""
        model = self._session.model
        if model is None:
            return None
        reserve = self._session.compaction_settings.reserve_tokens
        last = self._last_shape
        if last is not None:
            return RequestShape(model, last.system_prompt, last.tools, reserve)
        session = self._session
        prompt = "".join(part.text for part in session.system_prompt_parts())
        tools = [
            ToolSpec(s.name, s.description, s.parameters)
            for s in session.registry.specs(session.tool_names())
        ]
        return RequestShape(model, prompt, tools, reserve)

    async def projected_tokens(self, messages: list[Message]) -> int | None:
        """The tokens of the request the governor would send next for ``messages`` (its best figure: the
        provider's last count with the estimate of what changed since), decided without committing to
        anything; None when the governor is off or there is no model. Host compaction weighs this, not
        the full transcript."""
        if not self.governor.settings.enabled:
            return None
        shape = self.next_shape()
        if shape is None:
            return None
        self._follow_model(shape.model)
        projected = self.project(messages)
        estimator = self.governor.estimator
        if any(estimator.known(message) is None for message in projected):
            await asyncio.to_thread(estimator.precount, projected)
        if not self.governor.prepared(projected):  # a long list scanned first: not on the event loop
            return (await asyncio.to_thread(self.governor.preview, projected, shape)).occupancy
        return self.governor.preview(projected, shape).occupancy

    def send_once_anyway(self) -> None:
        """The user chose to send the next request even though it reaches the pricing mark."""
        self._send_once = True

    # ---- per request ------------------------------------------------------------------------------------

    def _follow_model(self, model: Model) -> None:
        """A request on another model is counted with that model's tokenizer (when one is loaded)."""
        key = (model.provider, model.id)
        if self._counter_for is None or key == self._counted_model:
            return
        self._counted_model = key
        counter = self._counter_for(model)
        if counter.info != self.governor.estimator.counter.info:
            self.governor.estimator = TokenEstimator(counter)

    async def count_ahead(self, messages: list[Message], setup: RequestSetup) -> None:
        """Count in a worker thread the request's messages not counted yet, so the decision :meth:`shape`
        makes next, on the event loop (a window's GUI thread), finds every count made: a long session sent
        a prompt before its opening count ended would otherwise be counted there. The counts are the same
        wherever they are made, so the decision is too. A list the governor has not scanned yet (the
        first request of a reopened long session, one after a compaction) is also scanned there, by a
        preview of the decision, which keeps nothing but the scan, the counts and the elided copies."""
        self._follow_model(setup.model)
        estimator = self.governor.estimator
        projected = self.project(messages)
        if any(estimator.known(message) is None for message in projected):
            await asyncio.to_thread(estimator.precount, projected)
        if not self.governor.prepared(projected):
            self._check_contract()  # the boundary the decision will see
            reserve = self._session.compaction_settings.reserve_tokens
            shape = RequestShape(setup.model, setup.system_prompt, setup.tools, reserve)
            await asyncio.to_thread(self.governor.preview, projected, shape)

    def shape(self, messages: list[Message], setup: RequestSetup) -> list[Message] | None:
        """The working set of one request: the task's exclusions applied (their markers in place of the
        excluded parts), then the governor's decision on that list."""
        messages = self.project(messages)
        self._check_contract()
        self._follow_model(setup.model)
        reserve = self._session.compaction_settings.reserve_tokens
        shape = self._last_shape = RequestShape(setup.model, setup.system_prompt, setup.tools, reserve)
        outcome = self.last_outcome = self.governor.decide(messages, shape)
        if outcome.decision is not None:
            self._log(outcome.decision)
        self._occupancy(
            OccupancySample(
                self._now_ms(),
                outcome.sent_tokens,
                "estimate",
                self.governor.estimator.tokenizer,
                outcome.marks.window,
                outcome.transcript_tokens,
            )
        )
        if outcome.withhold and not self._send_once:
            self._withheld = True
            return None
        self._send_once = False
        return outcome.messages

    def on_call(self, record: CallRecord) -> None:
        """Billed traffic of a finished call; provider-reported occupancy of a good reply."""
        message = record.message
        usage = message.get("usage")
        if not isinstance(usage, dict):
            return
        if any(
            isinstance(usage.get(k), int | float) and usage.get(k) for k in ("input", "output", "cacheRead")
        ):
            sample = self.telemetry.add_billed(
                record.ended_ms, str(message.get("provider", "")), str(message.get("model", "")), usage
            )
            self._session.emit(BilledEvent(sample))
        tokens = calculate_context_tokens(usage)
        model = self._session.model
        if message.get("stopReason") not in ("error", "aborted") and math.isfinite(tokens) and tokens > 0:
            window = model.context_window if model is not None else 0
            self._occupancy(OccupancySample(record.ended_ms, int(tokens), "provider", "provider", window))

    def on_summary_usage(self, usage: dict[str, Any]) -> None:
        """Billed traffic of a summary call (a compaction or branch summary): billed like a reply, so
        the day's figures count it as the session's totals do."""
        if not any(
            isinstance(usage.get(k), int | float) and usage.get(k) for k in ("input", "output", "cacheRead")
        ):
            return
        model = self._session.model
        provider, model_id = (model.provider, model.id) if model is not None else ("", "")
        sample = self.telemetry.add_billed(self._now_ms(), provider, model_id, usage)
        self._session.emit(BilledEvent(sample))

    def _occupancy(self, sample: OccupancySample) -> None:
        self.telemetry.add_occupancy(sample)
        self._session.emit(OccupancyEvent(sample))

    def _log(self, decision: GovernorDecision) -> None:
        self.telemetry.add_governor(decision)
        self._session.emit(GovernorEvent(decision))

    # ---- settled ------------------------------------------------------------------------------------------

    async def settle(self, continue_once: Callable[[], Awaitable[None]]) -> None:
        """After the run, its retries and queued input: durable work, then at most one continuation."""
        session = self._session
        if session.read_only_reason is not None:
            return
        # compaction.enabled: false switches off automatic compaction, the governor's as well as the
        # host's; /context compact still compacts when asked
        automatic = session.compaction_settings.enabled
        self.stopped = None
        if self._withheld:
            self._withheld = False
            if not automatic:
                self._log(self._still_over())
            elif await self.compact():
                await continue_once()
                if self._withheld:
                    self._withheld = False
                    self._log(self._still_over())
            else:
                self.stopped = WITHHELD_UNCOMPACTED
        elif automatic and self._at_ceiling():
            await self.compact(automatic=True)
        self.save_state()
        await self.keep_manifest()

    async def keep_manifest(self) -> None:
        """The task's manifest re-checked after a run that touched files (saved only when it changed)."""
        if self._manifest is None:
            return
        try:
            await self._manifest.settle(self._session.messages)
        except (OSError, PiworkError) as err:
            self._session.emit(
                ErrorNotice(f"piwork could not save the context manifest ({err}).", "session file")
            )

    def _still_over(self) -> GovernorDecision:
        self.stopped = STILL_OVER
        last = self.last_outcome
        return GovernorDecision(
            time_ms=self._now_ms(),
            turn=self.governor.calls,
            decision="context-limit",
            detail=STILL_OVER,
            occupancy_before=last.transcript_tokens if last is not None else 0,
            occupancy_after=last.sent_tokens if last is not None else 0,
            tokenizer=self.governor.estimator.tokenizer,
        )

    def _at_ceiling(self) -> bool:
        shape, last = self._last_shape, self.last_outcome
        if shape is None or last is None or not self.governor.settings.enabled:
            return False
        estimator = self.governor.estimator
        transcript = estimator.request(shape.system_prompt, shape.tools, self.project(self._session.messages))
        working_set = transcript - last.elided_tokens
        marks = effective_marks(shape.model, self.governor.settings, shape.reserve_tokens)
        return working_set >= marks.ceiling

    async def compact(self, *, automatic: bool = False) -> bool:
        """The governor's durable compaction (also ``/context compact``); True when an entry was written.
        An ``automatic`` one with nothing to compact (a session too short to cut, just compacted) does
        nothing and says nothing."""
        # the compaction engine, loaded when the governor first compacts
        from piwork.core.compaction.compact import failure_message, read_and_plan
        from piwork.core.context.durable import governor_compaction

        session = self._session
        planned = None
        if automatic:
            try:
                planned = await asyncio.to_thread(read_and_plan, session.tree, session.compaction_settings)
            except (PiworkError, OSError):
                planned = None
            else:
                if planned[1] is None:
                    return False
        session.emit(CompactionStart("governor"))
        try:
            result = await governor_compaction(
                session.tree,
                session.compaction_settings,
                session.summarizer(),
                tuple(self.verifiers()),
                planned,
            )
        except (PiworkError, OSError) as err:
            session.emit(CompactionEnd("governor", None, False, False, failure_message("governor", err)))
            return False
        context = await asyncio.to_thread(session.tree.build_context)
        session.replace_messages(context.messages)
        session.emit(CompactionEnd("governor", result.to_json(), False, False))
        return True

    def save_state(self) -> None:
        data = self.governor.state_to_save()
        if data is None:
            return
        try:
            self._session.tree.append_custom_entry(STATE_CUSTOM_TYPE, data)
        except (OSError, PiworkError) as err:
            self._session.emit(
                ErrorNotice(f"piwork could not save the context governor's state ({err}).", "session file")
            )
            return
        self.governor.mark_saved()
