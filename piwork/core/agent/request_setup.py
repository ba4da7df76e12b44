"""What one provider request of an AgentSession is made of, and the summarizer its compactions use.

Both are rebuilt from the session's current state before every request, so a model, thinking-level or
tool change applies from the next request on.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from piwork.core.agent.events import AgentEvent, AutoRetryEnd, AutoRetryStart
from piwork.core.agent.loop import RequestSetup, StreamFn
from piwork.core.agent.options import complete_through
from piwork.core.compaction.retry_policy import RetryPolicy
from piwork.core.llm.types import Model, StreamOptions, ThinkingLevel
from piwork.core.llm.types import ToolSpec as LlmToolSpec
from piwork.core.tools.base import ToolContext, ToolRegistry

if TYPE_CHECKING:
    from piwork.core.compaction.summarize import Summarizer


class RequestSource(Protocol):
    """What a request and a summarizer are built from (the session's options): the tools, the provider
    options and key, and what the session tells its tools about itself (folder, logs, ids, secrets)."""

    @property
    def registry(self) -> ToolRegistry: ...
    @property
    def base_options(self) -> StreamOptions: ...
    @property
    def api_key_for(self) -> Callable[[Model], str | None]: ...
    @property
    def known_secrets(self) -> Callable[[], tuple[str, ...]]: ...
    @property
    def cwd(self) -> str: ...
    @property
    def log_dir(self) -> Path | None: ...
    @property
    def session_id(self) -> str | None: ...
    @property
    def session_file(self) -> Path | None: ...
    @property
    def sleep(self) -> Callable[[float], Awaitable[None]]: ...


def request_setup(
    opts: RequestSource,
    model: Model,
    api_key: str | None,
    thinking_level: ThinkingLevel,
    tool_names: Sequence[str],
    system_prompt: str,
) -> RequestSetup:
    """Model, stream options, active tools and the tools' context for the next request (``api_key``:
    the model's key, looked up by the caller off the event loop)."""
    registry = opts.registry
    specs = [LlmToolSpec(s.name, s.description, s.parameters, s.strict) for s in registry.specs(tool_names)]
    active = ToolRegistry(t for t in registry if t.name in set(tool_names))
    options = replace(
        opts.base_options,
        api_key=api_key,
        thinking_level=thinking_level,
        session_id=opts.session_id,
    )
    context = ToolContext(
        cwd=opts.cwd,
        log_dir=opts.log_dir,
        session_env=session_env(opts, model, thinking_level),
        model_supports_images=model.supports_images,
        secrets=opts.known_secrets(),
        context_index=_index_read_answer,
    )
    return RequestSetup(model, system_prompt, specs, options, active, context)


def session_env(opts: RequestSource, model: Model, thinking_level: ThinkingLevel) -> dict[str, str]:
    """Variables the bash tool's commands see about the session (Pi's names)."""
    env = {"PI_PROVIDER": model.provider, "PI_MODEL": model.id, "PI_REASONING_LEVEL": thinking_level}
    if opts.session_id:
        env["PI_SESSION_ID"] = opts.session_id
    if opts.session_file is not None:
        env["PI_SESSION_FILE"] = str(opts.session_file)
    return env


def _index_read_answer(cwd: str) -> str:
    """What the read tool returns for the context index (the index module loads when it is read)."""
    from piwork.core.context.index import index_read_answer

    return index_read_answer(cwd)


def summarizer_for(
    opts: RequestSource,
    model: Model,
    thinking_level: ThinkingLevel,
    retry: RetryPolicy,
    stream_fn: StreamFn,
    emit: Callable[[AgentEvent], None],
) -> Summarizer:
    """A summarizer on the session's model and provider path (compaction and branch summaries)."""
    from piwork.core.compaction.summarize import Summarizer  # made when a compaction or summary runs

    return Summarizer(
        model=model,
        complete=complete_through(stream_fn),
        api_key=opts.api_key_for(model),
        thinking_level=thinking_level,
        retry=retry,
        base_options=opts.base_options,
        sleep=opts.sleep,
        # a summary request retried after a transient failure shows like a retried turn
        on_retry=lambda r: emit(AutoRetryStart(r.attempt, r.max_attempts, r.delay_ms, r.error_message)),
        on_retry_end=lambda r: emit(AutoRetryEnd(r.success, r.attempt, r.final_error)),
    )
