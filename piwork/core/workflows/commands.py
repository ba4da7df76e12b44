"""``/context …`` and ``/fresh …``: engine functions returning plain data (the window and headless call them).

Each function takes a :class:`~piwork.core.workflows.view.ContextView` (what the next request would hold)
and returns a JSON-ready dict; none of them talks to a provider. ``/context compact`` and ``/fresh``
change sessions, so they take the session objects they act on.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from piwork.core import safe_read
from piwork.core.agent.events import CompactionEnd
from piwork.core.context.billed_entries import branch_usage_entries
from piwork.core.context.budget import Marks, effective_marks
from piwork.core.context.bundle import (
    BundleRequest,
    assemble_bundle,
    build_manifest,
    context_file_entries,
)
from piwork.core.context.contract import SEARCH_RESULTS, verify_commands
from piwork.core.context.entries import BUNDLE_CUSTOM_TYPE, latest_custom
from piwork.core.context.exclusions import (
    ExclusionChange,
    ExclusionError,
    describe,
    excludable,
    exclude_parts,
    exclusion_targets,
    include_parts,
    inclusion_targets,
    with_exclusions,
)
from piwork.core.context.governor import STATE_CUSTOM_TYPE, Governor, GovernorOutcome, RequestShape
from piwork.core.context.index import build_task_pack, index_search, index_status, load_index, write_index
from piwork.core.context.manifest import Manifest, ManifestEntry
from piwork.core.context.manifest_refresh import refresh_manifest
from piwork.core.context.xray import xray
from piwork.core.messages import Message
from piwork.core.resources.profile import load_profile
from piwork.core.usage import calculate_context_tokens, valid_usage
from piwork.core.workflows.fresh import FreshError, FreshResult, handoff_summary, start_fresh
from piwork.core.workflows.intake import INTAKE_TOKENS, intake_tokens
from piwork.core.workflows.view import ContextView

if TYPE_CHECKING:
    from piwork.core.agent.session import AgentSession
    from piwork.core.compaction.summarize import Summarizer

COMMANDS: dict[str, tuple[str, str]] = {
    "context preflight": ("[files…]", "Estimate the next request against the working-set marks, with advice"),
    "context budget": ("", "The marks, current occupancy with its source, tokenizer and billed totals"),
    "context index-status": ("", "Fresh, changed and missing entries of .pi/context-index.json"),
    "context pack": ("<task>", "Build the task pack (layer 3) for a task description"),
    "context compact": ("", "Durable compaction now"),
    "context rebuild": ("", "Refresh the context index incrementally (unchanged entries are reused)"),
    "context manifest": ("", "The context manifest of this task"),
    "context exclude": (
        "<layer|path>…",
        "Leave a loaded layer or context file out of this task's next requests (a marker stays)",
    ),
    "context include": ("<layer|path>…|all", "Bring an excluded layer or context file back into this task"),
    "onboard run": (
        "[--refresh]",
        "Create the missing context layers: index, snapshot (one model call) and profile template",
    ),
    "fresh task": ("", "New session seeded with the Task Contract, manifest and a summary"),
    "fresh scout": ("", "New read-only scouting session seeded with the contract and a summary"),
    "fresh be-to-fe": ("", "New session handing a backend result over to frontend work"),
}
_BUNDLE = BUNDLE_CUSTOM_TYPE


def _is_bundle(message: Message) -> bool:
    return message.get("role") == "custom" and message.get("customType") == _BUNDLE


def _verifiers(view: ContextView) -> list[str]:
    profile = load_profile(view.cwd).profile if view.trusted else None
    return verify_commands(view.contract, profile)


def governor_outcome(view: ContextView) -> GovernorOutcome | None:
    """What the governor would decide for the next call (a fresh governor with the session's sticky state)."""
    if view.model is None:
        return None
    governor = Governor(view.governor_settings, view.estimator, lambda: _verifiers(view))
    if view.tree is not None:
        state = latest_custom(view.tree, STATE_CUSTOM_TYPE, view.leaf_id)
        if state is not None:
            governor.restore(state.get("data"))
    return governor.decide(list(view.messages), RequestShape(view.model, view.system_prompt, view.tools))


def marks_of(view: ContextView) -> Marks | None:
    if view.model is None:
        return None
    return effective_marks(view.model, view.governor_settings)


def marks_json(marks: Marks | None) -> dict[str, Any] | None:
    if marks is None:
        return None
    return {
        "pressure": marks.pressure,
        "ceiling": marks.ceiling,
        "pricing": marks.pricing,
        "compaction": marks.compaction_threshold,
        "window": marks.window,
    }


# ----------------------------------------------------------------------------- /context preflight


def _file_tokens(view: ContextView, paths: Sequence[str]) -> tuple[int, list[dict[str, Any]]]:
    total = 0
    rows = []
    for raw in paths:
        path = os.path.normpath(os.path.join(view.cwd, raw))
        try:
            text = safe_read.read_text(path, safe_read.PROJECT_FILE, strip_bom=False)
        except OSError as err:
            rows.append({"path": path, "tokens": 0, "error": err.strerror})
            continue
        tokens = view.estimator.counter.count(text)
        total += tokens
        rows.append({"path": path, "tokens": tokens})
    return total, rows


ADVICE = {
    "ok": [],
    "pressure": [
        "Past the pressure mark: the governor elides old raw reads and logs before the next calls.",
        "Read targeted slices rather than whole files.",
    ],
    "over-ceiling": [
        "Over the prompt ceiling: run /context compact now, or /fresh task to continue in a new session.",
        "Do not paste large files; attach paths and read slices.",
    ],
    "pricing-zone": [
        "The request would reach the pricing mark: piwork will not send it unless the pricing zone is allowed.",
        "Compact now (/context compact), start /fresh task, or send once anyway.",
    ],
    "overflow": [
        "The request is past the compaction threshold of the model's context window.",
        "Compact now (/context compact) or start /fresh task; host compaction would otherwise fire.",
    ],
}


def preflight(view: ContextView, prompt: str = "", planned_files: Sequence[str] = ()) -> dict[str, Any]:
    """Estimate the next request (with a prompt and planned files) against the marks; ``task`` names the
    branch's task (None without one: there is nothing for /fresh task to hand over)."""
    est = view.estimator
    bundle = sum(est.message(m) for m in view.messages if _is_bundle(m))
    messages = sum(est.message(m) for m in view.messages if not _is_bundle(m))
    system = est.system_prompt(view.system_prompt)
    tools = est.tools(view.tools)
    outcome = governor_outcome(view)
    projected = outcome.sent_tokens if outcome is not None else system + tools + bundle + messages
    files, rows = _file_tokens(view, planned_files)
    prompt_tokens = est.counter.count(prompt)
    planned = files + prompt_tokens
    marks = marks_of(view)
    advice: list[str] = []
    if marks is None:
        verdict = "ok"
        advice.append("No model is selected: the marks depend on its context window.")
    else:
        verdict = marks.zone(projected + planned)
        advice.extend(ADVICE[verdict])
    if intake_tokens(prompt, est.counter.count) is not None:  # counted once: long texts' counts are cached
        advice.append(
            f"The prompt is over {INTAKE_TOKENS:,} tokens: save it as an intake file and reference its path."
        )
    for row in rows:
        if row["tokens"] > 12_800:  # ~51,200 bytes: beyond the hard cap, never injected whole
            advice.append(
                f"{row['path']} is over the context cap: read targeted slices or a per-module summary."
            )
    return {
        "estimate": {
            "systemPrompt": system,
            "tools": tools,
            "bundle": bundle,
            "messages": messages,
            "projected": projected,
            "plannedFiles": planned,
        },
        "marks": marks_json(marks),
        "verdict": verdict,
        "advice": advice,
        "tokenizer": view.tokenizer,
        "files": rows,
        # the task on the branch (its title), which /fresh task would hand over; None: no task
        "task": view.contract.title if view.contract is not None else None,
    }


# ----------------------------------------------------------------------------- /context budget


def occupancy(view: ContextView) -> dict[str, Any]:
    """``contextOccupancy`` for the next request: the provider's figure when the branch ends on a
    response with usage, else the estimate; always tagged with its source and tokenizer."""
    last = view.messages[-1] if view.messages else None
    usage = valid_usage(last) if last is not None else None
    changed = view.exclusions.since_ms
    if usage is not None and changed is not None and changed > _time(last):
        usage = None  # the task's exclusions changed after that reply: the next request differs from it
    if usage is not None:
        return {"tokens": int(calculate_context_tokens(usage)), "source": "provider", "tokenizer": "exact"}
    est = view.estimator
    total = est.system_prompt(view.system_prompt) + est.tools(view.tools) + est.messages(view.messages)
    return {"tokens": total, "source": "estimate", "tokenizer": view.tokenizer}


def _time(message: Message | None) -> float:
    stamp = message.get("timestamp") if message is not None else None
    return float(stamp) if isinstance(stamp, int | float) and not isinstance(stamp, bool) else 0.0


def billed(view: ContextView) -> dict[str, Any]:
    """``billedTraffic`` of the branch: provider usage only, never estimates; the replies in the context
    and the ``usage`` entries on the branch (billed calls outside a reply, such as cache warming)."""
    totals = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "cost": 0.0, "requests": 0}
    replies = [m.get("usage") for m in view.messages if m.get("role") == "assistant"]
    outside = [e["usage"] for e in branch_usage_entries(view.tree, view.leaf_id)] if view.tree else []
    for usage in [*replies, *outside]:
        if not isinstance(usage, dict):
            continue
        totals["requests"] += 1
        for key in ("input", "output", "cacheRead", "cacheWrite"):
            value = usage.get(key)
            if isinstance(value, int | float) and not isinstance(value, bool):
                totals[key] += int(value)
        cost = usage.get("cost")
        total_cost = cost.get("total") if isinstance(cost, dict) else None
        if isinstance(total_cost, int | float) and not isinstance(total_cost, bool):
            totals["cost"] += float(total_cost)
    return totals


def budget(view: ContextView) -> dict[str, Any]:
    return {
        "model": f"{view.model.provider}/{view.model.id}" if view.model else None,
        "marks": marks_json(marks_of(view)),
        "occupancy": occupancy(view),
        "tokenizer": view.tokenizer,
        "billed": billed(view),
        "settingsProblems": list(view.governor_settings.problems),
    }


# ----------------------------------------------------------------------------- index commands


def _untrusted(what: str) -> dict[str, Any]:
    return {
        "ok": False,
        "status": "blocked-untrusted",
        "message": f"The project is not trusted: {what} is not read.",
    }


def index_status_command(view: ContextView) -> dict[str, Any]:
    if not view.trusted:
        return _untrusted("the context index")
    loaded = load_index(view.cwd)
    if not loaded.exists:
        return {
            "ok": False,
            "status": "missing",
            "message": "No context index: run /onboard run to create one.",
        }
    if loaded.index is None:
        return {"ok": False, "status": "invalid", "message": "; ".join(d.message for d in loaded.diagnostics)}
    status = index_status(view.cwd, loaded.index)
    out = {"ok": True, **status.to_json(), "problems": [d.message for d in loaded.diagnostics]}
    if not status.fresh:
        out["advice"] = "Run /context rebuild to refresh the index."
    return out


def search(view: ContextView, query: str) -> dict[str, Any]:
    """``/context search <query>``: the index's files and symbols for a query (the model's index search)."""
    return search_report(view, query)


def search_report(view: ContextView, query: str, limit: int = SEARCH_RESULTS) -> dict[str, Any]:
    """The index search (``/context search`` and the model's tool): matching files with their symbols."""
    if not query.strip():
        return {"ok": False, "message": "Say what to look for: a feature, a name or a path."}
    if not view.trusted:
        return {
            "ok": False,
            "status": "blocked-untrusted",
            "message": "The project is not trusted: its index is not read.",
        }
    return index_search(view.cwd, query, limit)


def pack(view: ContextView, task: str) -> dict[str, Any]:
    if not task.strip():
        return {"ok": False, "message": "Say what the task is: /context pack <task>"}
    if not view.trusted:
        return _untrusted("the context index")
    loaded = load_index(view.cwd)
    if loaded.index is None:
        return {"ok": False, "status": "missing", "message": "No usable context index: run /onboard run."}
    status = index_status(view.cwd, loaded.index)
    if not status.fresh:
        return {
            "ok": False,
            "status": "stale",
            "message": f"The index is stale ({status.stale_reason}): run /context rebuild.",
        }
    built = build_task_pack(task, status, view.cwd)
    return {"ok": True, **built.to_json(), "text": built.render_text()}


def rebuild(view: ContextView) -> dict[str, Any]:
    if not view.trusted:
        return _untrusted("the context index")
    # the index builder (and pathspec behind it) loads only when an index is built
    from piwork.core.context.index_builder import build_index, update_index

    loaded = load_index(view.cwd)
    if loaded.index is None:  # missing or unreadable: built anew from the tree
        index = build_index(view.cwd)
        path = write_index(view.cwd, index)
        problems = [d.message for d in loaded.diagnostics]
        return {
            "ok": True,
            "path": path,
            "rebuilt": True,
            "entries": len(index.entries),
            "problems": problems,
        }
    result = update_index(view.cwd, loaded.index)
    path = write_index(view.cwd, result.index)
    return {"ok": True, "path": path, **result.to_json()}


# ----------------------------------------------------------------------------- manifest


def current_manifest(view: ContextView, task: str = "") -> Manifest:
    """The stored manifest of this task, or (no task yet) what a task started now would load."""
    if view.manifest is not None:
        return view.manifest
    count = view.estimator.counter.count
    bundle = assemble_bundle(BundleRequest(view.cwd, view.trusted, view.contract, task, count=count))
    enforce = view.resources.settings.context_files_enforce_hard_cap()
    rows = context_file_entries(view.resources.context_files, count, enforce)
    est = view.estimator
    return build_manifest(
        "",
        "",
        view.estimator.record_tokenizer,
        rows,
        bundle,
        view.contract,
        est.system_prompt(view.system_prompt),
        est.tools(view.tools),
        est.messages([m for m in view.messages if not _is_bundle(m)]),
    )


def manifest_command(view: ContextView) -> dict[str, Any]:
    """The manifest of the task on the branch, re-checked, with the parts excluded for this task
    ``omitted``; or the one a task started now would have. ``changed``: the re-checked manifest differs
    from the stored one, and ``refreshed`` is what the caller may save (as recorded, no exclusions)."""
    stored = view.manifest
    manifest = current_manifest(view)
    out: dict[str, Any] = {"stored": stored is not None, "changed": False}
    if stored is not None:
        manifest = refresh_manifest(stored, view.cwd, view.trusted, view.messages)
        if manifest != stored:
            out.update(changed=True, refreshed=manifest.to_json())
    shown = with_exclusions(manifest, view.exclusions)
    out.update(manifest=shown.to_json(), text=shown.render_text(view.cwd))
    if view.exclusions.parts and view.exclusions.task_id == manifest.task_id:
        out["excluded"] = [p.to_json() for p in view.exclusions.parts]
    return out


# ----------------------------------------------------------------------------- /context exclude|include


def exclusion_command(
    view: ContextView,
    action: str,
    words: Sequence[str] = (),
    read_only_reason: str | None = None,
    rows: Sequence[ManifestEntry] = (),
) -> tuple[dict[str, Any], ExclusionChange | None]:
    """``/context exclude|include <layer|path>…`` (or the manifest ``rows`` a view chose) on the view's
    live session tree: records the task's new set of excluded parts (state only) and says what the next
    request leaves out or holds again. Nothing is written for a request that names nothing usable."""
    title = f"/context {action}"
    if view.tree is None or view.manifest is None:
        return {"ok": False, "message": f"{title} works on a task: start one with /task first."}, None
    if read_only_reason is not None:
        return {"ok": False, "message": f"Cannot change this task's context: {read_only_reason}"}, None
    keys = {(r.layer, r.kind, r.path) for r in rows}
    try:
        if action == "exclude":
            if rows:
                targets = [e for e in view.manifest.entries if (e.layer, e.kind, e.path) in keys]
                if not targets or not all(excludable(e) for e in targets):
                    raise ExclusionError(
                        "That part is not loaded for this task, so there is nothing to exclude."
                    )
            else:
                targets = exclusion_targets(view.manifest, words, view.cwd)
            change = exclude_parts(view.tree, view.manifest, targets, view.cwd)
        else:
            if rows:
                parts = [p for p in view.exclusions.parts if p.key in keys]
            else:
                parts = inclusion_targets(view.exclusions, words, view.cwd)
            change = include_parts(view.tree, parts)
    except ExclusionError as err:
        return {"ok": False, "message": str(err)}, None
    return {"ok": True, "text": exclusion_text(action, change), **change.exclusions.to_json()}, change


def exclusion_text(action: str, change: ExclusionChange) -> str:
    """What an exclude or include did, as short Markdown paragraphs (the chat notice)."""
    if not change.changed:
        return "Already excluded for this task." if action == "exclude" else "Nothing changed."
    what = describe(change.changed)
    if action == "exclude":
        lines = [
            f"Excluded for this task: {what}.",
            "From the next request on a short marker stands in its place; the transcript and the "
            "session file keep everything.",
        ]
        names = " ".join(p.name for p in change.changed)
        lines.append(f"Bring it back with `/context include {names}`.")
    else:
        lines = [f"Included again: {what}. The next request holds it as the task recorded it."]
    if change.touches_system_prompt:
        lines.append(
            "The system prompt changes with it, so the provider's prompt cache starts over once for the "
            "whole request."
        )
    else:
        lines.append(
            "The request changes from the task's context on, so the provider reads the rest of it anew once instead of from its cache."
        )
    still = change.exclusions.parts
    if action == "include" and still:
        lines.append(f"Still excluded: {describe(still)}.")
    return "\n\n".join(lines)  # paragraphs: the chat reads a notice as Markdown


# ----------------------------------------------------------------------------- what the next request holds


def request_breakdown(view: ContextView) -> dict[str, Any]:
    """The next request by source (x-ray), summed per kind, and the governor's decision for it."""
    entry_ids: list[str | None] | None = None
    if view.tree is not None:
        context = (
            view.tree.build_context(view.leaf_id) if view.leaf_id is not None else view.tree.build_context()
        )
        entry_ids = [e if isinstance(e, str) else None for e in context.entry_ids]
    ray = xray(view.prompt_parts, view.tools, view.messages, view.estimator, entry_ids)
    outcome = governor_outcome(view)
    decision: dict[str, Any] | None = None
    if outcome is not None:
        decision = {
            "decision": outcome.decision.decision if outcome.decision else "unchanged",
            "detail": outcome.decision.detail
            if outcome.decision
            else "no trigger: the working set is sent as it is",
            "transcriptTokens": outcome.transcript_tokens,
            "sentTokens": outcome.sent_tokens,
            "elidedTokens": outcome.elided_tokens,
            "withhold": outcome.withhold,
            "zone": outcome.marks.zone(outcome.sent_tokens),
            "record": outcome.decision.to_json() if outcome.decision else None,
        }
    return {
        "total": ray.total,
        "tokenizer": ray.tokenizer,
        "bySource": ray.by_kind(),
        "parts": ray.to_json()["parts"],
        "governor": decision,
    }


def overview_command(view: ContextView) -> dict[str, Any]:
    """``piwork context`` without a subcommand: the manifest, the marks, the occupancy and the next
    request by source, with the folder, session, trust and model they are for."""
    trust = view.resources.trust
    return {
        "cwd": view.cwd,
        "session": view.session_file,
        "leaf": view.leaf_id,
        "trust": trust.to_json() if trust else None,
        "model": f"{view.model.provider}/{view.model.id}" if view.model else None,
        "manifest": manifest_command(view),
        "marks": marks_json(marks_of(view)),
        "occupancy": occupancy(view),
        "request": request_breakdown(view),
    }


# ----------------------------------------------------------------------------- /onboard run


ONBOARD_USAGE = "Use /onboard run, or /onboard run --refresh to rebuild the index and the snapshot."


def parse_onboard(args: str) -> bool | None:
    """``run`` → False, ``run --refresh`` → True (refresh), anything else → None."""
    words = args.split()
    if words == ["run"]:
        return False
    if words in (["run", "--refresh"], ["--refresh", "run"]):
        return True
    return None


async def onboard_command(
    view: ContextView, summarizer: Summarizer | None, refresh: bool = False
) -> dict[str, Any]:
    """``/onboard run``: the missing context layers of the view's project (see :mod:`.onboard`)."""
    # onboarding and the index builder behind it load only when /onboard runs
    from piwork.core.workflows.onboard import onboard

    result = await onboard(view.cwd, view.trusted, summarizer, refresh)
    doc = result.to_json()
    lines = [result.message]
    for item in result.files:
        rel = os.path.relpath(item.path, view.cwd)
        extra = ""
        if item.kind == "index" and item.status in ("created", "refreshed"):
            extra = f" ({result.modules} modules, {result.cited_files} files cited, listed by {result.file_source})"
        elif item.kind == "snapshot" and item.status in ("created", "refreshed"):
            extra = (
                " (summarised by the model)"
                if result.snapshot_source == "model"
                else " (assembled from the index)"
            )
        detail = f" - {item.detail}" if item.detail else ""
        lines.append(f"- {rel}: {item.status}{extra}{detail}")
    lines.extend(f"- {note}" for note in result.notes)
    doc["text"] = "\n".join(lines)
    return doc


# ----------------------------------------------------------------------------- /fresh and /context compact


def fresh_command(
    view: ContextView,
    kind: str,
    session_dir: str | os.PathLike[str] | None = None,
    source_path: str | None = None,
) -> FreshResult:
    """Start ``/fresh <kind>`` from the view's branch (raises :class:`FreshError` when it cannot)."""
    if view.tree is None:
        raise FreshError("/fresh needs a session with a task to hand over.")
    verifiers = _verifiers(view)
    return start_fresh(
        kind,
        view.tree,
        view.resources,
        lambda tree, contract: handoff_summary(tree, contract, view.leaf_id, verifiers),
        session_dir,
        view.agent_dir,
        source_path,
        view.leaf_id,
        view.estimator,
    )


async def compact_command(session: AgentSession) -> dict[str, Any]:
    """``/context compact``: the governor's durable compaction now, at a settled point (a run is stopped
    first). A coding task gets the deterministic summary; a plain discussion the model summariser."""
    await session.abort()
    ends: list[CompactionEnd] = []
    unsubscribe = session.subscribe(
        lambda event: ends.append(event) if isinstance(event, CompactionEnd) else None
    )
    try:
        done = await session.governance.compact()
    finally:
        unsubscribe()
    end = ends[-1] if ends else None
    if not done or end is None or end.result is None:
        message = end.error_message if end is not None and end.error_message else "Nothing was compacted."
        return {"ok": False, "message": message}
    result = end.result
    return {"ok": True, **{k: result[k] for k in ("tokensBefore", "firstKeptEntryId") if k in result}}


def report_text(doc: dict[str, Any]) -> str:
    """A command's result as short lines (a Markdown list; the chat notice and the headless text show it)."""
    if isinstance(doc.get("text"), str):
        return str(doc["text"]).rstrip("\n")
    lines: list[str] = []
    message = doc.get("message")
    if isinstance(message, str):
        lines.append(message)
    for key, value in doc.items():
        if key in ("message", "ok") or (isinstance(message, str) and not isinstance(value, dict | list)):
            continue
        if value is None:  # nothing to say (e.g. a model without a pricing step has no pricing mark)
            continue
        if isinstance(value, dict):
            items = [f"{sub} {item}" for sub, item in value.items() if item is not None]
            lines.append(f"- {key}: " + ", ".join(items))
        elif isinstance(value, list):
            if value:
                lines.append(f"- {key}:")
                lines.extend(f"  - {item}" for item in value)
        else:
            lines.append(f"- {key}: {value}")
    return "\n".join(lines)
