"""``piwork inspect SESSION [--leaf ID] [--json]``: describe a session file without changing it.

Shows the header, entry counts, the shape of the tree (roots, branch points, leaves, labels),
compactions and branch summaries, the context the model would get at the leaf (messages by role
and a token estimate) and every problem found in the file.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from piwork.core.collector import paused_gc
from piwork.core.compaction import estimate_tokens
from piwork.core.errors import PiworkError
from piwork.core.jscompat import UNDEFINED, js_json_stringify
from piwork.core.session import Session, SessionTree, open_session

PREVIEW = 80


def _estimate_tokens(message: Mapping[str, Any]) -> int:
    """chars/4 rounded up, as the compaction engine estimates; malformed messages count 0."""
    try:
        return estimate_tokens(message)
    except (TypeError, ValueError, KeyError, AttributeError):
        return 0


def _short(text: str | None) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= PREVIEW else text[: PREVIEW - 1] + "…"


def describe(session: Session, leaf_id: str | None = None) -> dict[str, Any]:
    """Everything ``inspect`` reports, as JSON-ready data (every line of the file is parsed once: the
    context's lines as it is built, then the others, so that each line Pi would skip is listed)."""
    tree = session.tree
    header = tree.header or {}
    records = [r for r in tree.records if r.type != "session"]
    # counted from lists in C (a large session has 100,000 records); names that are not strings as text
    types = _counted([r.type for r in records])
    roles = _counted([r.role for r in records if r.type == "message"])
    # children per entry id, as the tree links them (ids and parents that are not strings link nothing here)
    children = Counter([parent for r in records if type(parent := r.parent_id) is str])
    ids = [entry_id for r in records if type(entry_id := r.id) is str]
    leaves = [entry_id for entry_id in ids if entry_id not in children]
    branch_points = [entry_id for entry_id in ids if children.get(entry_id, 0) > 1]
    target = leaf_id if leaf_id is not None else tree.leaf_id
    # the context's messages are counted a batch at a time and dropped (a long one is most of the file)
    context = tree.stream_context(target)
    by_role: Counter[str] = Counter()
    count = tokens = 0
    with paused_gc():
        for batch in context.batches():
            count += len(batch)
            by_role.update(str(m.get("role")) if isinstance(m, dict) else "?" for m in batch)
            tokens += sum(_estimate_tokens(m) for m in batch if isinstance(m, dict))
    session.check_bodies(read_records=context.records)
    return {
        "file": {"path": str(session.path), "size": session.path.stat().st_size if session.path else 0},
        "header": header,
        "name": tree.name,
        "entries": {"total": len(records), "byType": dict(types), "messagesByRole": dict(roles)},
        "tree": {
            "roots": [_id(r.id) for r in tree.roots()],
            "leaves": len(leaves),
            "branchPoints": branch_points,
            "leafId": _id(tree.leaf_id),
            "depth": len(tree.path(tree.leaf_id)) if tree.leaf_id is not None else 0,
            "labels": tree.labels(),
        },
        "compactions": [_compaction(tree, r) for r in records if r.type == "compaction"],
        "branchSummaries": [_branch_summary(tree, r) for r in records if r.type == "branch_summary"],
        "context": {
            "leafId": _id(target),
            "messages": count,
            "byRole": dict(by_role),
            "estimatedTokens": tokens,
            "thinkingLevel": context.thinking_level if isinstance(context.thinking_level, str) else None,
            "model": context.model,
        },
        "diagnostics": [d.to_json() for d in sorted(tree.diagnostics, key=lambda d: d.line)],
    }


def _counted(values: list[Any]) -> Counter[str]:
    """How many times each value occurs, by its text, in order of first occurrence."""
    return Counter(values if all(type(v) is str for v in values) else map(str, values))


def _id(value: Any) -> Any:
    """An entry id as JSON can say it (a line without an id has none)."""
    return None if value is UNDEFINED else value


def _compaction(tree: SessionTree, record: Any) -> dict[str, Any]:
    body = tree.body(record) or {}
    return {
        "id": _id(record.id),
        "tokensBefore": body.get("tokensBefore"),
        "firstKeptEntryId": body.get("firstKeptEntryId"),
        "summary": _short(body.get("summary") if isinstance(body.get("summary"), str) else ""),
    }


def _branch_summary(tree: SessionTree, record: Any) -> dict[str, Any]:
    body = tree.body(record) or {}
    return {
        "id": _id(record.id),
        "parentId": _id(record.parent_id),
        "fromId": body.get("fromId"),
        "summary": _short(body.get("summary") if isinstance(body.get("summary"), str) else ""),
    }


MAX_LISTED_PROBLEMS = 50  # a file of binary garbage has one problem per line


def render_text(report: dict[str, Any]) -> str:
    header = report["header"]
    lines = [
        f"Session {header.get('id')}  (format v{header.get('version', 1)})",
        f"  file     {report['file']['path']}  ({report['file']['size']} bytes)",
        f"  cwd      {header.get('cwd', '')}",
        f"  created  {header.get('timestamp', '')}",
    ]
    if header.get("parentSession"):
        lines.append(f"  parent   {header['parentSession']}")
    if report["name"]:
        lines.append(f"  name     {report['name']}")
    entries = report["entries"]
    lines.append(f"\nEntries: {entries['total']}")
    for kind, count in sorted(entries["byType"].items()):
        lines.append(f"  {kind:<24}{count}")
    if entries["messagesByRole"]:
        roles = ", ".join(f"{role} {n}" for role, n in sorted(entries["messagesByRole"].items()))
        lines.append(f"  messages by role: {roles}")
    tree = report["tree"]
    lines.append(
        f"\nTree: {len(tree['roots'])} root(s), {tree['leaves']} leaf/leaves, "
        f"{len(tree['branchPoints'])} branch point(s); leaf {tree['leafId']} at depth {tree['depth']}"
    )
    for entry_id, label in tree["labels"].items():
        lines.append(f"  label {entry_id}: {label}")
    if report["compactions"]:
        lines.append("\nCompactions:")
        for c in report["compactions"]:
            lines.append(
                f"  {c['id']}  before {c['tokensBefore']} tokens, keeps from {c['firstKeptEntryId']}: {c['summary']}"
            )
    if report["branchSummaries"]:
        lines.append("\nBranch summaries:")
        for b in report["branchSummaries"]:
            lines.append(f"  {b['id']}  from {b['fromId']} under {b['parentId']}: {b['summary']}")
    context = report["context"]
    roles = ", ".join(f"{role} {n}" for role, n in sorted(context["byRole"].items())) or "none"
    model = context["model"] or {}
    lines.append(
        f"\nContext at {context['leafId']}: {context['messages']} message(s) ({roles}), "
        f"about {context['estimatedTokens']} tokens"
    )
    lines.append(
        f"  model {model.get('provider', '-')}/{model.get('modelId', '-')}, thinking {context['thinkingLevel']}"
    )
    diagnostics = report["diagnostics"]
    lines.append(f"\nProblems: {len(diagnostics) or 'none'}")
    for d in diagnostics[:MAX_LISTED_PROBLEMS]:
        lines.append(f"  line {d['line']} (byte {d['byteOffset']}): {d['kind']}: {d['message']}")
    if len(diagnostics) > MAX_LISTED_PROBLEMS:
        lines.append(f"  ... and {len(diagnostics) - MAX_LISTED_PROBLEMS} more (--json lists them all)")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="piwork inspect", description="Describe a session file (read only)."
    )
    parser.add_argument("session", help="path of a session .jsonl file")
    parser.add_argument("--leaf", help="entry id to build the context for (default: the last entry)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    ns = parser.parse_args(argv)
    path = Path(ns.session)
    if path.is_dir():
        print(f"piwork inspect: {path} is a folder; give the path of a session .jsonl file", file=sys.stderr)
        return 1
    if not path.is_file():
        print(f"piwork inspect: no such session file: {path}", file=sys.stderr)
        return 1
    try:
        session = open_session(path, writable=False)
    except PiworkError as err:
        print(f"piwork inspect: {err}", file=sys.stderr)
        return 1
    except OSError as err:  # no permission, a read error
        print(f"piwork inspect: cannot read {path}: {err.strerror or err}", file=sys.stderr)
        return 1
    with session:
        if ns.leaf is not None and not session.tree.has(ns.leaf):
            print(f"piwork inspect: Entry {ns.leaf} not found", file=sys.stderr)
            return 1
        report = describe(session, ns.leaf)
    if ns.json:
        sys.stdout.write(js_json_stringify(report, indent=2) + "\n")
    else:
        sys.stdout.write(render_text(report))
    return 0
