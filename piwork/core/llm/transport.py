"""HTTP for the wire adapters: one POST streamed as SSE, provider-level retries, abort and timeouts.

``run_sse_request`` drives a protocol parser (Anthropic or OpenAI) over the response and turns every
failure into a final ``ErrorEvent``: non-2xx answers (``"<status> <body>"``), transport errors, stream
errors the parser reports, an abort (``StreamOptions.abort``), the silence limit or the whole-reply
limit (both counted across the attempts of one reply, see ``reply_limits``). API keys are removed from
every error text.
"""

from __future__ import annotations

import asyncio
import email.utils
import errno
import functools
import ipaddress
import json
import random
import ssl
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Protocol, TypeVar
from urllib.parse import urlsplit

from piwork.core.llm.errors import classify
from piwork.core.llm.http_errors import MAX_BODY_CHARS, http_error_text
from piwork.core.llm.httpx_library import httpx
from piwork.core.llm.reply_limits import ReplyBudget, reply_time_text, silence_text
from piwork.core.llm.sse import SseDecoder, SseEvent
from piwork.core.llm.types import (
    OPENAI_COMPLETIONS,
    AssistantEvent,
    DoneEvent,
    ErrorEvent,
    ErrorInfo,
    ErrorKind,
    Message,
    Model,
    StartEvent,
    StreamOptions,
)
from piwork.core.llm.wire import error_message
from piwork.core.redaction import SECRET_HEADERS, header_secrets, redact_text, unsendable_header

T = TypeVar("T")
RETRY_STATUSES = frozenset({408, 409, 429})
ABORTED_TEXT = "Request aborted: the response was stopped before it finished."


class StreamFailure(Exception):
    """Raised by parsers (and here) to end a stream with an error; ``text`` becomes ``errorMessage``."""

    def __init__(self, text: str, info: ErrorInfo | None = None) -> None:
        super().__init__(text)
        self.text = text
        self.info = info


class StreamParser(Protocol):
    """A protocol's event parser: turns SSE events into assistant events, building ``message``."""

    message: Message

    def feed(self, event: SseEvent) -> list[AssistantEvent]: ...

    def finish(self) -> list[AssistantEvent]:
        """The body ended: close blocks, settle the stop reason; raise ``StreamFailure`` if incomplete."""
        ...


@dataclass(frozen=True)
class HttpRequest:
    url: str
    headers: Mapping[str, str]
    body: Mapping[str, Any]
    secrets: tuple[str, ...] = ()  # strings to scrub from any error text (the API key)
    api: str = OPENAI_COMPLETIONS  # decides how an error body is worded (see http_errors)
    content: bytes | None = None  # ``body`` as sent (JSON, UTF-8) when the builder serialised it already


class _Interrupted(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class _Interrupter:
    """Stops network waits on abort or at the overall deadline, but never the consumer's own code.

    The task iterating the stream is cancelled only while it is suspended inside ``wait`` (that is, inside
    this module); the cancellation is then taken back (``uncancel``) and reported as ``_Interrupted``.
    """

    def __init__(self, abort: asyncio.Event | None, total_timeout: float | None) -> None:
        self.reason: str | None = None
        self._abort = abort
        self._total_timeout = total_timeout
        self._task: asyncio.Task[Any] | None = None
        self._waiting = False
        self._cancel_sent = False
        self._watcher: asyncio.Task[None] | None = None
        self._timer: asyncio.TimerHandle | None = None

    def start(self) -> None:
        self._task = asyncio.current_task()
        loop = asyncio.get_running_loop()
        if self._abort is not None:
            if self._abort.is_set():
                self.reason = "aborted"
            else:
                self._watcher = loop.create_task(self._watch(self._abort))
        if self._total_timeout is not None and self._total_timeout > 0:
            self._timer = loop.call_later(self._total_timeout, self._fire, "timeout")

    def stop(self) -> None:
        if self._watcher is not None:
            self._watcher.cancel()
        if self._timer is not None:
            self._timer.cancel()

    async def _watch(self, event: asyncio.Event) -> None:
        await event.wait()
        self._fire("aborted")

    def _fire(self, reason: str) -> None:
        if self.reason is not None:
            return
        self.reason = reason
        if self._waiting and self._task is not None and not self._task.done():
            self._cancel_sent = True
            self._task.cancel()

    async def wait(self, awaitable: Awaitable[T]) -> T:
        if self.reason is not None:
            if asyncio.iscoroutine(awaitable):
                awaitable.close()
            raise _Interrupted(self.reason)
        self._waiting = True
        try:
            return await awaitable
        except asyncio.CancelledError:
            if self._cancel_sent and self._task is not None:
                self._cancel_sent = False
                if self._task.uncancel() == 0 and self.reason is not None:
                    raise _Interrupted(self.reason) from None
            raise
        finally:
            self._waiting = False


@functools.lru_cache(maxsize=1)
def _ssl_context() -> ssl.SSLContext:
    # Building a verified context loads the CA bundle (tens of ms); one per process is enough.
    import certifi

    return ssl.create_default_context(cafile=certifi.where())


def is_loopback(url: str) -> bool:
    """True for localhost and loopback addresses (local model servers)."""
    host = (urlsplit(url).hostname or "").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@functools.lru_cache(maxsize=1)
def _no_tls_context() -> ssl.SSLContext:
    # For a plain-http request that cannot reach TLS: verification stays on and no CA is loaded, so a TLS
    # connection it were ever used for would be refused, never trusted.
    return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)


def _plain_http_here(url: str, proxy: str | None) -> bool:
    """An ``http://`` request to this computer with no proxy: no TLS on the way (redirects are not followed,
    and the environment's proxies do not apply to a local server)."""
    return proxy is None and urlsplit(url).scheme.lower() == "http" and is_loopback(url)


def make_client(options: StreamOptions, url: str) -> httpx.AsyncClient:
    idle = options.idle_timeout if options.idle_timeout and options.idle_timeout > 0 else None
    timeout = httpx.Timeout(
        connect=options.connect_timeout, read=idle, write=idle, pool=options.connect_timeout
    )
    # Proxy variables from the environment apply to remote hosts only: a local server is never proxied.
    return httpx.AsyncClient(
        timeout=timeout,
        proxy=options.proxy,
        verify=_no_tls_context() if _plain_http_here(url, options.proxy) else _ssl_context(),
        follow_redirects=False,
        trust_env=not is_loopback(url),
    )


def redact(text: str, secrets: tuple[str, ...]) -> str:
    return redact_text(text, secrets)


def retry_after_ms(headers: httpx.Headers, now: float | None = None) -> int | None:
    """Server-requested delay from ``retry-after-ms`` or ``retry-after`` (seconds or an HTTP date)."""
    raw_ms = headers.get("retry-after-ms")
    if raw_ms:
        try:
            return max(0, int(float(raw_ms)))
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if not raw:
        return None
    try:
        return max(0, int(float(raw) * 1000))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    return max(0, int((when.timestamp() - (now if now is not None else time.time())) * 1000))


def _should_retry(status: int | None, headers: httpx.Headers | None) -> bool:
    flag = headers.get("x-should-retry") if headers is not None else None
    if flag == "true":
        return True
    if flag == "false":
        return False
    return status is None or status in RETRY_STATUSES or status >= 500


async def _read_limited(response: httpx.Response, limit: int) -> tuple[bytes, bool]:
    """At most ``limit`` bytes of an error body (and whether more was left unread)."""
    parts: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        parts.append(chunk)
        size += len(chunk)
        if size > limit:
            return b"".join(parts)[:limit], True
    return b"".join(parts), False


def transport_error_text(exc: httpx.HTTPError, options: StreamOptions) -> str:
    detail = str(exc).strip() or type(exc).__name__
    if isinstance(exc, httpx.ConnectTimeout):
        return f"Connection timed out after {options.connect_timeout:g} s ({detail})"
    if isinstance(exc, httpx.ReadTimeout):
        idle = options.idle_timeout or 0
        return silence_text(idle, idle)
    if isinstance(exc, httpx.TimeoutException):
        return f"Request timed out ({detail})"
    if isinstance(exc, httpx.ConnectError):
        return f"Connection error: cannot reach {_server(exc)} ({detail}); check the network and the base URL"
    if isinstance(exc, httpx.RemoteProtocolError | httpx.ReadError | httpx.WriteError):
        return f"Connection lost: {detail}"
    return f"Network error: {detail}"


def refused_on_this_computer(exc: httpx.HTTPError, url: str) -> bool:
    """A connection to a loopback address refused: the local server is not running (or not on that port)."""
    if not isinstance(exc, httpx.ConnectError) or not is_loopback(url):
        return False
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, ConnectionRefusedError) or getattr(cause, "errno", None) == errno.ECONNREFUSED:
            return True
        cause = cause.__cause__ or cause.__context__
    return "refused" in str(exc).lower()


REFUSED_HERE = "Connection refused: nothing is listening at"  # how such a failure's message starts


def refused_text(exc: httpx.HTTPError) -> str:
    return (
        f"{REFUSED_HERE} {_server(exc)} on this computer. Start the local model server, or check the port "
        "in the base URL."
    )


class _Silence:
    """When data last arrived (or the attempt began), to tell how long the server has been silent."""

    def __init__(self, budget: ReplyBudget, idle: float | None) -> None:
        self.budget = budget
        self.idle = idle  # the configured silence limit, for the message
        self.last = budget.clock()

    def heard(self) -> None:
        self.last = self.budget.clock()

    def spend(self) -> float:
        """Count the silence up to now against the reply (the attempt is failing); returns it."""
        waited = self.budget.clock() - self.last
        self.budget.spend_silence(waited)
        self.last = self.budget.clock()
        return waited

    def failure(self) -> StreamFailure:
        waited = self.spend()
        return StreamFailure(
            silence_text(self.idle or waited, waited), ErrorInfo(ErrorKind.TIMEOUT, retryable=False)
        )


async def _send(
    client: httpx.AsyncClient,
    request: HttpRequest,
    options: StreamOptions,
    guard: _Interrupter,
    silence: _Silence,
) -> httpx.Response:
    """POST with provider-level retries; returns an open 2xx streaming response or raises StreamFailure.
    A server that goes silent is not retried."""
    content = request.content
    if content is None:
        content = json.dumps(request.body, ensure_ascii=False).encode("utf-8")
    attempt = 0
    while True:
        status: int | None = None
        headers: httpx.Headers | None = None
        try:
            http_request = client.build_request(
                "POST", request.url, headers=dict(request.headers), content=content
            )
            response = await guard.wait(client.send(http_request, stream=True))
            silence.heard()
            if response.is_success:
                return response
            status, headers = response.status_code, response.headers
            try:
                body = await guard.wait(_read_limited(response, MAX_BODY_CHARS * 8))
            finally:
                await response.aclose()
            raw, more = body
            text = http_error_text(request.api, status, raw.decode("utf-8", errors="replace"), more)
        except httpx.ReadTimeout:
            raise silence.failure() from None
        except httpx.HTTPError as exc:
            silence.spend()
            if refused_on_this_computer(exc, request.url):
                # nothing listens there: no retry brings a local server up, so say so at once
                raise StreamFailure(
                    refused_text(exc), ErrorInfo(ErrorKind.NETWORK, retryable=False)
                ) from None
            text = transport_error_text(exc, options)
        text = redact(text, request.secrets)
        server_delay = retry_after_ms(headers) if headers is not None else None
        if attempt >= options.max_retries or not _should_retry(status, headers):
            raise StreamFailure(text, classify(text, status, server_delay))
        cap = options.max_retry_delay_ms
        if server_delay is not None and cap > 0 and server_delay > cap:
            text = (
                f"Server requested {-(-server_delay // 1000)}s retry delay (max: {-(-cap // 1000)}s). {text}"
            )
            raise StreamFailure(text, classify(text, status, server_delay))
        delay_ms = (
            server_delay
            if server_delay is not None
            else min(500 * 2**attempt, 8000) * (1 - random.random() * 0.25)
        )
        attempt += 1
        await guard.wait(asyncio.sleep(delay_ms / 1000))


def _parse(parser: StreamParser, sse: SseEvent) -> list[AssistantEvent]:
    """The parser's events; well-formed JSON of an unexpected shape is a malformed stream, not a crash."""
    try:
        return parser.feed(sse)
    except StreamFailure:
        raise
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        shown = sse.data if len(sse.data) <= 200 else sse.data[:200] + "…"
        text = f"Malformed stream: unexpected {sse.event} event ({type(exc).__name__}): {shown}"
        raise StreamFailure(text, ErrorInfo(ErrorKind.MALFORMED_STREAM)) from None


async def run_sse_request(
    model: Model, options: StreamOptions, request: HttpRequest, parser: StreamParser
) -> AsyncIterator[AssistantEvent]:
    """Send ``request`` and stream the parser's events; always ends with one done/error event."""
    message = parser.message
    yield StartEvent(message)
    request = replace(request, secrets=(*request.secrets, *header_secrets(request.headers)))
    bad_header = unsendable_header(request.headers)
    if bad_header is not None:
        what = "The API key" if bad_header.lower() in SECRET_HEADERS else f"The {bad_header} header"
        text = (
            f"{what} for {model.provider} contains a line break or a character an HTTP header cannot "
            "carry (control or non-ASCII). Enter it again without it."
        )
        info = ErrorInfo(ErrorKind.AUTH if what == "The API key" else ErrorKind.INVALID_REQUEST)
        yield ErrorEvent("error", error_message(model, text, base=message), info)
        return
    budget = options.reply if options.reply is not None else ReplyBudget()
    silence = _Silence(budget, options.idle_timeout)
    # This attempt may use what the reply's earlier attempts left of both limits.
    attempt_options = replace(
        options,
        idle_timeout=budget.silence_left(options.idle_timeout),
        total_timeout=budget.time_left(options.total_timeout),
    )
    guard = _Interrupter(options.abort, attempt_options.total_timeout)
    guard.start()
    client: httpx.AsyncClient | None = None
    response: httpx.Response | None = None
    failure: StreamFailure | None = None
    try:
        # The first client of a process loads the CA bundle and imports the network backend (tens of ms):
        # build it in a worker thread so the event loop, which is also the window's GUI thread, runs on.
        client = await guard.wait(asyncio.to_thread(make_client, attempt_options, request.url))
        response = await _send(client, request, options, guard, silence)
        decoder = SseDecoder()
        chunks = response.aiter_bytes().__aiter__()
        while True:
            try:
                chunk = await guard.wait(chunks.__anext__())
            except StopAsyncIteration:
                break
            except httpx.ReadTimeout:
                raise silence.failure() from None
            silence.heard()
            for sse in decoder.feed(chunk):
                for event in _parse(parser, sse):
                    yield event
        for sse in decoder.finish():
            for event in _parse(parser, sse):
                yield event
        for event in parser.finish():
            yield event
    except StreamFailure as exc:
        failure = exc
    except _Interrupted as exc:
        if exc.reason == "aborted":
            failure = StreamFailure(ABORTED_TEXT, ErrorInfo(ErrorKind.ABORTED))
        else:
            text = reply_time_text(options.total_timeout or budget.elapsed())
            failure = StreamFailure(text, ErrorInfo(ErrorKind.TIMEOUT, retryable=False))
    except httpx.HTTPError as exc:
        silence.spend()
        text = redact(transport_error_text(exc, options), request.secrets)
        failure = StreamFailure(text, classify(text))
    finally:
        guard.stop()
        if response is not None:
            await response.aclose()
        if client is not None:
            await client.aclose()
    if failure is None:
        yield DoneEvent(message["stopReason"], message)
        return
    text = redact(failure.text, request.secrets)
    info = failure.info or classify(text)
    aborted = info.kind is ErrorKind.ABORTED
    yield ErrorEvent(
        "aborted" if aborted else "error", error_message(model, text, aborted=aborted, base=message), info
    )


async def stream_request(
    model: Model, options: StreamOptions, build: Callable[[], HttpRequest], parser: StreamParser
) -> AsyncIterator[AssistantEvent]:
    """Build the request (a failure to build becomes an error event too) and run it."""
    try:
        request = build()
    except (TypeError, ValueError, KeyError, AttributeError) as exc:
        message = parser.message
        yield StartEvent(message)
        text = redact(f"Could not build the request from this conversation: {exc}", (options.api_key or "",))
        yield ErrorEvent(
            "error", error_message(model, text, base=message), ErrorInfo(ErrorKind.INVALID_REQUEST)
        )
        return
    async for event in run_sse_request(model, options, request, parser):
        yield event


def _server(exc: httpx.HTTPError) -> str:
    try:
        url = exc.request.url
    except RuntimeError:  # an error raised outside of a request
        return "the server"
    return f"{url.host}:{url.port}" if url.port else url.host
