"""Context tools the model can call during a task: preflight, budget, index status and index search.

They answer from piwork's own figures (the marks, the governor's occupancy and elisions, the context
index) with small JSON documents, each bounded in items and characters, so asking costs little. Active
whenever a Task Contract is (read-only tasks included: they change nothing). The index is advisory: the
answers say so, and the model reads the real files before editing.
"""

from __future__ import annotations

import abc
import asyncio
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from piwork.core.context.contract import CONTEXT_TOOLS, SEARCH_RESULTS
from piwork.core.context.elision import STUB_MARK
from piwork.core.tools.base import Tool, ToolContext, ToolError, ToolFacts, ToolResult, UpdateCallback

if TYPE_CHECKING:
    from piwork.core.workflows.view import ContextView

PREFLIGHT, BUDGET, INDEX_STATUS, INDEX_SEARCH = CONTEXT_TOOLS
CONTEXT_TOOL_NAMES = CONTEXT_TOOLS

MAX_ANSWER_CHARS = 4_000
MAX_FILES = 20
MAX_RESULTS = SEARCH_RESULTS
RECENT_DECISIONS = 5


@dataclass(frozen=True)
class GovernorFigures:
    """What the running governor knows that a view of the session file does not."""

    occupancy: int | None  # best figure of the last request sent (None: nothing sent yet)
    source: str  # "provider" | "estimate"
    elided_results: int  # tool results the working set carries as stubs
    elided_tokens: int
    decisions: tuple[dict[str, Any], ...]  # the latest log rows, newest last


ViewSource = Callable[[], "ContextView | None"]
FiguresSource = Callable[[], GovernorFigures | None]


def bounded(doc: dict[str, Any]) -> str:
    """``doc`` as compact JSON of at most :data:`MAX_ANSWER_CHARS` (long lists are cut, and say so)."""
    text = json.dumps(doc, ensure_ascii=False, separators=(",", ":"))
    if len(text) <= MAX_ANSWER_CHARS:
        return text
    for key in ("files", "results", "decisions", "advice"):
        items = doc.get(key)
        while isinstance(items, list) and len(items) > 1 and len(text) > MAX_ANSWER_CHARS:
            items.pop()
            doc["truncated"] = True
            text = json.dumps(doc, ensure_ascii=False, separators=(",", ":"))
    return text if len(text) <= MAX_ANSWER_CHARS else text[: MAX_ANSWER_CHARS - 1] + "…"


class _ContextTool(Tool):
    snippet: ClassVar[str]
    facts = ToolFacts(read_only=True)  # they measure and look up; nothing changes

    def __init__(self, view: ViewSource, figures: FiguresSource) -> None:
        self._view = view
        self._figures = figures

    async def execute(
        self, call_id: str, args: dict[str, Any], ctx: ToolContext, on_update: UpdateCallback | None = None
    ) -> ToolResult:
        figures = self._figures()  # on the loop: the governor's state is read where it changes
        view = await asyncio.to_thread(self._view)
        if view is None:
            raise ToolError("No session to measure: the context tools need a running session.")
        doc = await asyncio.to_thread(self.answer, view, figures, args)
        return ToolResult.text(bounded(doc))

    @abc.abstractmethod
    def answer(
        self, view: ContextView, figures: GovernorFigures | None, args: dict[str, Any]
    ) -> dict[str, Any]:
        """The tool's bounded JSON answer about ``view`` (each context tool says its own)."""


class ContextPreflight(_ContextTool):
    name = PREFLIGHT
    description = (
        "Check before reading large files or starting a big step: would the next request still fit the "
        "context budget with these files (and this plan) added, what would the files cost in tokens and "
        "money, and what to do if not. Reads only file sizes and counts; returns a small JSON verdict."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "paths": {
                "type": "array",
                "items": {"type": "string"},
                "description": "Files you plan to read, relative to the project (at most 20)",
            },
            "plan": {"type": "string", "description": "Text you plan to send, if any"},
        },
    }
    snippet = "Check whether planned files or text would fit the context budget, and their cost"

    def answer(
        self, view: ContextView, figures: GovernorFigures | None, args: dict[str, Any]
    ) -> dict[str, Any]:
        raw = args.get("paths")
        paths = [p for p in raw if isinstance(p, str)][:MAX_FILES] if isinstance(raw, list) else []
        plan = args.get("plan") if isinstance(args.get("plan"), str) else ""
        from piwork.core.workflows.commands import preflight  # the reports, loaded when a tool is called

        report = preflight(view, str(plan), _inside(view.cwd, paths))
        estimate = report["estimate"]
        projected = estimate["projected"]
        if figures is not None and figures.occupancy is not None and figures.source == "provider":
            projected = figures.occupancy  # the provider's count of what was last sent
        planned = estimate["plannedFiles"]
        price = view.model.cost.input if view.model is not None else 0.0
        return {
            "verdict": report["verdict"],
            "projected": projected,
            "planned": planned,
            "after": projected + planned,
            "marks": report["marks"],
            "costUsd": round(planned * price / 1_000_000, 4),
            "files": [
                {"path": _relative(view.cwd, r["path"]), "tokens": r["tokens"]} for r in report["files"]
            ],
            "advice": report["advice"][:4],
            "tokenizer": report["tokenizer"],
        }


class ContextBudget(_ContextTool):
    name = BUDGET
    description = (
        "The context budget now: how many tokens the next request holds (and whether the provider counted "
        "them or piwork estimated), the marks (pressure, ceiling, compaction, pricing), what the governor "
        "has elided from the working set, and its latest decisions. Small JSON answer."
    )
    parameters: ClassVar[dict[str, Any]] = {"type": "object", "properties": {}}
    snippet = "Show the context budget: occupancy, marks, elided results, recent governor decisions"

    def answer(
        self, view: ContextView, figures: GovernorFigures | None, args: dict[str, Any]
    ) -> dict[str, Any]:
        from piwork.core.workflows.commands import budget

        report = budget(view)
        occupancy = dict(report["occupancy"])
        out: dict[str, Any] = {
            "occupancy": occupancy,
            "marks": report["marks"],
            "tokenizer": report["tokenizer"],
        }
        if figures is not None:
            if figures.occupancy is not None and occupancy.get("source") != "provider":
                # no reply count to go by: the governor's figure of what it last sent
                occupancy.update(tokens=figures.occupancy, source=figures.source)
            out["elided"] = {"results": figures.elided_results, "tokens": figures.elided_tokens}
            out["decisions"] = list(figures.decisions[-RECENT_DECISIONS:])
        return out


class ContextIndexStatus(_ContextTool):
    name = INDEX_STATUS
    description = (
        "Whether the project's context index (an advisory map of the code) exists and is fresh: its "
        "entries counted as fresh, changed or missing. Small JSON answer."
    )
    parameters: ClassVar[dict[str, Any]] = {"type": "object", "properties": {}}
    snippet = "Show whether the project's context index exists and is fresh"

    def answer(
        self, view: ContextView, figures: GovernorFigures | None, args: dict[str, Any]
    ) -> dict[str, Any]:
        from piwork.core.workflows.commands import index_status_command

        report = index_status_command(view)
        report.pop("path", None)
        report["problems"] = report.get("problems", [])[:5]
        return report


class ContextIndexSearch(_ContextTool):
    name = INDEX_SEARCH
    description = (
        "Find where to start reading: files and top-level symbols of the project that match the query, "
        "from the context index (a hint, not the source: read the files before changing them). "
        "At most 10 results."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "Words to look for: a feature, a name, a path"},
            "limit": {"type": "integer", "description": "Most results to return (1-10, default 10)"},
        },
        "required": ["query"],
    }
    snippet = "Search the project's context index for files and symbols matching a query"

    def answer(
        self, view: ContextView, figures: GovernorFigures | None, args: dict[str, Any]
    ) -> dict[str, Any]:
        limit = args.get("limit")
        count = max(1, min(MAX_RESULTS, limit)) if isinstance(limit, int) else MAX_RESULTS
        from piwork.core.workflows.commands import search_report

        return search_report(view, str(args.get("query", "")), count)


def _relative(cwd: str, path: str) -> str:
    rel = os.path.relpath(path, cwd) if os.path.isabs(path) else path
    return rel.replace(os.sep, "/")


def _inside(cwd: str, paths: Sequence[str]) -> list[str]:
    """The planned paths that lie inside the project (others are not measured)."""
    root = os.path.realpath(cwd)
    out = []
    for path in paths:
        full = os.path.realpath(os.path.join(root, path))
        if full == root or full.startswith(root + os.sep):
            out.append(path)
    return out


def context_tools(view: ViewSource, figures: FiguresSource) -> list[Tool]:
    return [
        ContextPreflight(view, figures),
        ContextBudget(view, figures),
        ContextIndexStatus(view, figures),
        ContextIndexSearch(view, figures),
    ]


def governor_figures(governance: Any) -> GovernorFigures | None:
    """The figures of a session's governance (``SessionGovernance``): its last request and log."""
    outcome = getattr(governance, "last_outcome", None)
    governor = getattr(governance, "governor", None)
    if governor is None:
        return None
    rows = tuple(
        {
            "decision": d.decision,
            "triggers": list(d.triggers),
            "before": d.occupancy_before,
            "after": d.occupancy_after,
            "savings": d.savings,
            "elided": len(d.elided),
        }
        for d in governor.log[-RECENT_DECISIONS:]
    )
    if outcome is None:
        return GovernorFigures(None, "estimate", len(governor.sticky_ids), 0, rows)
    sent = outcome.messages
    stubs = sum(1 for m in sent if m.get("role") == "toolResult" and _is_stub(m))
    return GovernorFigures(outcome.occupancy, outcome.source, stubs, outcome.elided_tokens, rows)


def _is_stub(message: Any) -> bool:
    content = message.get("content")
    first = content[0] if isinstance(content, list) and content else None
    text = first.get("text") if isinstance(first, dict) else None
    return isinstance(text, str) and text.startswith(STUB_MARK)
