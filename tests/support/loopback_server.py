"""A real HTTP server on 127.0.0.1 that answers model requests from scripted turns.

It speaks the actual SSE wire protocols piwork talks to: Anthropic Messages (``POST /v1/messages``) and
OpenAI Chat Completions (``POST <anything>/chat/completions``), chosen by the request path. It runs in a
background thread, so sync tests, async tests and subprocesses (the headless CLI) can all use it.

Scripts are plain data. Each request takes the next ``Turn`` from the queue (or a callable that
receives the ``RecordedRequest`` and returns a ``Turn``)::

    server.script(
        Turn([Thinking("plan", signature="sig-1"), Text("Reading it."), ToolCall("read", {"path": "a.py"})]),
        Turn([Text("Done.")], usage=Usage(input=120, output=8, cache_read=30)),
        Turn(failure=Failure.http(429, '{"type":"error","error":{"type":"rate_limit_error"}}',
                                  headers={"retry-after": "3"})),
    )

The stop reason defaults to ``toolUse`` when a turn has tool calls, else ``stop``; set ``stop`` to
``"length"`` (or any raw provider value via ``raw_stop``) to override. Failure modes (``Failure``):

- ``http(status, body, headers)``: a non-2xx answer before any stream (429 + Retry-After, 529 ...);
- ``cut(after_events, abrupt=True)``: stream that many SSE events, then drop the connection
  (``abrupt``: no chunked-encoding terminator) or end the body cleanly without the final events;
- ``malformed(after_events, line)``: insert a data line that is not JSON;
- ``error_event(after_events, body)``: a provider error inside the stream (Anthropic ``event: error``,
  OpenAI ``{"error": ...}`` chunk);
- ``hang()``: accept the request and never answer (for idle-timeout and abort tests).

Delivery knobs on ``Turn``: ``drip`` (seconds between events, for abort/streaming tests) and
``split_bytes`` (write the body in chunks of that many bytes, for awkward-split tests). Every request
is recorded (``server.requests``: method, path, lower-cased headers, parsed JSON body). With the queue
empty the server answers 500 with a clear body, so a test that under-scripts fails instead of hanging.
"""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
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


# ---- the server -----------------------------------------------------------------------------------


class _Cut(Exception):
    pass


class LoopbackServer:
    """Start with ``start()`` (or use as a context manager); ``url`` is ``http://127.0.0.1:<port>``."""

    def __init__(self, model: str = "loopback-model") -> None:
        self.model = model
        self.requests: list[RecordedRequest] = []
        self._queue: deque[ScriptItem] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._seq = 0
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle --
    def start(self) -> LoopbackServer:
        server = self

        class Handler(_Handler):
            owner = server

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, args=(0.05,), name="loopback-provider", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> LoopbackServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        """Base URL for Anthropic models (piwork appends ``/v1/messages``)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_url(self) -> str:
        """Base URL for OpenAI-compatible models (piwork appends ``/chat/completions``)."""
        return f"{self.url}/v1"

    # -- scripting --
    def script(self, *turns: ScriptItem) -> None:
        with self._lock:
            self._queue.extend(turns)

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    def _next(self, request: RecordedRequest) -> tuple[Turn | None, int]:
        with self._lock:
            self.requests.append(request)
            self._seq += 1
            item = self._queue.popleft() if self._queue else None
            seq = self._seq
        if item is None or isinstance(item, Turn):
            return item, seq
        return item(request), seq

    def anthropic_model(self, **overrides: Any) -> Any:
        from piwork.core.llm.types import ANTHROPIC_MESSAGES, Model

        fields: dict[str, Any] = {
            "id": self.model,
            "name": "Loopback Claude",
            "api": ANTHROPIC_MESSAGES,
            "provider": "anthropic",
            "base_url": self.url,
            "reasoning": True,
            "input": ("text", "image"),
            "context_window": 200000,
            "max_tokens": 32000,
        }
        fields.update(overrides)
        return Model(**fields)

    def openai_model(self, **overrides: Any) -> Any:
        from piwork.core.llm.types import OPENAI_COMPLETIONS, Model

        fields: dict[str, Any] = {
            "id": self.model,
            "name": "Loopback GPT",
            "api": OPENAI_COMPLETIONS,
            "provider": "loopback",
            "base_url": self.openai_url,
            "reasoning": False,
            "input": ("text", "image"),
            "context_window": 128000,
            "max_tokens": 16384,
        }
        fields.update(overrides)
        return Model(**fields)


class _Handler(BaseHTTPRequestHandler):
    owner: LoopbackServer
    protocol_version = "HTTP/1.1"

    def setup(self) -> None:
        super().setup()
        # Events are small writes; without this, Nagle + delayed ACKs add ~40 ms per event.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
        pass

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        headers = {k.lower(): v for k, v in self.headers.items()}
        request = RecordedRequest("POST", self.path, headers, body)
        turn, seq = self.owner._next(request)
        try:
            self._answer(request, turn, seq)
        except (BrokenPipeError, ConnectionResetError, _Cut):
            self.close_connection = True

    def _plain(self, status: int, text: str, headers: dict[str, str] | None = None) -> None:
        data = text.encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _answer(self, request: RecordedRequest, turn: Turn | None, seq: int) -> None:
        if turn is None:
            self._plain(500, '{"error": {"message": "loopback server: no scripted turn left"}}')
            return
        failure = turn.failure
        if failure is not None and failure.mode == "http":
            self._plain(failure.status, failure.body, failure.headers)
            return
        if failure is not None and failure.mode == "hang":
            self.owner._stopping.wait()
            self.close_connection = True
            return
        anthropic = request.path.split("?", 1)[0].rstrip("/").endswith("/v1/messages")  # SDKs add ?beta=true
        model = (
            str((request.body or {}).get("model") or self.owner.model)
            if isinstance(request.body, dict)
            else self.owner.model
        )
        events: list[tuple[str, Any]] = list(
            anthropic_events(turn, model, seq) if anthropic else openai_events(turn, model, seq)
        )
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        for number, (name, data) in enumerate(events):
            if failure is not None and number == failure.after_events:
                self._inject(failure, anthropic)
                if failure.mode == "cut" or failure.mode == "error_event":
                    break
            text = data if isinstance(data, str) else json.dumps(data)
            frame = f"event: {name}\ndata: {text}\n\n" if anthropic else f"data: {text}\n\n"
            self._write(frame.encode(), turn.split_bytes)
            if turn.drip and self.owner._stopping.wait(turn.drip):
                raise _Cut
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _inject(self, failure: Failure, anthropic: bool) -> None:
        if failure.mode == "cut":
            if failure.abrupt:
                self.wfile.flush()
                self.connection.shutdown(socket.SHUT_RDWR)
                raise _Cut
            return
        if failure.mode == "malformed":
            name = "event: content_block_delta\n" if anthropic else ""
            self._write(f"{name}data: {failure.line}\n\n".encode(), None)
        elif failure.mode == "error_event":
            frame = f"event: error\ndata: {failure.body}\n\n" if anthropic else f"data: {failure.body}\n\n"
            self._write(frame.encode(), None)

    def _write(self, data: bytes, split: int | None) -> None:
        pieces = [data[i : i + split] for i in range(0, len(data), split)] if split else [data]
        for piece in pieces:
            self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
            self.wfile.flush()
            if split:
                time.sleep(0)  # let each piece leave as its own TCP segment where the OS allows
