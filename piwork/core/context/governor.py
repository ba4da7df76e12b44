"""The adaptive governor: before each provider call, maybe send a smaller working set.

It works on the agent-message list the next request would use and never changes the transcript: elided
tool results are copies with a stub as content, kept per tool-call id so later requests see the very same
objects (their prefix stays append-only for the provider's cache). The procedure, per call:

1. disabled → send the list as is;
2. an orphan in the list → fail closed (send it unmodified, forget sticky elisions);
3. re-apply sticky elisions; 4. no trigger → send that;
5. elide eligible candidates in one step, oldest first, only until the request is under the target
   (half the pressure mark) and the saving is worth it, so recent reads survive; 6. an orphan, a changed
   group count or a changed protected tail → fail closed (send the previous state);
7-8. accept only when the saving reaches ``min(20K, max(min(8K, ceil(0.1 U)), ceil(15% occupancy)))`` —
   or any saving when the request reaches the ceiling (forced mode), or at the first call after a task or
   phase boundary when results of the earlier phase leave (the working set is formed anew for the new
   phase, as the scout → plan → implement → verify policy asks) — else send the previous state. No
   model is ever asked to summarise the difference away.

The ``pressure`` and ``ceiling`` triggers measure the working set with sticky elisions applied (W1), by
the best figure there is: the provider's count of the last request plus the estimate of what changed since
(the estimate alone before any reply reported usage). A projection that brought it under the mark quiets
the trigger until it grows again; the savings threshold is taken from the transcript occupancy (W0). After
the decision, a request still at the pricing mark is withheld (``context-limit``) unless the settings allow
the pricing zone; one between ceiling and pricing mark is sent and logged ``over-ceiling``.

:meth:`Governor.preview` makes the same decision without committing to it, so host compaction can judge
the request that will actually be sent.
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
from piwork.core.context.elision import CandidateKind, elided_copy, original_size, stub_text
from piwork.core.context.estimate import TokenEstimator
from piwork.core.context.records import (
    Decision,
    ElidedItem,
    GovernorDecision,
    OccupancySource,
    ReasonCode,
    Trigger,
)
from piwork.core.context.scan import BOUNDARY_CUSTOM_TYPES, CallInfo, TranscriptScan
from piwork.core.llm.normalize import MISSING_RESULT_TEXT
from piwork.core.llm.types import Model, ToolSpec
from piwork.core.messages import Message
from piwork.core.tools.registry import tool_facts

STATE_CUSTOM_TYPE = "piwork.governorState"
PREPARED_GROWTH = 64  # messages a decision folds in itself; more are scanned ahead (Governor.prepared)
__all__ = ["BOUNDARY_CUSTOM_TYPES", "STATE_CUSTOM_TYPE", "Governor", "GovernorOutcome", "RequestShape"]


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
    occupancy: int = -1  # best figure of what is sent (provider-corrected); -1: ``sent_tokens``
    source: OccupancySource = "estimate"

    def __post_init__(self) -> None:
        if self.occupancy < 0:
            object.__setattr__(self, "occupancy", self.sent_tokens)

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
        self._scan = TranscriptScan(self.estimator)
        self._seen_results: set[str] = set()
        self._seen_digests: set[str] = set()
        self._boundary_ms: float | None = None
        self._boundary_pending = False
        self._last_projection_ms: float = 0.0
        self._rounds: tuple[float, int, int] = (0.0, 0, 0)  # (since, assistant rounds scanned, count)
        self._saved: tuple[str, ...] = ()
        self._repeat_cursor = 0  # results of the scan already looked at for the repeat trigger
        self._repairs: dict[int, tuple[Message, list[Message]]] = {}  # id(message) -> results after it
        self._sent: dict[int, int] = {}  # message count of a sent request -> its estimate (with W1 then)
        self.calls = 0
        self.log: list[GovernorDecision] = []

    def detached(self) -> Governor:
        """A governor with this one's sticky elisions and boundary but state of its own: a view may
        :meth:`preview` with it on another thread while this one keeps deciding."""
        other = Governor(self.settings, self.estimator, self.verifiers, self.now_ms, self.elide)
        other._sticky = dict(self._sticky)
        other._boundary_ms = self._boundary_ms
        other._last_projection_ms = self._last_projection_ms
        return other

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

    def _scanned(self, messages: list[Message]) -> TranscriptScan:
        """The scan of ``messages``, extended by what was appended (started over when the list was
        replaced or the tokenizer changed)."""
        scan = self._scan
        if scan.estimator is not self.estimator or not scan.extended_by(messages):
            scan = self._scan = TranscriptScan(self.estimator)
            self._rounds = (0.0, 0, 0)
            self._repeat_cursor = 0
            self._sent.clear()
        scan.update(messages)
        return scan

    def prepared(self, messages: list[Message]) -> bool:
        """Whether a decision on ``messages`` has little left to fold in (the list extends the one scanned
        by a few messages). When not, a host runs :meth:`preview` in a worker thread first — while nothing
        else decides with this governor — so the decision on its event loop finds the scan, the counts
        and the elided copies made (the first decision on a long session that was just opened)."""
        scan = self._scan
        return (
            scan.estimator is self.estimator
            and len(messages) - len(scan.messages) <= PREPARED_GROWTH
            and scan.extended_by(messages)
        )

    def preview(self, messages: list[Message], shape: RequestShape) -> GovernorOutcome:
        """The decision :meth:`decide` would make now, without keeping anything of it (no sticky
        elision, no log row, no trigger used up)."""
        return self.decide(messages, shape, commit=False)

    def decide(self, messages: list[Message], shape: RequestShape, *, commit: bool = True) -> GovernorOutcome:
        outcome = self._decide(messages, shape, commit)
        if commit and not outcome.withhold:
            sent = self._sent
            sent[len(messages)] = outcome.sent_tokens
            while len(sent) > 16:
                del sent[next(iter(sent))]
        return outcome

    def _correction(
        self, sent: list[Message], scan: TranscriptScan, est_sent: int
    ) -> tuple[int, OccupancySource]:
        """Provider count minus estimate for the request ``sent`` (estimated ``est_sent``): the count of
        the last reply's request, with what changed since by estimate. (0, estimate) before any usage.
        The count is believed whether it is above or below the estimate, as host compaction believes it
        (a real tokenizer can count far more or far fewer tokens than chars/4)."""
        k = scan.usage_at
        if k is None or k >= len(sent):
            return 0, "estimate"
        est = self.estimator
        recorded = self._sent.get(k)
        if recorded is not None:
            estimated = recorded + est.message(sent[k])
        else:  # not sent by this governor (a reopened session): assume the elisions of now
            estimated = est_sent - sum(est.message(m) for m in sent[k + 1 :])
        return scan.usage_tokens - estimated, "provider"

    def _repaired(self, messages: list[Message]) -> list[Message]:
        """``messages`` with a synthetic error result after each tool call a crash left unanswered — the
        result the request converter would add anyway — so such a call does not make every later request
        fail closed. The same result objects every time, so the list stays append-only."""
        if not self._repairs:
            return messages
        out: list[Message] = []
        for message in messages:
            out.append(message)
            added = self._repairs.get(id(message))
            if added is not None and added[0] is message:
                out.extend(added[1])
        return out

    def _repair(self, messages: list[Message], scan: TranscriptScan) -> bool:
        """Record repairs for the unanswered tool calls of closed groups; False when there is an orphan
        that cannot be repaired (a result without its call, a call of the group still open)."""
        orphans = scan.all_orphans()
        last_start = scan.group_start(scan.group_count() - 1) if scan.group_count() else 0
        if not orphans or any(o.kind != "call" or o.index >= last_start for o in orphans):
            return False
        for orphan in orphans:
            opener = scan.messages[orphan.index]
            g = scan.group_starts.index(orphan.index)
            end = scan.group_start(g + 1) - 1
            after = scan.messages[end]
            name = scan.infos[orphan.tool_call_id].tool if orphan.tool_call_id in scan.infos else ""
            synthetic: Message = {
                "role": "toolResult",
                "toolCallId": orphan.tool_call_id,
                "toolName": name,
                "content": [{"type": "text", "text": MISSING_RESULT_TEXT}],
                "isError": True,
                "timestamp": opener.get("timestamp", 0),
            }
            entry = self._repairs.setdefault(id(after), (after, []))
            if entry[0] is not after:
                entry = self._repairs[id(after)] = (after, [])
            entry[1].append(synthetic)
        return True

    def _decide(self, messages: list[Message], shape: RequestShape, commit: bool) -> GovernorOutcome:
        if commit:
            self.calls += 1
        est = self.estimator
        marks = effective_marks(shape.model, self.settings, shape.reserve_tokens)
        base = est.system_prompt(shape.system_prompt) + est.tools(shape.tools)
        messages = self._repaired(messages)
        scan = self._scanned(messages)
        if scan.orphans and self._repair(messages, scan):
            messages = self._repaired(messages)
            scan = self._scanned(messages)
        occupancy = base + scan.tokens
        if not self.settings.enabled:
            return GovernorOutcome(messages, None, occupancy, occupancy, marks)

        orphans = scan.all_orphans()
        if orphans:
            if commit:
                self._sticky.clear()
            detail = "transcript orphan: " + orphans[0].describe()
            correction, source = self._correction(messages, scan, occupancy)
            return self._finish(
                messages,
                "fail-closed",
                detail,
                (),
                occupancy,
                occupancy,
                0,
                0,
                (),
                marks,
                correction,
                source,
                commit,
            )

        tail_start = self._tail_start(scan)
        verifiers = tuple(v.strip() for v in self.verifiers())
        if any(reason is None for reason in self._sticky.values()):
            self._resolve_restored(scan, tail_start, verifiers)
        w1, replaced, saved1 = self._with_sticky(messages, scan, tail_start, verifiers)
        est1 = occupancy - saved1
        correction, source = self._correction(w1, scan, est1)
        occ1 = est1 + correction

        def finish(
            sent: list[Message],
            decision: Decision | None,
            detail: str,
            est_sent: int,
            savings: int = 0,
            items: tuple[ElidedItem, ...] = (),
        ) -> GovernorOutcome:
            return self._finish(
                sent,
                decision,
                detail,
                triggers,
                occupancy,
                est_sent,
                savings,
                required,
                items,
                marks,
                correction,
                source,
                commit,
            )

        required = 0
        triggers = self._triggers(scan, occ1, marks, commit)
        if not triggers:
            return finish(w1, None, "", est1)

        candidates = self._candidates(scan, tail_start, triggers, verifiers)
        eligible = [
            c for c in candidates if c.reason is not None and not c.keep and c.call_id not in self._sticky
        ]
        required = self.settings.required_savings(occupancy, marks.compaction_threshold)
        if not eligible:
            return finish(w1, "no-op", "nothing to elide", est1)

        # graded: the oldest first, only until the request is under the target and the saving is worth it
        target = marks.target
        w2 = list(w1)
        items: list[ElidedItem] = []
        changed = list(replaced)
        savings = 0
        for c in eligible:
            if occ1 - savings < target and savings >= required:
                break
            assert c.reason is not None
            original = messages[c.index]
            copy = w2[c.index] = self._elided(original, c, c.reason)
            tokens = est.message(original)
            savings += tokens - est.message(copy)
            items.append(ElidedItem(c.call_id, c.tool, c.argument, tokens, c.reason))
            changed.append(c.index)
        # Elision replaces toolResult content only, so the groups stay those of W0 exactly when every
        # replaced message kept its role and tool-call id and none lies in the protected tail.
        if not _structure_kept(messages, w2, changed, tail_start):
            return finish(w1, "fail-closed", "candidate", est1)

        est2 = est1 - savings
        forced = "ceiling" in triggers
        # the first call after a task or phase boundary forms the working set anew for the new phase:
        # what the earlier phase read leaves (oldest first, as graded) even when the saving is small
        reformed = "boundary" in triggers and any(item.reason == "earlier-phase" for item in items)
        if savings >= required or (forced and savings > 0) or reformed:
            if commit:
                for item in items:
                    self._sticky[item.tool_call_id] = item.reason
                self._last_projection_ms = scan.latest_time
            decision: Decision = "projected" if savings >= required or reformed else "forced"
            detail = "formed anew at the boundary" if savings < required and reformed else ""
            return finish(w2, decision, detail, est2, savings, tuple(items))
        return finish(w1, "no-op", "below threshold", est1, savings)

    # ---- steps -----------------------------------------------------------------------------------------

    def _tail_start(self, scan: TranscriptScan) -> int:
        protected = self.settings.min_protected_groups
        count = scan.group_count()
        if count <= protected:
            return 0
        return scan.group_start(count - protected)

    def _resolve_restored(self, scan: TranscriptScan, tail_start: int, verifiers: tuple[str, ...]) -> None:
        """Reasons for elisions restored from the session: the one that holds now, else ``aged``."""
        reasons = {
            c.call_id: c.reason for c in self._candidates(scan, tail_start, ("pressure",), verifiers, True)
        }
        for call_id, reason in self._sticky.items():
            if reason is None:
                self._sticky[call_id] = reasons.get(call_id) or "aged"

    def _with_sticky(
        self, messages: list[Message], scan: TranscriptScan, tail_start: int, verifiers: tuple[str, ...]
    ) -> tuple[list[Message], list[int], int]:
        """W1: the sticky elisions outside the protected tail applied; the positions replaced and the
        tokens they save."""
        if not self._sticky:
            return messages, [], 0
        out: list[Message] | None = None
        replaced: list[int] = []
        saved = 0
        est = self.estimator
        for call_id, reason in self._sticky.items():
            i = scan.result_at.get(call_id)
            if i is None or i >= tail_start:
                continue
            message = messages[i]
            cached = self._copies.get(call_id)
            if cached is not None and cached[0] is message:
                copy = cached[1]
            else:
                info = scan.infos[call_id]
                kind = _kind(info, verifiers) or "read"
                candidate = _Candidate(i, call_id, info.tool, info.argument, kind, None, False)
                copy = self._elided(message, candidate, reason or "aged")
            if out is None:
                out = list(messages)
            out[i] = copy
            replaced.append(i)
            saved += est.message(message) - est.message(copy)
        return (out if out is not None else messages), replaced, saved

    def _elided(self, message: Message, c: _Candidate, reason: ReasonCode) -> Message:
        cached = self._copies.get(c.call_id)
        if cached is not None and cached[0] is message:
            return cached[1]
        size = original_size(message, self.estimator.message(message))
        copy = self.elide(message, stub_text(c.tool, c.argument, c.kind, size, reason))
        self._copies[c.call_id] = (message, copy)
        return copy

    def _rounds_since(self, scan: TranscriptScan, since: float) -> int:
        """Assistant tool rounds after ``since``, counting only the rounds added since the last call."""
        last_since, scanned, count = self._rounds
        if last_since != since or scanned > len(scan.round_times):
            scanned, count = 0, 0
        times = scan.round_times
        count += sum(1 for t in times[scanned:] if t > since)
        self._rounds = (since, len(times), count)
        return count

    def _triggers(
        self, scan: TranscriptScan, occ1: int, marks: Marks, commit: bool = True
    ) -> tuple[Trigger, ...]:
        found: list[Trigger] = []
        if occ1 >= marks.pressure:
            found.append("pressure")
        repeat = False
        seen_results, seen_digests = self._seen_results, self._seen_digests
        new: set[str] = set()
        for fact in scan.results[self._repeat_cursor :]:
            if fact.call_id not in seen_results:
                if commit:
                    seen_results.add(fact.call_id)
                if fact.digest in seen_digests or fact.digest in new:
                    repeat = True
            new.add(fact.digest)
        if commit:
            seen_digests.update(new)
            self._repeat_cursor = len(scan.results)
        bundle_ms = scan.bundle_ms
        boundary_ms, pending = self._boundary_ms, self._boundary_pending
        if bundle_ms is not None and (boundary_ms is None or bundle_ms > boundary_ms):
            boundary_ms, pending = bundle_ms, True
        if pending:
            found.append("boundary")
        if commit:
            self._boundary_ms = boundary_ms
            self._boundary_pending = False  # only the first call after the boundary
        if self._rounds_since(scan, self._last_projection_ms) >= TOOL_ROUNDS_TRIGGER:
            found.append("toolRounds")
        if repeat:
            found.append("repeat")
        if occ1 >= marks.ceiling:
            found.append("ceiling")
        return tuple(found)

    def _candidates(
        self,
        scan: TranscriptScan,
        tail_start: int,
        triggers: tuple[Trigger, ...],
        verifiers: tuple[str, ...],
        include_sticky: bool = False,
    ) -> list[_Candidate]:
        """Candidates outside the protected tail with their reason (or None) and keep rules, oldest
        first; sticky ones only with ``include_sticky`` (their reason is known already)."""
        aged = "pressure" in triggers or "ceiling" in triggers
        sticky = self._sticky
        boundary = self._boundary_ms
        out: list[_Candidate] = []
        for fact in scan.results:
            i = fact.index
            if i >= tail_start:
                break
            if fact.call_id in sticky and not include_sticky:
                continue
            info = fact.info
            kind = _kind(info, verifiers)
            if kind is None:
                continue
            path, shape, command = info.path, info.shape, info.command
            reason: ReasonCode | None = None
            reads_file = tool_facts(info.tool).reads_file
            if (
                reads_file
                and path is not None
                and (
                    scan.last_read.get((path, info.span), -1) > i
                    or scan.last_whole_read.get(path, -1) > i
                    or scan.last_write.get(path, -1) > i
                )
            ) or (not reads_file and kind == "read" and scan.last_shape[shape] > i):
                reason = "superseded"
            elif scan.last_digest[fact.digest] > i:
                reason = "repeated"
            elif boundary is not None and fact.time < boundary:
                reason = "earlier-phase"
            elif kind == "log" and command and scan.last_ok_command.get(command, -1) > i:
                reason = "resolved-log"
            elif aged:
                reason = "aged"
            resolved_at = (
                scan.last_ok_command.get(command, -1) if command else scan.last_ok_shape.get(shape, -1)
            )
            keep = (
                (fact.failed and resolved_at <= i)
                or (command in verifiers and scan.last_command.get(command, -1) <= i)
                or fact.tokens < MIN_ELIDE_TOKENS
            )
            out.append(_Candidate(i, fact.call_id, info.tool, info.argument, kind, reason, keep))
        return out

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
        correction: int = 0,
        source: OccupancySource = "estimate",
        commit: bool = True,
    ) -> GovernorOutcome:
        withhold = False
        occ_sent = max(0, est_sent + correction)
        if marks.pricing is not None and occ_sent >= marks.pricing and not self.settings.allow_pricing_zone:
            withhold = True
            detail = _joined(decision, detail, "the request would reach the pricing mark")
            decision = "context-limit"
        elif occ_sent >= marks.ceiling:
            detail = _joined(decision, detail, "sent above the ceiling")
            decision = "over-ceiling"
        record: GovernorDecision | None = None
        if decision is not None and commit:
            present = self._scan.result_at
            sticky = sum(1 for call_id in self._sticky if call_id in present)
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
        return GovernorOutcome(sent, record, occupancy, est_sent, marks, withhold, occ_sent, source)

    def record(self, decision: GovernorDecision) -> GovernorDecision:
        """Log a decision made elsewhere (the verifier gate's ``verifier-reused``)."""
        decision = replace(decision, turn=decision.turn or self.calls)
        self.log.append(decision)
        return decision


def _joined(decision: Decision | None, detail: str, why: str) -> str:
    before = f"{decision}: {detail}" if decision and detail else decision or ""
    return f"{why} ({before})" if before else why


def _kind(info: CallInfo, verifiers: tuple[str, ...]) -> CandidateKind | None:
    if info.command and info.command in verifiers:
        return "log"
    return info.base_kind


def _structure_kept(
    original: Sequence[Message], projected: Sequence[Message], changed: Sequence[int], tail_start: int
) -> bool:
    """Every replaced message lies before the protected tail and kept its role and tool-call id."""
    if len(original) != len(projected):
        return False
    for i in changed:
        a, b = original[i], projected[i]
        if i >= tail_start or a.get("role") != b.get("role") or a.get("toolCallId") != b.get("toolCallId"):
            return False
        if "toolCallId" not in b:
            return False
    return True
