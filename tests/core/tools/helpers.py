"""Small helpers for running tools against real files and processes."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from piwork.core.tools.base import ToolContext, ToolOutcome, ToolResult
from piwork.core.tools.registry import ALL_TOOL_NAMES, create_default_tools

REGISTRY = create_default_tools(ALL_TOOL_NAMES)


def call(tool: str, args: Any, cwd: Path, **ctx: Any) -> ToolOutcome:
    """Run one tool call through the registry (validation included) and return its outcome."""
    context = ToolContext(cwd=str(cwd), log_dir=ctx.pop("log_dir", cwd / ".logs"), **ctx)
    return asyncio.run(REGISTRY.run("call-1", tool, args, context))


def text(outcome: ToolOutcome | ToolResult) -> str:
    return "".join(block["text"] for block in outcome.content if block["type"] == "text")
