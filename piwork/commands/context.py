"""``piwork context``: the context manifest, the marks, what the next request holds, the governor's call.

    piwork context [--cwd DIR] [--session FILE] [--leaf ID] [--json] [--model PROVIDER/ID]
                   [--approve | --no-approve]
                   [preflight [FILE]... | budget | index-status | search QUERY... | pack TASK... | rebuild | manifest
                    | onboard [--refresh] | edits]

Without a subcommand it prints the manifest of the task on the branch (or what a task started now would
load), the working-set marks of the model, the next request's tokens by source and the governor's
decision for the next call, and the context edits in force on the branch (``edits`` lists only those:
entries left out of the model's context or shown to it with other content). Nothing is sent to a provider, except by ``onboard``: it creates the missing
context layers, asking the model (--model, else the session's or the default) once for the snapshot.
Project trust is decided first; nobody can be asked here, so an undecided project stays untrusted unless
--approve is given.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from typing import Any, TextIO

from piwork.core.errors import PiworkError
from piwork.core.paths import agent_dir as default_agent_dir
from piwork.core.workflows import (
    ContextView,
    budget_command,
    index_status_command,
    load_view,
    manifest_command,
    onboard_command,
    overview_command,
    pack_command,
    preflight,
    rebuild_command,
    report_text,
    search_command,
    view_summarizer,
)

ACTIONS = ("preflight", "budget", "index-status", "search", "pack", "rebuild", "manifest", "onboard", "edits")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="piwork context", description=__doc__.split("\n\n")[0])
    parser.add_argument("--cwd", default=os.getcwd(), help="project folder (default: current folder)")
    parser.add_argument("--session", metavar="FILE", help="session file whose branch is examined")
    parser.add_argument(
        "--leaf", metavar="ID", help="entry id ending the branch (default: the session's leaf)"
    )
    parser.add_argument("--model", metavar="PROVIDER/ID", help="model whose window sets the marks")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.add_argument(
        "--refresh", action="store_true", help="onboard: rebuild the index and the snapshot even if present"
    )
    trust = parser.add_mutually_exclusive_group()
    trust.add_argument("-a", "--approve", action="store_true", help="trust the project for this run only")
    trust.add_argument(
        "-na", "--no-approve", action="store_true", help="do not trust the project for this run"
    )
    parser.add_argument(
        "action", nargs="?", choices=ACTIONS, help="one /context command instead of the overview"
    )
    parser.add_argument("args", nargs="*", help="files for preflight, the task for pack")
    return parser


def main(argv: list[str], out: TextIO | None = None, err: TextIO | None = None) -> int:
    out, err = out or sys.stdout, err or sys.stderr
    ns = _parser().parse_args(argv)
    cwd = os.path.abspath(ns.cwd)
    if not os.path.isdir(cwd):
        err.write(f"piwork context: {cwd} is not a folder\n")
        return 2
    if ns.session is not None and not os.path.isfile(ns.session):
        what = "a folder" if os.path.isdir(ns.session) else "not found"
        err.write(f"piwork context: the session file {ns.session} is {what}\n")
        return 2
    if ns.action == "pack" and not ns.args:
        err.write("piwork context: pack needs a task description\n")
        return 2
    override = True if ns.approve else False if ns.no_approve else None
    try:
        view = asyncio.run(load_view(cwd, default_agent_dir(), ns.session, ns.leaf, ns.model, override))
    except (PiworkError, OSError) as error:
        err.write(f"piwork context: {error}\n")
        return 1
    if ns.leaf is not None and view.tree is not None and not view.tree.has(ns.leaf):
        err.write(f"piwork context: no entry {ns.leaf} in {ns.session}\n")
        return 2
    if ns.model and view.model is None:
        err.write(f"piwork context: unknown model {ns.model}\n")
        return 2
    if ns.action == "onboard":
        doc = asyncio.run(onboard_command(view, view_summarizer(view), ns.refresh))
    elif ns.action == "edits":
        doc = {"ok": True, "contextEdits": context_edits_doc(view)}
    else:
        doc = _action(view, ns.action, ns.args) if ns.action else overview_command(view)
        if not ns.action:
            doc["contextEdits"] = context_edits_doc(view)
    if ns.json:
        out.write(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    elif ns.action == "edits":
        _print_edits(doc["contextEdits"], out)
    elif ns.action:
        _print_action(doc, out)
    else:
        _print_overview(doc, out)
    return 0 if doc.get("ok", True) else 1


def _action(view: ContextView, action: str, args: list[str]) -> dict[str, Any]:
    if action == "preflight":
        return preflight(view, planned_files=args)
    if action == "budget":
        return budget_command(view)
    if action == "index-status":
        return index_status_command(view)
    if action == "pack":
        return pack_command(view, " ".join(args))
    if action == "search":
        return search_command(view, " ".join(args))
    if action == "rebuild":
        return rebuild_command(view)
    return manifest_command(view)


def context_edits_doc(view: ContextView) -> list[dict[str, Any]]:
    """The context edits in force on the examined branch, each with what the model now sees."""
    tree = view.tree
    if tree is None:
        return []
    leaf = view.leaf_id if view.leaf_id is not None else tree.leaf_id
    out = []
    for edit in tree.context_edits(leaf):
        found = tree.record(edit.target_id)
        record = None if found is None else tree.details(found)
        item = edit.to_json()
        item["targetRole"] = None if record is None else (record.role or record.type)
        item["original"] = "" if record is None else record.preview
        item["modelSees"] = None if edit.replacement is None else _content_preview(edit.replacement)
        out.append(item)
    return out


def _content_preview(replacement: dict[str, Any]) -> str:
    content = replacement.get("content")
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        text = " ".join(
            b["text"] if b.get("type") == "text" and isinstance(b.get("text"), str) else f"[{b.get('type')}]"
            for b in content
            if isinstance(b, dict)
        )
    else:
        text = ""
    text = " ".join(text.split())
    return text if len(text) <= 120 else text[:119] + "…"


def _print_edits(edits: list[dict[str, Any]], out: TextIO) -> None:
    if not edits:
        out.write("No context edits on this branch: the model sees every entry as written.\n")
        return
    out.write(f"Context edits on this branch ({len(edits)}):\n")
    for item in edits:
        head = f"  {item['targetId']} ({item['targetRole']}) by {item['editId']}: "
        if item["action"] == "leave-out":
            out.write(head + f"left out of the model's context - {item['original']}\n")
        else:
            out.write(head + f"replaced - the model sees: {item['modelSees']}\n")


def _print_overview(doc: dict[str, Any], out: TextIO) -> None:
    out.write(f"Folder: {doc['cwd']}\n")
    if doc["session"]:
        out.write(f"Session: {doc['session']}" + (f" (leaf {doc['leaf']})" if doc["leaf"] else "") + "\n")
    if doc["trust"]:
        out.write(f"Project trust: {doc['trust']['description']}\n")
    out.write(f"Model: {doc['model'] or '(none selected: pass --model PROVIDER/ID for the marks)'}\n\n")
    manifest = doc["manifest"]
    out.write(manifest["text"])
    if not manifest["stored"]:
        out.write("(no task on this branch yet: this is what a task started now would load)\n")
    excluded = manifest.get("excluded") or []
    if excluded:
        names = ", ".join(p["kind"] if p["kind"] in ("pack", "index") else p["shown"] for p in excluded)
        out.write(f"Excluded for this task: {names} (/context include brings them back in the window)\n")
    for entry in manifest["manifest"]["entries"]:
        extra = f" - {entry['reason']}" if entry.get("reason") else ""
        out.write(
            f"  L{entry['layer']} {entry['kind']}: {entry['status']}, {entry['tokens']} tokens{extra}\n"
        )
    marks = doc["marks"]
    out.write("\nMarks:")
    if marks is None:
        out.write(" (no model)\n")
    else:
        pricing = f"{marks['pricing']:,}" if marks["pricing"] is not None else "-"
        out.write(
            f" pressure {marks['pressure']:,} · ceiling {marks['ceiling']:,} · pricing {pricing} · "
            f"compaction {marks['compaction']:,} (window {marks['window']:,})\n"
        )
    occ = doc["occupancy"]
    out.write(f"Occupancy: {occ['tokens']:,} tokens ({occ['source']}, {occ['tokenizer']})\n")
    request = doc["request"]
    out.write(f"\nNext request by source ({request['tokenizer']}), {request['total']:,} tokens:\n")
    for kind, tokens in sorted(request["bySource"].items(), key=lambda kv: -kv[1]):
        out.write(f"  {kind:<20} {tokens:>10,}\n")
    prompt_parts = [p for p in request["parts"] if p["kind"] in ("system", "context_file", "skills")]
    if prompt_parts:
        out.write("System prompt by part:\n")
        for part in prompt_parts:
            out.write(f"  {part['tokens']:>10,}  {part['label']}\n")
    governor = request["governor"]
    out.write("\nGovernor, next call: ")
    if governor is None:
        out.write("unknown without a model\n")
    else:
        out.write(
            f"{governor['decision']} - {governor['detail']}; sends {governor['sentTokens']:,} of "
            f"{governor['transcriptTokens']:,} tokens (zone {governor['zone']})"
            + (", withheld (context limit)" if governor["withhold"] else "")
            + "\n"
        )
    if doc.get("contextEdits"):
        out.write("\n")
        _print_edits(doc["contextEdits"], out)


def _print_action(doc: dict[str, Any], out: TextIO) -> None:
    out.write(report_text(doc) + "\n")
