"""Scripted turns for the loopback provider server, and their rendering as each wire protocol's events.

Plain data: a ``Turn`` is a list of ``Text``/``Thinking``/``ToolCall`` pieces, a ``Usage``, an optional
``Failure`` and delivery knobs. ``anthropic_events`` and ``openai_events`` turn it into the
``(event name, data)`` pairs the real APIs stream. See ``loopback_server`` for how turns are served.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any


@dataclass(frozen=True)
class Text:
    text: str
    deltas: list[str] | None = None  # explicit streaming pieces; default: word by word


@dataclass(frozen=True)
class Thinking:
    thinking: str
    signature: str = "sig"  # Anthropic signature; OpenAI: the reasoning field name to use
    redacted: bool = False  # Anthropic redacted_thinking (``signature`` is the opaque data)


@dataclass(frozen=True)
class ToolCall:
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    id: str | None = None
    fragments: list[str] | None = None  # explicit argument JSON pieces; default: ~10 characters each


@dataclass(frozen=True)
class Usage:
    input: int = 100
    output: int | None = None  # default: the number of streamed pieces
    cache_read: int = 0
    cache_write: int = 0
    cache_write_1h: int = 0  # Anthropic: the part of cache_write written with a 1-hour TTL
    reasoning: int | None = None


@dataclass(frozen=True)
class Failure:
    mode: str
    status: int = 500
    body: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    after_events: int = 0
    abrupt: bool = True
    line: str = ""
    pause: float | None = None

    @staticmethod
    def http(status: int, body: str = "", headers: dict[str, str] | None = None) -> Failure:
        return Failure("http", status=status, body=body, headers=dict(headers or {}))

    @staticmethod
    def cut(after_events: int, abrupt: bool = True) -> Failure:
        return Failure("cut", after_events=after_events, abrupt=abrupt)

    @staticmethod
    def malformed(after_events: int, line: str = "{not json") -> Failure:
        return Failure("malformed", after_events=after_events, line=line)

    @staticmethod
    def error_event(after_events: int, body: str) -> Failure:
        return Failure("error_event", after_events=after_events, body=body)

    @staticmethod
    def hang() -> Failure:
        return Failure("hang")

    @staticmethod
    def stall(after_events: int, seconds: float | None = None) -> Failure:
        """Send the headers and ``after_events`` events, then nothing: for ever (``None``) or for
        ``seconds`` before dropping the connection."""
        return Failure("stall", after_events=after_events, pause=seconds)


@dataclass(frozen=True)
class Turn:
    pieces: list[Text | Thinking | ToolCall] = field(default_factory=list)
    stop: str | None = None  # "stop" | "length" | "toolUse"; default from the pieces
    raw_stop: str | None = None  # provider value as-is (e.g. "refusal", "content_filter")
    usage: Usage = field(default_factory=Usage)
    failure: Failure | None = None
    drip: float = 0.0
    split_bytes: int | None = None
    omit_finish_reason: bool = False  # OpenAI: never send finish_reason
    model: str | None = None  # model name reported by the server


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


ScriptItem = Turn | Callable[[RecordedRequest], Turn]


def counting(turn: Turn) -> Callable[[RecordedRequest], Turn]:
    """``turn`` answered with an input count of the request it answers (its JSON body by chars/4, as a real
    provider counts what it received) instead of the turn's fixed figure."""

    def answer(request: RecordedRequest) -> Turn:
        size = len(json.dumps(request.body, ensure_ascii=False)) if request.body is not None else 0
        return replace(turn, usage=replace(turn.usage, input=(size + 3) // 4))

    return answer


_WORDS = re.compile(r"\S+\s*|\s+")


def _words(text: Text) -> list[str]:
    return text.deltas if text.deltas is not None else (_WORDS.findall(text.text) or [""])


def _fragments(call: ToolCall) -> list[str]:
    if call.fragments is not None:
        return call.fragments
    raw = json.dumps(call.arguments)
    return [raw[i : i + 10] for i in range(0, len(raw), 10)] or [""]


def _count_pieces(turn: Turn) -> int:
    total = 0
    for piece in turn.pieces:
        if isinstance(piece, Text):
            total += len(_words(piece))
        elif isinstance(piece, Thinking):
            total += len(_WORDS.findall(piece.thinking))
        else:
            total += len(_fragments(piece))
    return total


def _default_stop(turn: Turn) -> str:
    if turn.stop:
        return turn.stop
    return "toolUse" if any(isinstance(p, ToolCall) for p in turn.pieces) else "stop"


# ---- Anthropic Messages ---------------------------------------------------------------------------

_ANTHROPIC_STOP = {"stop": "end_turn", "length": "max_tokens", "toolUse": "tool_use"}


def anthropic_events(turn: Turn, model: str, seq: int) -> Iterator[tuple[str, dict[str, Any]]]:
    usage = turn.usage
    output = usage.output if usage.output is not None else _count_pieces(turn)
    yield (
        "message_start",
        {
            "type": "message_start",
            "message": {
                "id": f"msg_loop{seq:04d}",
                "type": "message",
                "role": "assistant",
                "model": turn.model or model,
                "content": [],
                "stop_reason": None,
                "usage": {
                    "input_tokens": usage.input,
                    "output_tokens": 1,
                    "cache_read_input_tokens": usage.cache_read,
                    "cache_creation_input_tokens": usage.cache_write,
                    "cache_creation": {
                        "ephemeral_5m_input_tokens": usage.cache_write - usage.cache_write_1h,
                        "ephemeral_1h_input_tokens": usage.cache_write_1h,
                    },
                },
            },
        },
    )
    yield "ping", {"type": "ping"}
    for index, piece in enumerate(turn.pieces):
        if isinstance(piece, Text):
            yield (
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {"type": "text", "text": ""},
                },
            )
            for word in _words(piece):
                yield (
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "text_delta", "text": word},
                    },
                )
        elif isinstance(piece, Thinking) and piece.redacted:
            block = {"type": "redacted_thinking", "data": piece.signature}
            yield (
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": block},
            )
        elif isinstance(piece, Thinking):
            block = {"type": "thinking", "thinking": "", "signature": ""}
            yield (
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": block},
            )
            for word in _WORDS.findall(piece.thinking):
                yield (
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "thinking_delta", "thinking": word},
                    },
                )
            yield (
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "signature_delta", "signature": piece.signature},
                },
            )
        else:
            call_id = piece.id or f"toolu_loop{seq:04d}_{index}"
            block = {"type": "tool_use", "id": call_id, "name": piece.name, "input": {}}
            yield (
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": block},
            )
            for fragment in _fragments(piece):
                yield (
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "input_json_delta", "partial_json": fragment},
                    },
                )
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    stop = turn.raw_stop or _ANTHROPIC_STOP[_default_stop(turn)]
    delta_usage: dict[str, Any] = {"output_tokens": output}
    if usage.reasoning is not None:
        delta_usage["output_tokens_details"] = {"thinking_tokens": usage.reasoning}
    yield (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": delta_usage,
        },
    )
    yield "message_stop", {"type": "message_stop"}


# ---- OpenAI Chat Completions ----------------------------------------------------------------------

_OPENAI_STOP = {"stop": "stop", "length": "length", "toolUse": "tool_calls"}


def openai_events(turn: Turn, model: str, seq: int) -> Iterator[tuple[str, dict[str, Any] | str]]:
    chunk_id = f"chatcmpl-loop{seq:04d}"
    name = turn.model or model

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": chunk_id,
            "object": "chat.completion.chunk",
            "model": name,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    yield "message", chunk({"role": "assistant", "content": ""})
    call_index = 0
    for index, piece in enumerate(turn.pieces):
        if isinstance(piece, Text):
            for word in _words(piece):
                yield "message", chunk({"content": word})
        elif isinstance(piece, Thinking):
            field_name = (
                piece.signature if piece.signature in ("reasoning", "reasoning_text") else "reasoning_content"
            )
            for word in _WORDS.findall(piece.thinking):
                yield "message", chunk({field_name: word})
        else:
            call_id = piece.id or f"call_loop{seq:04d}_{index}"
            head = {
                "index": call_index,
                "id": call_id,
                "type": "function",
                "function": {"name": piece.name, "arguments": ""},
            }
            yield "message", chunk({"tool_calls": [head]})
            for fragment in _fragments(piece):
                yield (
                    "message",
                    chunk({"tool_calls": [{"index": call_index, "function": {"arguments": fragment}}]}),
                )
            call_index += 1
    usage = turn.usage
    if not turn.omit_finish_reason:
        yield "message", chunk({}, turn.raw_stop or _OPENAI_STOP[_default_stop(turn)])
    output = usage.output if usage.output is not None else _count_pieces(turn)
    usage_obj: dict[str, Any] = {
        "prompt_tokens": usage.input + usage.cache_read + usage.cache_write,
        "completion_tokens": output,
        "total_tokens": usage.input + usage.cache_read + usage.cache_write + output,
        "prompt_tokens_details": {"cached_tokens": usage.cache_read, "cache_write_tokens": usage.cache_write},
    }
    if usage.reasoning is not None:
        usage_obj["completion_tokens_details"] = {"reasoning_tokens": usage.reasoning}
    yield (
        "message",
        {"id": chunk_id, "object": "chat.completion.chunk", "model": name, "choices": [], "usage": usage_obj},
    )
    yield "message", "[DONE]"
