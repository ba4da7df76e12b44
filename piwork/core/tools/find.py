"""The ``find`` tool: files and folders whose name (or path) matches a glob, ignore files honoured."""

from __future__ import annotations

import os
import re
from typing import Any, ClassVar

from piwork.core.tools.base import Tool, ToolContext, ToolError, ToolFacts, ToolResult, UpdateCallback
from piwork.core.tools.globs import compile_glob
from piwork.core.tools.listing import clamp_limit, finish_listing, run_aborting
from piwork.core.tools.paths import resolve_to_cwd
from piwork.core.tools.walk import IgnoreMatcher, walk
from piwork.core.truncate import DEFAULT_MAX_BYTES

DEFAULT_LIMIT = 1000
SKIPPED_DIRS = frozenset({".git", "node_modules"})


class FindTool(Tool):
    name = "find"
    facts = ToolFacts(read_only=True, elidable=True, path_argument="path", pattern_argument="pattern")
    description = (
        "Find files and folders by glob pattern (matched against names, or against paths when the "
        "pattern contains '/'); .gitignore rules are honoured and paths come back relative to the "
        f"search folder. At most {DEFAULT_LIMIT} results or {DEFAULT_MAX_BYTES // 1024}KB are returned, "
        "whichever comes first."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "required": ["pattern"],
        "properties": {
            "pattern": {
                "type": "string",
                "description": "Glob such as '*.py', '**/*.json' or 'src/**/test_*.py'",
            },
            "path": {"type": "string", "description": "Folder to search (default: the cwd)"},
            "limit": {"type": "number", "description": f"Most results to return (default {DEFAULT_LIMIT})"},
        },
    }
    snippet = "Find files by name or path glob (honours .gitignore)"

    async def execute(
        self, call_id: str, args: dict[str, Any], ctx: ToolContext, on_update: UpdateCallback | None = None
    ) -> ToolResult:
        limit = clamp_limit(args.get("limit"), DEFAULT_LIMIT)
        folder = resolve_to_cwd(args.get("path") or ".", ctx.cwd)
        pattern: str = args["pattern"]
        return await run_aborting(lambda: _find(folder, pattern, limit))


def _find(folder: str, pattern: str, limit: int) -> ToolResult:
    if not os.path.exists(folder):
        raise ToolError(f"Path not found: {folder}")
    if not os.path.isdir(folder):
        raise ToolError(f"Not a directory: {folder}")
    pattern = re.sub(r"^(?:\./)+", "", pattern)  # no listed path contains "./"
    full_path = "/" in pattern
    # a relative path pattern is anchored at the search folder ('src/*.py' is not 'pkg/src/a.py';
    # '**/src/*.py' finds both); an absolute one is matched against the absolute path
    absolute = full_path and os.path.isabs(pattern)
    matcher = compile_glob(pattern)
    ignore = IgnoreMatcher(folder, ".fdignore", require_git=False)
    results: list[str] = []
    limit_reached = False
    for entry in walk(folder, ignore, SKIPPED_DIRS):
        subject = entry.path if absolute else entry.rel if full_path else os.path.basename(entry.path)
        if matcher.match(subject):
            if len(results) == limit:
                limit_reached = True  # one result past the limit tells "exactly N" from "more"
                break
            results.append(entry.rel + ("/" if entry.is_dir else ""))
    if not results:
        return ToolResult.text("No files found matching pattern")
    notices: list[str] = []
    details: dict[str, Any] = {}
    if limit_reached:
        notices.append(f"{limit} results limit reached. Use limit={limit * 2} for more, or refine pattern")
        details["resultLimitReached"] = limit
    return finish_listing(results, notices, details)
