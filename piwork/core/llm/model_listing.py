"""Ask an OpenAI-compatible server which models it serves (``GET <baseUrl>/models``).

Used by the window's "Test connection": the outcome always says exactly what happened — the URL asked,
the HTTP status and an excerpt of the body, or the transport failure — and never contains the key.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

from piwork.core.llm.error_text import body_message, status_phrase
from piwork.core.llm.httpx_library import httpx
from piwork.core.llm.transport import make_client
from piwork.core.llm.types import StreamOptions
from piwork.core.redaction import redact_text

LIST_TIMEOUT_S = 10.0
LIST_DEADLINE_FACTOR = 3  # the whole listing may take this many times the silence limit
MAX_BODY = 64_000


@dataclass(frozen=True)
class ListedModel:
    id: str
    context_window: int | None = None  # when the server says (vLLM max_model_len, LM Studio, OpenRouter)


@dataclass(frozen=True)
class ModelListing:
    url: str
    ok: bool
    models: list[ListedModel] = field(default_factory=list)
    problem: str = ""  # for people: what failed and where
    status: int | None = None


def models_url(base_url: str) -> str:
    return base_url.rstrip("/") + "/models"


def _context_of(entry: dict[str, Any]) -> int | None:
    for key in ("context_length", "max_model_len", "max_context_length", "context_window"):
        value = entry.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    meta = entry.get("meta")
    if isinstance(meta, dict):
        value = meta.get("n_ctx_train") or meta.get("n_ctx")
        if isinstance(value, int) and value > 0:
            return value
    return None


def parse_models_answer(data: Any) -> list[ListedModel]:
    """Models of an OpenAI-style ``{"data": [{"id": ...}]}`` answer (Ollama's ``{"models": [...]}`` too).
    ``ValueError`` names what is missing."""
    entries = None
    if isinstance(data, dict):
        entries = data.get("data", data.get("models"))
    elif isinstance(data, list):
        entries = data
    if not isinstance(entries, list):
        raise ValueError('the answer has no "data" list of models')
    models: list[ListedModel] = []
    seen: set[str] = set()
    for entry in entries:
        if isinstance(entry, str):
            entry = {"id": entry}
        if not isinstance(entry, dict):
            continue
        model_id = entry.get("id") or entry.get("model") or entry.get("name")
        if isinstance(model_id, str) and model_id and model_id not in seen:
            seen.add(model_id)
            models.append(ListedModel(model_id, _context_of(entry)))
    return models


def _advice(status: int, url: str) -> str:
    if status in (401, 403):
        return " Check the API key."
    if status == 404:
        return " Check the base URL: for most servers it ends in /v1."
    return ""


async def list_models(
    base_url: str,
    api_key: str | None = None,
    headers: dict[str, str] | None = None,
    timeout: float = LIST_TIMEOUT_S,
    proxy: str | None = None,
) -> ModelListing:
    url = models_url(base_url)
    secrets = (api_key,) if api_key else ()
    if not url.startswith(("http://", "https://")):
        return ModelListing(
            url, False, problem=f"The base URL must start with http:// or https:// (got {base_url!r})."
        )
    request_headers = {"accept": "application/json", **(headers or {})}
    if api_key:
        request_headers["authorization"] = f"Bearer {api_key}"
    try:
        # a server that drips its answer byte by byte is cut off as a whole, not only when silent
        async with asyncio.timeout(timeout * LIST_DEADLINE_FACTOR):
            # the client the providers use: same certificates, and proxies for remote hosts only; built in
            # a worker as they build theirs (loading the certificates takes tens of milliseconds)
            options = StreamOptions(connect_timeout=timeout, idle_timeout=timeout, proxy=proxy)
            client = await asyncio.to_thread(make_client, options, url)
            async with (
                client,
                client.stream("GET", url, headers=request_headers) as response,
            ):
                raw = b""
                async for chunk in response.aiter_bytes():
                    raw += chunk
                    if len(raw) > MAX_BODY:
                        break
                status = response.status_code
    except TimeoutError:
        where = httpx.URL(url).host
        return ModelListing(
            url,
            False,
            problem=f"{where} did not finish answering within {timeout * LIST_DEADLINE_FACTOR:g} s.",
        )
    except httpx.InvalidURL as exc:
        return ModelListing(url, False, problem=f"{base_url} is not a usable URL ({exc}).")
    except httpx.HTTPError as exc:
        host = httpx.URL(url).host
        port = httpx.URL(url).port
        where = f"{host}:{port}" if port else host
        detail = redact_text(str(exc).strip() or type(exc).__name__, secrets)
        if isinstance(exc, httpx.ConnectError):
            text = (
                f"Could not connect to {where} ({detail}). Is the server running, and is the address right?"
            )
        elif isinstance(exc, httpx.TimeoutException):
            text = f"{where} did not answer within {timeout:g} s ({type(exc).__name__})."
        else:
            text = f"The request to {where} failed: {detail}"
        return ModelListing(url, False, problem=text)
    body = raw.decode("utf-8", errors="replace")
    if not 200 <= status < 300:
        excerpt = redact_text(body_message(body), secrets) or "(empty body)"
        head = f"{status} {status_phrase(status)}".strip()
        return ModelListing(
            url, False, status=status, problem=f"GET {url} answered {head}: {excerpt}.{_advice(status, url)}"
        )
    try:
        models = parse_models_answer(json.loads(body))
    except ValueError as exc:
        excerpt = redact_text(body_message(body), secrets) or "(empty body)"
        return ModelListing(
            url, False, status=status, problem=f"GET {url} answered {status}, but {_reason(exc)}: {excerpt}"
        )
    return ModelListing(url, True, models, status=status)


def _reason(exc: ValueError) -> str:
    text = str(exc)
    return text if text.startswith("the answer") else "the answer is not JSON"
