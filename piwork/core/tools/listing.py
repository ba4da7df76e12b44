"""Shared output shaping for the listing tools (ls, find, grep): byte cap and bracketed notices."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from piwork.core.tools.base import ToolError, ToolResult
from piwork.core.truncate import DEFAULT_MAX_BYTES, format_size, truncate_head

T = TypeVar("T")
NO_LINE_LIMIT = 2**53 - 1


def finish_listing(
    lines: list[str],
    notices: list[str],
    details: dict[str, Any],
    after: Sequence[str] = (),
    totals: tuple[int, int] | None = None,
) -> ToolResult:
    """Join ``lines``, cap at 50 KiB, then append ``[notice. notice]``; ``details`` gets ``truncation``.

    ``notices`` come before the byte-limit notice, ``after`` after it. ``totals`` (lines, bytes) of the
    whole output are given when ``lines`` holds only its head (the rest lies past the byte cap anyway).
    """
    truncation = truncate_head("\n".join(lines), NO_LINE_LIMIT)
    output = truncation.content
    all_notices = list(notices)
    if truncation.truncated:
        all_notices.append(f"{format_size(DEFAULT_MAX_BYTES)} limit reached")
        record = truncation.to_json()
        if totals is not None:
            record["totalLines"], record["totalBytes"] = totals
        details["truncation"] = record
    all_notices.extend(after)
    if all_notices:
        output += f"\n\n[{'. '.join(all_notices)}]"
    return ToolResult.text(output, details or None)


async def run_aborting(work: Callable[[], T]) -> T:
    """Run blocking ``work`` in a thread; cancellation becomes ``Operation aborted``."""
    try:
        return await asyncio.to_thread(work)
    except asyncio.CancelledError:
        raise ToolError("Operation aborted", aborted=True) from None


def clamp_limit(value: Any, default: int) -> int:
    """``limit`` rounded down to a whole number of at least 1 (``None`` → default)."""
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ToolError("Invalid limit: must be a number")
    return max(1, math.floor(value))
