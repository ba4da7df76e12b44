"""The ``grep`` tool: matching lines (with optional context) under a folder or in one file."""

from __future__ import annotations

import asyncio
import os
from typing import Any, ClassVar

from piwork.core.tools.base import Tool, ToolContext, ToolError, ToolResult, UpdateCallback
from piwork.core.tools.grep_engines import (
    GrepQuery,
    Match,
    SearchOutcome,
    find_ripgrep,
    search_in_python,
    search_with_ripgrep,
)
from piwork.core.tools.listing import finish_listing
from piwork.core.tools.paths import resolve_to_cwd
from piwork.core.truncate import DEFAULT_MAX_BYTES, GREP_MAX_LINE_LENGTH, TRUNCATED_LINE_SUFFIX, truncate_line

DEFAULT_LIMIT = 100


def _cap_line(text: str) -> tuple[str, bool]:
    """Cap at 500 UTF-16 units without leaving half of a surrogate pair behind."""
    capped = truncate_line(text)
    if not capped.was_truncated:
        return capped.text, False
    kept = capped.text[: -len(TRUNCATED_LINE_SUFFIX)]
    if kept and "\ud800" <= kept[-1] <= "\udbff":
        kept = kept[:-1]
    return kept + TRUNCATED_LINE_SUFFIX, True


class _Formatter:
    def __init__(self, query: GrepQuery, context: int) -> None:
        self.query = query
        self.context = context
        self.lines_truncated = False
        self._files: dict[str, list[str]] = {}

    def rel(self, path: str) -> str:
        if self.query.is_dir:
            relative = os.path.relpath(path, self.query.path)
            if relative != "." and not relative.startswith(".."):
                return relative.replace(os.sep, "/")
        return os.path.basename(path)

    def _file_lines(self, path: str) -> list[str]:
        if path not in self._files:
            try:
                with open(path, "rb") as handle:
                    text = handle.read().decode("utf-8", "replace")
                self._files[path] = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
            except OSError:
                self._files[path] = []
        return self._files[path]

    def _cap(self, text: str) -> str:
        capped, cut = _cap_line(text)
        self.lines_truncated = self.lines_truncated or cut
        return capped

    def format(self, match: Match) -> list[str]:
        rel = self.rel(match.path)
        if self.context == 0 and match.text is not None:
            text = match.text.replace("\r\n", "\n").replace("\r", "")
            text = text[:-1] if text.endswith("\n") else text
            return [f"{rel}:{match.line_number}: {self._cap(text)}"]
        lines = self._file_lines(match.path)
        if not lines:
            return [f"{rel}:{match.line_number}: (unable to read file)"]
        start = max(1, match.line_number - self.context) if self.context else match.line_number
        end = min(len(lines), match.line_number + self.context) if self.context else match.line_number
        block = []
        for number in range(start, end + 1):
            text = self._cap((lines[number - 1] if number <= len(lines) else "").replace("\r", ""))
            sep = ":" if number == match.line_number else "-"
            block.append(f"{rel}{sep}{number}{sep} {text}")
        return block


class GrepTool(Tool):
    name = "grep"
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
        limit = max(1, int(raw_limit) if isinstance(raw_limit, (int, float)) else DEFAULT_LIMIT)
        query = GrepQuery(
            args["pattern"],
            target,
            is_dir,
            args.get("glob") or None,
            bool(args.get("ignoreCase")),
            bool(args.get("literal")),
            limit,
        )
        outcome = await self._search(query)
        if not outcome.matches:
            if outcome.errors:
                raise ToolError("\n".join(outcome.errors))
            return ToolResult.text("No matches found")
        formatter = _Formatter(query, context)
        lines = [row for match in outcome.matches for row in formatter.format(match)]
        notices: list[str] = []
        after: list[str] = []
        details: dict[str, Any] = {}
        if outcome.limit_reached:
            notices.append(
                f"{limit} matches limit reached. Use limit={limit * 2} for more, or refine pattern"
            )
            details["matchLimitReached"] = limit
        if formatter.lines_truncated:
            after.append(
                f"Some lines truncated to {GREP_MAX_LINE_LENGTH} chars. Use read tool to see full lines"
            )
            details["linesTruncated"] = True
        if outcome.errors:
            after.append(f"Some files could not be searched: {outcome.errors[0]}")
            details["searchErrors"] = outcome.errors[:20]
        return finish_listing(lines, notices, details, after)

    async def _search(self, query: GrepQuery) -> SearchOutcome:
        rg = find_ripgrep(self.bin_dir) if self.use_ripgrep else None
        try:
            if rg is not None:
                return await search_with_ripgrep(rg, query)
            cancelled = [False]
            worker = asyncio.ensure_future(asyncio.to_thread(search_in_python, query, cancelled))
            try:
                return await asyncio.shield(worker)
            except asyncio.CancelledError:
                cancelled[0] = True
                raise
        except asyncio.CancelledError:
            raise ToolError("Operation aborted", aborted=True) from None
