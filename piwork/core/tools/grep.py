"""The ``grep`` tool: matching lines (with optional context) under a folder or in one file."""

from __future__ import annotations

import asyncio
import math
import os
from typing import Any, ClassVar

from piwork.core.tools.base import Tool, ToolContext, ToolError, ToolFacts, ToolResult, UpdateCallback
from piwork.core.tools.grep_engines import (
    GrepQuery,
    SearchOutcome,
    find_ripgrep,
    search_in_python,
    search_with_ripgrep,
)
from piwork.core.tools.grep_output import GrepCollector, path_formatter
from piwork.core.tools.listing import finish_listing
from piwork.core.tools.paths import resolve_to_cwd
from piwork.core.truncate import DEFAULT_MAX_BYTES, GREP_MAX_LINE_LENGTH

DEFAULT_LIMIT = 100
MAX_CONTEXT = 2**53 - 1


class GrepTool(Tool):
    name = "grep"
    facts = ToolFacts(read_only=True, elidable=True, path_argument="path", pattern_argument="pattern")
    description = (
        "Search file contents for a regular expression (or literal text) and return matching lines as "
        "path:line: text. .gitignore rules are honoured. At most "
        f"{DEFAULT_LIMIT} matches or {DEFAULT_MAX_BYTES // 1024}KB are returned, whichever comes first, "
        f"and lines longer than {GREP_MAX_LINE_LENGTH} characters are shortened."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "required": ["pattern"],
        "properties": {
            "pattern": {
                "type": "string",
                "description": "Regular expression, or literal text with literal=true",
            },
            "path": {"type": "string", "description": "Folder or file to search (default: the cwd)"},
            "glob": {"type": "string", "description": "Only search files matching this glob, e.g. '*.py'"},
            "ignoreCase": {"type": "boolean", "description": "Ignore letter case (default false)"},
            "literal": {"type": "boolean", "description": "Treat the pattern as plain text (default false)"},
            "context": {
                "type": "number",
                "description": "Lines to show before and after each match (default 0)",
            },
            "limit": {"type": "number", "description": f"Most matches to return (default {DEFAULT_LIMIT})"},
        },
    }
    snippet = "Search file contents by regular expression (honours .gitignore)"

    def __init__(self, bin_dir: str | None = None, use_ripgrep: bool = True) -> None:
        self.bin_dir = bin_dir
        self.use_ripgrep = use_ripgrep

    async def execute(
        self, call_id: str, args: dict[str, Any], ctx: ToolContext, on_update: UpdateCallback | None = None
    ) -> ToolResult:
        target = resolve_to_cwd(args.get("path") or ".", ctx.cwd)
        try:
            is_dir = os.path.isdir(target) if os.path.exists(target) else None
        except OSError:
            is_dir = None
        if is_dir is None:
            raise ToolError(f"Path not found: {target}")
        raw_context = args.get("context")
        context = int(raw_context) if isinstance(raw_context, (int, float)) and raw_context > 0 else 0
        raw_limit = args.get("limit")
        limit = max(1, math.floor(raw_limit) if isinstance(raw_limit, (int, float)) else DEFAULT_LIMIT)
        query = GrepQuery(
            args["pattern"],
            target,
            is_dir,
            args.get("glob") or None,
            bool(args.get("ignoreCase")),
            bool(args.get("literal")),
            limit,
            min(context, MAX_CONTEXT),
        )
        collector = GrepCollector(limit, query.context, path_formatter(target, is_dir))
        outcome = await self._search(query, collector)
        if not collector.match_count:
            if outcome.errors:
                raise ToolError("\n".join(outcome.errors))
            return ToolResult.text("No matches found")
        notices: list[str] = []
        after: list[str] = []
        details: dict[str, Any] = {}
        if collector.limit_reached:
            notices.append(
                f"{limit} matches limit reached. Use limit={limit * 2} for more, or refine pattern"
            )
            details["matchLimitReached"] = limit
        if collector.lines_truncated:
            after.append(
                f"Some lines truncated to {GREP_MAX_LINE_LENGTH} chars. Use read tool to see full lines"
            )
            details["linesTruncated"] = True
        if outcome.errors:
            after.append(f"Some files could not be searched: {outcome.errors[0]}")
            details["searchErrors"] = outcome.errors[:20]
        return finish_listing(
            collector.lines, notices, details, after, totals=(collector.total_lines, collector.total_bytes)
        )

    async def _search(self, query: GrepQuery, collector: GrepCollector) -> SearchOutcome:
        rg = find_ripgrep(self.bin_dir) if self.use_ripgrep else None
        try:
            if rg is not None:
                return await search_with_ripgrep(rg, query, collector)
            cancelled = [False]
            worker = asyncio.ensure_future(asyncio.to_thread(search_in_python, query, collector, cancelled))
            try:
                return await asyncio.shield(worker)
            except asyncio.CancelledError:
                cancelled[0] = True
                raise
        except asyncio.CancelledError:
            raise ToolError("Operation aborted", aborted=True) from None
