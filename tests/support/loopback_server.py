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
- ``hang()``: accept the request and never answer (for idle-timeout and abort tests);
- ``stall(after_events, seconds=None)``: send the headers and that many events, then nothing, for ever
  or for ``seconds`` before dropping the connection (a server that hangs mid-reply).

Delivery knobs on ``Turn``: ``drip`` (seconds between events, for abort/streaming tests) and
``split_bytes`` (write the body in chunks of that many bytes, for awkward-split tests). Every request
is recorded (``server.requests``: method, path, lower-cased headers, parsed JSON body). With the queue
empty the server answers 500 with a clear body, so a test that under-scripts fails instead of hanging.
``GET .../models`` answers ``server.models_answer`` (status, body) or, by default, a list of the one model.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.support.scripted_turns import (
    Failure,
    RecordedRequest,
    ScriptItem,
    Text,
    Thinking,
    ToolCall,
    Turn,
    Usage,
    anthropic_events,
    counting,
    openai_events,
)

__all__ = [
    "Failure",
    "LoopbackServer",
    "RecordedRequest",
    "ScriptItem",
    "Text",
    "Thinking",
    "ToolCall",
    "Turn",
    "Usage",
    "anthropic_events",
    "counting",
    "openai_events",
]


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
        # ``GET <anything>/models`` answers this (status, body); None: an OpenAI-style list of ``model``.
        self.models_answer: tuple[int, str] | None = None

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

    def do_GET(self) -> None:
        headers = {k.lower(): v for k, v in self.headers.items()}
        with self.owner._lock:
            self.owner.requests.append(RecordedRequest("GET", self.path, headers, None))
        if not self.path.split("?", 1)[0].rstrip("/").endswith("/models"):
            self._plain(404, '{"error": {"message": "loopback server: no such path"}}')
            return
        answer = self.owner.models_answer
        if answer is None:
            body = {
                "object": "list",
                "data": [{"id": self.owner.model, "object": "model", "owned_by": "loopback"}],
            }
            answer = (200, json.dumps(body))
        self._plain(*answer)

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
            if failure is not None and failure.mode == "stall" and number == failure.after_events:
                self.wfile.flush()
                if failure.pause is None or self.owner._stopping.wait(failure.pause):
                    self.owner._stopping.wait()
                    raise _Cut
                self.connection.shutdown(socket.SHUT_RDWR)
                raise _Cut
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
