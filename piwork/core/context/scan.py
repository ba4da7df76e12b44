"""What the governor knows about a transcript, kept up to date by looking only at what was appended.

The list the governor sees before each provider call is the previous one plus the messages of the last
turn; only a compaction, a navigation or a reload replaces it. So the facts it needs are folded in once
per message: token counts and their sum, the boundary groups (and orphans), each tool result's call and
content digest, and, per path, shape, digest and command, the *last* position where it occurs. With the
last positions, whether a result was read again, repeated, or resolved later is a dictionary lookup
instead of a backward pass over the whole transcript. When the list is not an extension of the one
scanned before (checked by object identity, in C), the scan starts over.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from piwork.core.context.elision import (
    CandidateKind,
    call_command,
    call_shape,
    classify,
    content_digest,
    main_argument,
    path_key,
    read_range,
    result_failed,
)
from piwork.core.context.estimate import TokenEstimator
from piwork.core.context.groups import Orphan, is_failed_assistant
from piwork.core.messages import Message
from piwork.core.tools.registry import tool_facts
from piwork.core.usage import calculate_context_tokens

BOUNDARY_CUSTOM_TYPES = frozenset({"piwork.contextBundle"})  # custom messages that open a task or phase


class CallInfo(NamedTuple):
    """What the governor needs to know about one tool call (computed once per call; a tuple, as a
    long transcript makes one per call before its first decision)."""

    tool: str
    arguments: object
    base_kind: CandidateKind | None  # without the verifier commands, which may change
    argument: str
    shape: str
    path: str | None
    command: str
    span: tuple[int | None, int | None] = (None, None)  # a read's (offset, limit)

    @property
    def whole_read(self) -> bool:
        return self.span == (None, None)


def call_info(tool: str, arguments: object) -> CallInfo:
    command = call_command(tool, arguments)
    return CallInfo(
        tool,
        arguments,
        classify(tool, arguments),
        main_argument(tool, arguments),
        call_shape(tool, arguments),
        path_key(tool, arguments),
        command,
        read_range(arguments) if tool_facts(tool).reads_file else (None, None),
    )


@dataclass(frozen=True, slots=True)
class ResultFact:
    """A tool result whose call is in the transcript."""

    index: int
    call_id: str
    info: CallInfo
    digest: str
    tokens: int
    failed: bool
    time: float


def message_time(message: Message) -> float:
    value = message.get("timestamp")
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


@dataclass
class TranscriptScan:
    estimator: TokenEstimator
    messages: list[Message] = field(default_factory=list)  # the prefix scanned so far
    tokens: int = 0  # of those messages
    results: list[ResultFact] = field(default_factory=list)
    result_at: dict[str, int] = field(default_factory=dict)  # tool-call id -> position in ``messages``
    infos: dict[str, CallInfo] = field(default_factory=dict)  # tool-call id -> its call
    # last positions (results whose call is known)
    last_read: dict[tuple[str, tuple[int | None, int | None]], int] = field(
        default_factory=dict
    )  # (path, range)
    last_whole_read: dict[str, int] = field(default_factory=dict)  # path read from its start without limit
    last_write: dict[str, int] = field(default_factory=dict)  # path changed by a successful edit/write
    last_shape: dict[str, int] = field(default_factory=dict)
    last_ok_shape: dict[str, int] = field(default_factory=dict)
    last_digest: dict[str, int] = field(default_factory=dict)
    last_ok_command: dict[str, int] = field(default_factory=dict)
    last_command: dict[str, int] = field(default_factory=dict)
    round_times: list[float] = field(default_factory=list)  # assistant messages with tool calls
    latest_time: float = 0.0
    bundle_ms: float | None = None  # latest context bundle (a task or phase boundary)
    summary_ms: float = 0.0  # latest compaction or branch summary
    usage_at: int | None = None  # the last reply whose usage counts the request it answered
    usage_tokens: int = 0  # that count
    # boundary groups: closed ones by their start, the one still open, and orphans so far
    group_starts: list[int] = field(default_factory=list)
    orphans: list[Orphan] = field(default_factory=list)
    _start: int = 0
    _open_calls: set[str] | None = None
    _open_index: int = -1
    new_results: list[ResultFact] = field(default_factory=list)  # added by the last ``update``

    # ---- keeping up -----------------------------------------------------------------------------------

    def extended_by(self, messages: Sequence[Message]) -> bool:
        """Whether ``messages`` starts with the very message objects scanned so far."""
        seen = self.messages
        return len(messages) >= len(seen) and all(map(operator.is_, seen, messages[: len(seen)]))

    def update(self, messages: Sequence[Message]) -> None:
        """Fold in the messages appended since the last call (``messages`` must extend the scanned list)."""
        n = len(self.messages)
        self.new_results = []
        new = messages[n:]
        self.tokens += sum(map(self.estimator.message, new))
        add = self._add
        for i, message in enumerate(new, n):
            add(i, message)
        self.messages.extend(new)

    def _add(self, i: int, message: Message) -> None:
        # inlined steps (message_time, _close): a reopened long session folds in millions of messages
        stamp = message.get("timestamp")
        if type(stamp) is int:
            stamp = float(stamp)
        elif type(stamp) is not float:
            stamp = message_time(message)
        if stamp > self.latest_time:
            self.latest_time = stamp
        role = message.get("role")
        if role == "toolResult":
            self._group_result(i, message)
            self._result(i, message, stamp)
            return
        if i > self._start:
            self.group_starts.append(self._start)
        if self._open_calls:
            self.orphans.extend(Orphan("call", c, self._open_index) for c in sorted(self._open_calls))
        self._open_calls = None
        self._start = i
        if role == "assistant":
            failed = message.get("stopReason") in ("error", "aborted")
            if not failed and "usage" in message:
                self._usage(i, message, stamp)
            content = message.get("content")
            ids: list[str] = []  # as tool_call_ids gives them
            calls = 0
            infos = self.infos
            for block in content if isinstance(content, list) else ():
                if not isinstance(block, dict) or block.get("type") != "toolCall":
                    continue
                call_id = block.get("id", "")
                ids.append(str(call_id))
                if isinstance(call_id, str):
                    infos[call_id] = call_info(str(block.get("name", "")), block.get("arguments"))
                    calls += 1
            if not failed:
                self._open_calls = set(ids)
                self._open_index = i
                if calls:
                    self.round_times.append(stamp)
        elif role in ("compactionSummary", "branchSummary"):
            self.summary_ms = max(self.summary_ms, stamp)
        elif role == "custom" and message.get("customType") in BOUNDARY_CUSTOM_TYPES:
            self.bundle_ms = stamp if self.bundle_ms is None else max(self.bundle_ms, stamp)

    def _usage(self, i: int, message: Message, stamp: float) -> None:
        """A good reply newer than the latest summary: its provider count describes the request it answered
        (an older one, kept by a compaction, counted the context before it)."""
        usage = message.get("usage")
        if is_failed_assistant(message) or not isinstance(usage, dict) or stamp <= self.summary_ms:
            return
        if not (usage.get("totalTokens") or usage.get("input") or usage.get("cacheRead")):
            return  # nothing counted (a stub or a provider that reports no usage)
        tokens = calculate_context_tokens(usage)
        if tokens == tokens and tokens > 0:  # NaN (a missing field) never counts
            self.usage_at = i
            self.usage_tokens = int(tokens)

    def _group_result(self, i: int, message: Message) -> None:
        call_id = message.get("toolCallId")
        if self._open_calls is not None and isinstance(call_id, str) and call_id in self._open_calls:
            self._open_calls.discard(call_id)
            return
        self._close(i)
        self._start = i
        self.orphans.append(Orphan("result", call_id if isinstance(call_id, str) else "", i))

    def _close(self, end: int) -> None:
        if end > self._start:
            self.group_starts.append(self._start)
        if self._open_calls:
            self.orphans.extend(Orphan("call", c, self._open_index) for c in sorted(self._open_calls))
        self._open_calls = None

    def _result(self, i: int, message: Message, stamp: float) -> None:
        call_id = message.get("toolCallId")
        info = self.infos.get(call_id) if isinstance(call_id, str) else None
        if info is None or not isinstance(call_id, str):
            return
        failed = result_failed(message, info.base_kind)
        fact = ResultFact(
            i, call_id, info, content_digest(message), self.estimator.message(message), failed, stamp
        )
        self.results.append(fact)
        self.new_results.append(fact)
        self.result_at[call_id] = i
        if tool_facts(info.tool).reads_file and info.path is not None:
            self.last_read[(info.path, info.span)] = i
            if info.whole_read:
                self.last_whole_read[info.path] = i
        if tool_facts(info.tool).changes_files and info.path is not None and not failed:
            self.last_write[info.path] = i
        self.last_shape[info.shape] = i
        self.last_digest[fact.digest] = i
        if not failed:
            self.last_ok_shape[info.shape] = i
            if info.command:
                self.last_ok_command[info.command] = i
        if info.command:
            self.last_command[info.command] = i

    # ---- reading -----------------------------------------------------------------------------------------

    def group_count(self) -> int:
        return len(self.group_starts) + (1 if len(self.messages) > self._start else 0)

    def group_start(self, g: int) -> int:
        return self.group_starts[g] if g < len(self.group_starts) else self._start

    def all_orphans(self) -> list[Orphan]:
        """Orphans of the whole list (tool calls of the group still open count as unanswered)."""
        pending = sorted(self._open_calls) if self._open_calls else []
        return self.orphans + [Orphan("call", c, self._open_index) for c in pending]
