"""truncate suite: truncate_head, truncate_tail, truncate_line, format_size."""

from __future__ import annotations

from typing import Any

from piwork.conformance.harness import CaseEnv
from piwork.core.truncate import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_LINES,
    GREP_MAX_LINE_LENGTH,
    format_size,
    truncate_head,
    truncate_line,
    truncate_tail,
)


def _limits(args: dict[str, Any]) -> tuple[int, int]:
    options = args.get("options") or {}
    max_lines = options.get("maxLines")
    max_bytes = options.get("maxBytes")
    return (
        DEFAULT_MAX_LINES if max_lines is None else max_lines,
        DEFAULT_MAX_BYTES if max_bytes is None else max_bytes,
    )


def _head(args: dict[str, Any], env: CaseEnv) -> Any:
    return truncate_head(args["content"], *_limits(args)).to_json()


def _tail(args: dict[str, Any], env: CaseEnv) -> Any:
    return truncate_tail(args["content"], *_limits(args)).to_json()


def _line(args: dict[str, Any], env: CaseEnv) -> Any:
    max_chars = args.get("maxChars")
    result = truncate_line(args["line"], GREP_MAX_LINE_LENGTH if max_chars is None else max_chars)
    return {"text": result.text, "wasTruncated": result.was_truncated}


def _size(args: dict[str, Any], env: CaseEnv) -> Any:
    return {"text": format_size(args["bytes"])}


OPS = {
    "truncate_head": _head,
    "truncate_tail": _tail,
    "truncate_line": _line,
    "format_size": _size,
}
