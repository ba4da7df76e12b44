"""When the agent should compact on its own: the decisions at the three checkpoints.

- Checkpoint A, between a tool batch and the next request: ``due_before_next_response``.
- Checkpoint B (after a run, ``skip_aborted=True``) and C (before a new prompt,
  ``skip_aborted=False``): ``check_after_response`` on the last assistant message.

These are pure decisions; the agent compacts for the returned reason and keeps the
one-retry-per-prompt flag (``recovery_attempted``): set it when a decision says ``will_retry``,
reset it when a user message starts or an assistant message ends with a stop reason other than
``error``/``length``.

piwork deviation (``strict_pi=False``): without a known context window (missing model, or
``contextWindow`` ≤ 0) checkpoints B and C do nothing, like checkpoint A, instead of comparing
against a negative threshold.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from piwork.core.compaction.settings import CompactionSettings
from piwork.core.compaction.tokens import estimate_context_tokens, should_compact
from piwork.core.llm.errors import is_context_overflow
from piwork.core.llm.types import Model
from piwork.core.usage import calculate_context_tokens

OVERFLOW_RECOVERY_FAILED = (
    "Context overflow recovery failed after one compact-and-retry attempt. "
    "Try reducing context or switching to a larger-context model."
)
LENGTH_RECOVERY_FAILED = "Truncated response recovery failed after one compact-and-retry attempt."


@dataclass(frozen=True)
class CompactionCheck:
    """``compact``: run a compaction with ``reason``/``will_retry`` (when ``drop_failed_message``,
    first remove the failed assistant message from the in-memory context — it stays in the file);
    ``recovery_failed``: report ``error_message`` as a failed ``compaction_end`` (reason overflow)."""

    action: Literal["none", "compact", "recovery_failed"]
    reason: Literal["threshold", "overflow"] = "threshold"
    will_retry: bool = False
    drop_failed_message: bool = False
    error_message: str | None = None


NOTHING = CompactionCheck("none")


def due_before_next_response(
    messages: Sequence[Mapping[str, Any]],
    model: Model | None,
    settings: CompactionSettings,
    edited_context_tokens: float | None = None,
) -> bool:
    """Checkpoint A: compact (reason threshold, no retry) before sending the next request?

    ``edited_context_tokens``: the context's size when context edits are in force (see
    ``check_after_response``)."""
    if model is None or model.context_window <= 0:
        return False
    tokens = (
        estimate_context_tokens(messages).tokens if edited_context_tokens is None else edited_context_tokens
    )
    return should_compact(tokens, model.context_window, settings)


def _number(value: Any) -> float | None:
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None


def _not_newer(message: Mapping[str, Any], compaction_ms: float | None) -> bool:
    """``message.timestamp <= compaction time`` (false when either is unknown, as in JavaScript)."""
    stamp = _number(message.get("timestamp"))
    return compaction_ms is not None and stamp is not None and stamp <= compaction_ms


def _recoverable_length(message: Mapping[str, Any], model: Model) -> bool:
    usage = message.get("usage")
    output = _number(usage.get("output")) if isinstance(usage, Mapping) else None
    return (
        message.get("stopReason") == "length"
        and model.max_tokens > 0
        and output is not None
        and output < model.max_tokens
    )


def check_after_response(
    message: Mapping[str, Any],
    *,
    model: Model | None,
    settings: CompactionSettings,
    messages: Sequence[Mapping[str, Any]],
    latest_compaction_ms: float | None,
    skip_aborted: bool,
    recovery_attempted: bool,
    strict_pi: bool,
    edited_context_tokens: float | None = None,
) -> CompactionCheck:
    """Checkpoints B and C: what to do about the last assistant ``message``.

    ``messages`` is the in-memory context; ``latest_compaction_ms`` the time of the newest
    compaction on the branch (None without one). ``edited_context_tokens``, given when context edits
    are in force on the branch, is the context's size after them: the threshold then weighs it instead
    of the reply's usage (which measured the context before an edit).
    """
    if not settings.enabled:
        return NOTHING
    stop = message.get("stopReason")
    if skip_aborted and stop == "aborted":
        return NOTHING
    if _not_newer(message, latest_compaction_ms):
        return NOTHING  # its usage describes the context before the compaction
    window = model.context_window if model is not None else 0
    if not strict_pi and window <= 0:
        return NOTHING
    same_model = (
        model is not None and message.get("provider") == model.provider and message.get("model") == model.id
    )
    overflow = same_model and is_context_overflow(dict(message), window)
    truncated = same_model and model is not None and _recoverable_length(message, model)
    if overflow or truncated:
        if stop == "stop":
            return CompactionCheck("compact", "overflow")
        if recovery_attempted:
            text = OVERFLOW_RECOVERY_FAILED if overflow else LENGTH_RECOVERY_FAILED
            return CompactionCheck("recovery_failed", "overflow", error_message=text)
        return CompactionCheck("compact", "overflow", will_retry=True, drop_failed_message=True)

    usage = message.get("usage")
    direct = calculate_context_tokens(usage) if isinstance(usage, Mapping) and usage else 0
    if edited_context_tokens is not None:
        tokens = edited_context_tokens
    elif stop == "error" or direct == 0:
        estimate = estimate_context_tokens(messages)
        if estimate.last_usage_index is not None:
            source = messages[estimate.last_usage_index]
            if source.get("role") == "assistant" and _not_newer(source, latest_compaction_ms):
                return NOTHING
        tokens = estimate.tokens
    else:
        tokens = direct
    if should_compact(tokens, window, settings):
        return CompactionCheck("compact", "threshold")
    return NOTHING
