"""The ``ls`` tool: one folder's entries, sorted case-insensitively, folders marked with ``/``."""

from __future__ import annotations

import os
import stat
import unicodedata
from typing import Any, ClassVar

from piwork.core.tools.base import Tool, ToolContext, ToolError, ToolFacts, ToolResult, UpdateCallback
from piwork.core.tools.listing import clamp_limit, finish_listing, run_aborting
from piwork.core.tools.paths import resolve_to_cwd
from piwork.core.truncate import DEFAULT_MAX_BYTES

DEFAULT_LIMIT = 500


class LsTool(Tool):
    name = "ls"
    facts = ToolFacts(read_only=True, elidable=True, path_argument="path")
    description = (
        "List a folder's entries (dotfiles included) in alphabetical order, with a trailing '/' on "
        f"folders. At most {DEFAULT_LIMIT} entries or {DEFAULT_MAX_BYTES // 1024}KB are returned, "
        "whichever comes first."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "Folder to list (default: the cwd)"},
            "limit": {"type": "number", "description": f"Most entries to return (default {DEFAULT_LIMIT})"},
        },
    }
    snippet = "List the entries of a folder"

    async def execute(
        self, call_id: str, args: dict[str, Any], ctx: ToolContext, on_update: UpdateCallback | None = None
    ) -> ToolResult:
        limit = clamp_limit(args.get("limit"), DEFAULT_LIMIT)
        folder = resolve_to_cwd(args.get("path") or ".", ctx.cwd)
        return await run_aborting(lambda: _list(folder, limit))


def _sort_key(name: str) -> tuple[str, str, str]:
    """Case-insensitive, accents compared after letters (close to locale collation: é sorts with e)."""
    folded = name.casefold()
    base = "".join(c for c in unicodedata.normalize("NFD", folded) if not unicodedata.combining(c))
    return base, folded, name


def _list(folder: str, limit: int) -> ToolResult:
    if not os.path.exists(folder):
        raise ToolError(f"Path not found: {folder}")
    if not os.path.isdir(folder):
        raise ToolError(f"Not a directory: {folder}")
    try:
        names = os.listdir(folder)
    except OSError as err:
        raise ToolError(f"Cannot read directory: {err.strerror or err}") from None
    names.sort(key=_sort_key)
    results: list[str] = []
    limit_reached = False
    for name in names:
        if len(results) >= limit:
            limit_reached = True
            break
        try:
            info = os.stat(os.path.join(folder, name))
        except (OSError, ValueError):
            continue  # cannot be stat-ed (a broken link, say)
        results.append(name + ("/" if stat.S_ISDIR(info.st_mode) else ""))
    if not results:
        return ToolResult.text("(empty directory)")
    notices: list[str] = []
    details: dict[str, Any] = {}
    if limit_reached:
        notices.append(f"{limit} entries limit reached. Use limit={limit * 2} for more")
        details["entryLimitReached"] = limit
    return finish_listing(results, notices, details)
