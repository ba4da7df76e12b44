"""The adaptive governor: before each provider call, maybe send a smaller working set.

It works on the agent-message list the next request would use and never changes the transcript: elided
tool results are copies with a stub as content, kept per tool-call id so later requests see the very same
objects (their prefix stays append-only for the provider's cache). The procedure, per call:

1. disabled → send the list as is;
2. an orphan in the list → fail closed (send it unmodified, forget sticky elisions);
3. re-apply sticky elisions; 4. no trigger → send that;
5. elide every eligible candidate at once; 6. an orphan, a changed group count or a changed protected
   tail → fail closed (send the previous state);
7-8. accept only when the saving reaches ``min(20K, max(8K, ceil(15% occupancy)))`` — or any saving when
   the request reaches the ceiling (forced mode) — else send the previous state. No model is ever asked
   to summarise the difference away.

The ``pressure`` and ``ceiling`` triggers compare the working set with sticky elisions applied (W1), so
a projection that brought it under the mark quiets the trigger until it grows again; the savings
threshold is taken from the transcript occupancy (W0). After the decision, a request still at the pricing mark is withheld (``context-limit``) unless the
settings allow the pricing zone; one between ceiling and pricing mark is sent and logged ``over-ceiling``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from piwork.core.context.budget import (
    MIN_ELIDE_TOKENS,
    RESERVE_TOKENS,
    TOOL_ROUNDS_TRIGGER,
    GovernorSettings,
    Marks,
    effective_marks,
)
from piwork.core.context.elision import (
    WRITE_TOOLS,
    CandidateKind,
    call_shape,
    classify,
    command_of,
    content_digest,
    elided_copy,
    main_argument,
    original_size,
    path_key,
    stub_text,
)
from piwork.core.context.estimate import TokenEstimator
from piwork.core.context.groups import is_failed_assistant, partition
from piwork.core.context.records import Decision, ElidedItem, GovernorDecision, ReasonCode, Trigger
from piwork.core.llm.types import Model, ToolSpec
from piwork.core.messages import Message

STATE_CUSTOM_TYPE = "piwork.governorState"
# custom messages that open a task or phase (the context bundle opens a task)
BOUNDARY_CUSTOM_TYPES = frozenset({"piwork.contextBundle"})


@dataclass(frozen=True)
class RequestShape:
    """What the next request holds besides the messages."""

    model: Model
    system_prompt: str
    tools: Sequence[ToolSpec] = ()
    reserve_tokens: int = RESERVE_TOKENS


@dataclass(frozen=True)
class GovernorOutcome:
    messages: list[Message]  # what to send (unless ``withhold``)
    decision: GovernorDecision | None  # None: nothing worth a log row happened
    transcript_tokens: int  # the unmodified list with system prompt and tool schemas
    sent_tokens: int  # the working set actually sent
    marks: Marks
    withhold: bool = False  # context-limit: do not send this request

    @property
    def elided_tokens(self) -> int:
        return self.transcript_tokens - self.sent_tokens


@dataclass
class _Candidate:
    index: int
    call_id: str
    tool: str
    argument: str
    kind: CandidateKind
    reason: ReasonCode | None
    keep: bool  # a keep rule applies (unresolved error, latest verifier run, too small)


@dataclass
class _Call:
    tool: str
    arguments: object


@dataclass(frozen=True)
class _CallInfo:
    tool: str
    arguments: object
    base_kind: CandidateKind | None  # without the verifier commands, which may change
    argument: str
    shape: str
    path: str | None
    command: str


@dataclass
class Governor:
    settings: GovernorSettings = field(default_factory=GovernorSettings)
    estimator: TokenEstimator = field(default_factory=TokenEstimator)
    verifiers: Callable[[], Sequence[str]] = tuple
    now_ms: Callable[[], int] = field(default=lambda: int(time.time() * 1000))
    # how an elided copy is made (a test can inject a faulty one to exercise the candidate check)
    elide: Callable[[Message, str], Message] = elided_copy

    def __post_init__(self) -> None:
        self._sticky: dict[str, ReasonCode | None] = {}  # tool-call id -> reason (None: restored)
        self._copies: dict[str, tuple[Message, Message]] = {}  # call id -> (original, elided copy)
        self._digests: dict[int, tuple[Message, str]] = {}
        self._infos: dict[str, _CallInfo] = {}
        self._assistant_calls: dict[int, tuple[Message, dict[str, _Call]]] = {}
        self._seen_results: set[str] = set()
        self._seen_digests: set[str] = set()
        self._boundary_ms: float | None = None
        self._boundary_pending = False
        self._last_projection_ms: float = 0.0
        self._saved: tuple[str, ...] = ()
        self.calls = 0
        self.log: list[GovernorDecision] = []

    # ---- sticky state --------------------------------------------------------------------------------

    @property
    def sticky_ids(self) -> tuple[str, ...]:
        return tuple(self._sticky)

    def restore(self, data: object) -> None:
        """Continue with the elisions of a ``piwork.governorState`` entry's ``data``."""
        ids = data.get("toolCallIds") if isinstance(data, dict) else None
        if not isinstance(ids, list):
            return
        self._sticky = {i: None for i in ids if isinstance(i, str)}
        self._saved = tuple(self._sticky)

    def state_to_save(self) -> dict[str, object] | None:
        """The state entry's ``data`` when it changed since the last save (tool-call ids only)."""
        current = tuple(self._sticky)
        if current == self._saved:
            return None
        return {"version": 1, "toolCallIds": list(current)}

    def mark_saved(self) -> None:
        self._saved = tuple(self._sticky)

    def set_boundary(self, at_ms: float, *, pending: bool = True) -> None:
        """A task or phase started at ``at_ms``: results before it are ``earlier-phase`` from now on, and
        (``pending``) the next call is the first after a boundary."""
        self._boundary_ms = at_ms
        self._boundary_pending = pending

    # ---- the decision --------------------------------------------------------------------------------

    def decide(self, messages: list[Message], shape: RequestShape) -> GovernorOutcome:
        self.calls += 1
        est = self.estimator
        marks = effective_marks(shape.model, self.settings, shape.reserve_tokens)
        base = est.system_prompt(shape.system_prompt) + est.tools(shape.tools)
        occupancy = base + est.messages(messages)
        if not self.settings.enabled:
            return GovernorOutcome(messages, None, occupancy, occupancy, marks)

        part0 = partition(messages)
        if not part0.ok:
            self._sticky.clear()
            detail = "transcript orphan: " + part0.orphans[0].describe()
            return self._finish(messages, "fail-closed", detail, (), occupancy, occupancy, 0, 0, (), marks)

        tail_start = self._tail_start(part0.groups)
        calls = self._calls(messages)
        verifiers = tuple(v.strip() for v in self.verifiers())
        if any(reason is None for reason in self._sticky.values()):
            self._resolve_restored(messages, tail_start, calls, verifiers)
        w1 = self._with_sticky(messages, tail_start, calls, verifiers)
        est1 = occupancy if w1 is messages else base + est.messages(w1)
        triggers = self._triggers(messages, est1, marks)
        if not triggers:
            return self._zone_only(w1, occupancy, est1, marks)

        candidates = self._candidates(messages, tail_start, calls, triggers, verifiers)
        eligible = [
            c for c in candidates if c.reason is not None and not c.keep and c.call_id not in self._sticky
        ]
        required = self.settings.required_savings(occupancy)
        if not eligible:
            return self._finish(
                w1, "no-op", "nothing to elide", triggers, occupancy, est1, 0, required, (), marks
            )

        w2 = list(w1)
        items: list[ElidedItem] = []
        for c in eligible:
            assert c.reason is not None
            w2[c.index] = self._elided(messages[c.index], c, c.reason)
            items.append(ElidedItem(c.call_id, c.tool, c.argument, est.message(messages[c.index]), c.reason))
        # Elision replaces toolResult content only, so the groups stay those of W0 exactly when every
        # replaced message kept its role and tool-call id and none lies in the protected tail.
        if not _structure_kept(messages, w2, tail_start):
            return self._finish(
                w1, "fail-closed", "candidate", triggers, occupancy, est1, 0, required, (), marks
            )

        est2 = base + est.messages(w2)
        savings = est1 - est2
        forced = "ceiling" in triggers
        if savings >= required or (forced and savings > 0):
            for item in items:
                self._sticky[item.tool_call_id] = item.reason
            self._last_projection_ms = _latest_time(messages)
            decision: Decision = "projected" if savings >= required else "forced"
            return self._finish(
                w2, decision, "", triggers, occupancy, est2, savings, required, tuple(items), marks
            )
        return self._finish(
            w1, "no-op", "below threshold", triggers, occupancy, est1, savings, required, (), marks
        )

    # ---- steps -----------------------------------------------------------------------------------------

    def _tail_start(self, groups: Sequence[object]) -> int:
        protected = self.settings.min_protected_groups
        if len(groups) <= protected:
            return 0
        group = groups[len(groups) - protected]
        return int(getattr(group, "start", 0))

    def _resolve_restored(
        self, messages: list[Message], tail_start: int, calls: dict[str, _Call], verifiers: tuple[str, ...]
    ) -> None:
        """Reasons for elisions restored from the session: the one that holds now, else ``aged``."""
        reasons = {
            c.call_id: c.reason
            for c in self._candidates(messages, tail_start, calls, ("pressure",), verifiers)
        }
        for call_id, reason in self._sticky.items():
            if reason is None:
                self._sticky[call_id] = reasons.get(call_id) or "aged"

    def _with_sticky(
        self, messages: list[Message], tail_start: int, calls: dict[str, _Call], verifiers: tuple[str, ...]
    ) -> list[Message]:
        if not self._sticky:
            return messages
        out = list(messages)
        copies, sticky = self._copies, self._sticky
        for i in range(tail_start):
            message = out[i]
            if message.get("role") != "toolResult":
                continue
            call_id = message.get("toolCallId")
            if not isinstance(call_id, str) or call_id not in sticky:
                continue
            cached = copies.get(call_id)
            if cached is not None and cached[0] is message:
                out[i] = cached[1]
                continue
            call = calls.get(call_id)
            tool = call.tool if call is not None else str(message.get("toolName", ""))
            info = self._info(call_id, tool, call.arguments if call is not None else {})
            kind = _kind(info, verifiers) or "read"
            candidate = _Candidate(i, call_id, tool, info.argument, kind, None, False)
            out[i] = self._elided(message, candidate, sticky[call_id] or "aged")
        return out

    def _info(self, call_id: str, tool: str, arguments: object) -> _CallInfo:
        """What the governor needs to know about a tool call, computed once per call."""
        cached = self._infos.get(call_id)
        if cached is not None and cached.arguments is arguments and cached.tool == tool:
            return cached
        command = command_of(arguments) if tool == "bash" else ""
        info = _CallInfo(
            tool,
            arguments,
            classify(tool, arguments),
            main_argument(tool, arguments),
            call_shape(tool, arguments),
            path_key(arguments),
            command,
        )
        self._infos[call_id] = info
        return info

    def _calls(self, messages: Sequence[Message]) -> dict[str, _Call]:
        calls: dict[str, _Call] = {}
        cache = self._assistant_calls
        for message in messages:
            if message.get("role") != "assistant":
                continue
            cached = cache.get(id(message))
            if cached is None or cached[0] is not message:
                cached = (message, _calls_in(message))
                cache[id(message)] = cached
            calls.update(cached[1])
        return calls

    def _elided(self, message: Message, c: _Candidate, reason: ReasonCode) -> Message:
        cached = self._copies.get(c.call_id)
        if cached is not None and cached[0] is message:
            return cached[1]
        size = original_size(message, self.estimator.message(message))
        copy = self.elide(message, stub_text(c.tool, c.argument, c.kind, size, reason))
        self._copies[c.call_id] = (message, copy)
        return copy

    def _digest(self, message: Message) -> str:
        cached = self._digests.get(id(message))
        if cached is not None and cached[0] is message:
            return cached[1]
        digest = content_digest(message)
        self._digests[id(message)] = (message, digest)
        return digest

    def _triggers(self, messages: list[Message], est1: int, marks: Marks) -> tuple[Trigger, ...]:
        found: list[Trigger] = []
        if est1 >= marks.pressure:
            found.append("pressure")
        bundle_ms: float | None = None
        rounds = 0
        repeat = False
        since = self._last_projection_ms
        for m in messages:
            role = m.get("role")
            if role == "toolResult":
                call_id = str(m.get("toolCallId", ""))
                digest = self._digest(m)
                if call_id not in self._seen_results:
                    self._seen_results.add(call_id)
                    if digest in self._seen_digests:
                        repeat = True
                self._seen_digests.add(digest)
            elif role == "assistant":
                if _time(m) > since and not is_failed_assistant(m) and self._has_calls(m):
                    rounds += 1
            elif role == "custom" and m.get("customType") in BOUNDARY_CUSTOM_TYPES:
                stamp = _time(m)
                bundle_ms = stamp if bundle_ms is None else max(bundle_ms, stamp)
        if bundle_ms is not None and (self._boundary_ms is None or bundle_ms > self._boundary_ms):
            self._boundary_ms = bundle_ms
            self._boundary_pending = True
        if self._boundary_pending:
            found.append("boundary")
            self._boundary_pending = False  # only the first call after the boundary
        if rounds >= TOOL_ROUNDS_TRIGGER:
            found.append("toolRounds")
        if repeat:
            found.append("repeat")
        if est1 >= marks.ceiling:
            found.append("ceiling")
        return tuple(found)

    def _has_calls(self, message: Message) -> bool:
        cached = self._assistant_calls.get(id(message))
        if cached is not None and cached[0] is message:
            return bool(cached[1])
        return bool(_calls_in(message))

    def _candidates(
        self,
        messages: list[Message],
        tail_start: int,
        calls: dict[str, _Call],
        triggers: tuple[Trigger, ...],
        verifiers: tuple[str, ...],
    ) -> list[_Candidate]:
        """Candidates outside the protected tail with their reason (or None) and keep rules, oldest first."""
        aged = "pressure" in triggers or "ceiling" in triggers
        later_read_paths: set[str] = set()
        later_written: set[str] = set()
        later_shapes: set[str] = set()
        later_digests: set[str] = set()
        later_ok_shapes: set[str] = set()
        later_ok_commands: set[str] = set()
        verifier_seen: set[str] = set()
        out: list[_Candidate] = []
        for i in range(len(messages) - 1, -1, -1):
            message = messages[i]
            if message.get("role") != "toolResult":
                continue
            call_id = message.get("toolCallId")
            call = calls.get(call_id) if isinstance(call_id, str) else None
            if call is None or not isinstance(call_id, str):
                continue
            info = self._info(call_id, call.tool, call.arguments)
            tool, shape, path, command = info.tool, info.shape, info.path, info.command
            digest = self._digest(message)
            failed = message.get("isError") is True
            kind = _kind(info, verifiers)
            if i < tail_start and kind is not None:
                reason: ReasonCode | None = None
                if (
                    tool == "read"
                    and path is not None
                    and (path in later_read_paths or path in later_written)
                ) or (tool != "read" and kind == "read" and shape in later_shapes):
                    reason = "superseded"
                elif digest in later_digests:
                    reason = "repeated"
                elif self._boundary_ms is not None and _time(message) < self._boundary_ms:
                    reason = "earlier-phase"
                elif kind == "log" and command and command in later_ok_commands:
                    reason = "resolved-log"
                elif aged:
                    reason = "aged"
                keep = (
                    (failed and shape not in later_ok_shapes)
                    or (command in verifiers and command not in verifier_seen)
                    or self.estimator.message(message) < MIN_ELIDE_TOKENS
                )
                out.append(_Candidate(i, call_id, tool, info.argument, kind, reason, keep))
            if tool == "read" and path is not None:
                later_read_paths.add(path)
            if tool in WRITE_TOOLS and path is not None and not failed:
                later_written.add(path)
            later_shapes.add(shape)
            later_digests.add(digest)
            if not failed:
                later_ok_shapes.add(shape)
                if command:
                    later_ok_commands.add(command)
            if command in verifiers:
                verifier_seen.add(command)
        out.reverse()
        return out

    def _zone_only(self, sent: list[Message], occupancy: int, est_sent: int, marks: Marks) -> GovernorOutcome:
        outcome = self._finish(sent, None, "", (), occupancy, est_sent, 0, 0, (), marks)
        return outcome

    def _finish(
        self,
        sent: list[Message],
        decision: Decision | None,
        detail: str,
        triggers: tuple[Trigger, ...],
        occupancy: int,
        est_sent: int,
        savings: int,
        required: int,
        items: tuple[ElidedItem, ...],
        marks: Marks,
    ) -> GovernorOutcome:
        withhold = False
        if marks.pricing is not None and est_sent >= marks.pricing and not self.settings.allow_pricing_zone:
            withhold = True
            detail = _joined(decision, detail, "the request would reach the pricing mark")
            decision = "context-limit"
        elif est_sent >= marks.ceiling:
            detail = _joined(decision, detail, "sent above the ceiling")
            decision = "over-ceiling"
        record: GovernorDecision | None = None
        if decision is not None:
            sticky = sum(
                1 for m in sent if m.get("role") == "toolResult" and m.get("toolCallId") in self._sticky
            )
            record = GovernorDecision(
                time_ms=self.now_ms(),
                turn=self.calls,
                decision=decision,
                detail=detail,
                triggers=triggers,
                occupancy_before=occupancy,
                occupancy_after=est_sent,
                savings=savings,
                required=required,
                elided=items,
                sticky=sticky - len(items),
                tokenizer=self.estimator.tokenizer,
            )
            self.log.append(record)
        return GovernorOutcome(sent, record, occupancy, est_sent, marks, withhold)

    def record(self, decision: GovernorDecision) -> GovernorDecision:
        """Log a decision made elsewhere (the verifier gate's ``verifier-reused``)."""
        decision = replace(decision, turn=decision.turn or self.calls)
        self.log.append(decision)
        return decision


def _joined(decision: Decision | None, detail: str, why: str) -> str:
    before = f"{decision}: {detail}" if decision and detail else decision or ""
    return f"{why} ({before})" if before else why


def _time(message: Message) -> float:
    value = message.get("timestamp")
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


def _latest_time(messages: Sequence[Message]) -> float:
    return max((_time(m) for m in messages), default=0.0)


def _calls_in(message: Message) -> dict[str, _Call]:
    content = message.get("content")
    if not isinstance(content, list):
        return {}
    return {
        block["id"]: _Call(str(block.get("name", "")), block.get("arguments"))
        for block in content
        if isinstance(block, dict) and block.get("type") == "toolCall" and isinstance(block.get("id"), str)
    }


def _kind(info: _CallInfo, verifiers: tuple[str, ...]) -> CandidateKind | None:
    if info.command and info.command in verifiers:
        return "log"
    return info.base_kind


def _structure_kept(original: Sequence[Message], projected: Sequence[Message], tail_start: int) -> bool:
    for i in range(len(original)):
        a, b = original[i], projected[i]
        if a is b:
            continue
        if i >= tail_start or a.get("role") != b.get("role") or a.get("toolCallId") != b.get("toolCallId"):
            return False
        if "toolCallId" not in b:
            return False
    return len(original) == len(projected)
