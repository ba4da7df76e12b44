"""``/fresh task|scout|be-to-fe``: continue a task in a new session, seeded instead of carried over.

Used when preflight finds the input too large or the working set cannot be reduced safely. The new
session (its header names the old one as parent) holds: a summary of the old branch handed over as a
``piwork.freshSummary`` message, then the Task Contract, a new manifest and a freshly assembled
context bundle — ready for the first prompt. The old session is not touched.

- ``task``: the same contract, phase kept;
- ``scout``: the contract made read-only, phase ``scout``;
- ``be-to-fe``: a frontend contract that starts from the backend result (phase ``plan``).

``task`` and ``scout`` go on with the same task, so what the person excluded for it stays excluded in
the new session (recorded there for its new manifest); ``be-to-fe`` is another task and loads everything.
The new manifest's totals are those of the new session's first request: its system prompt and the
schemas of the tools the contract leaves active, the bundle, and the handed-over summary.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from piwork.core.agent.system_prompt import prompt_parts_for
from piwork.core.compaction.file_ops import compute_file_lists, extract_file_ops, format_file_lists
from piwork.core.context.bundle import (
    BundleRequest,
    assemble_bundle,
    build_manifest,
    context_file_entries,
    start_task,
)
from piwork.core.context.contract import TaskContract, allowed_tools, latest_contract
from piwork.core.context.durable import deterministic_summary
from piwork.core.context.estimate import TokenEstimator
from piwork.core.context.exclusion_projection import context_files_for_task
from piwork.core.context.exclusions import (
    NO_EXCLUSIONS,
    Exclusions,
    excludable,
    latest_exclusions,
    part_of,
    save_exclusions,
)
from piwork.core.context.index import now_utc
from piwork.core.context.manifest import Manifest
from piwork.core.errors import PiworkError
from piwork.core.llm.types import ToolSpec
from piwork.core.messages import Message
from piwork.core.resources.loader import LoadedResources
from piwork.core.session.store import Session, create_session
from piwork.core.session.tree import SessionTree
from piwork.core.tools.registry import ALL_TOOL_NAMES, DEFAULT_ACTIVE_TOOLS, create_default_tools

FreshKind = Literal["task", "scout", "be-to-fe"]
FRESH_KINDS: tuple[FreshKind, ...] = ("task", "scout", "be-to-fe")
SUMMARY_CUSTOM_TYPE = "piwork.freshSummary"
SAME_TASK_KINDS = frozenset({"task", "scout"})  # they continue the task: its exclusions go along


class FreshError(PiworkError):
    """/fresh cannot start (no task on the branch, unknown kind)."""


@dataclass(frozen=True)
class FreshResult:
    session: Session
    path: str | None
    contract: TaskContract
    summary: str


def fresh_contract(contract: TaskContract, kind: FreshKind, source_id: str) -> TaskContract:
    data = {**contract.to_json(), "startedAt": now_utc(), "freshFrom": source_id, "freshKind": kind}
    if kind == "scout":
        data.update(mode="read-only", phase="scout")
    elif kind == "be-to-fe":
        data.update(
            title=f"Frontend: {contract.title}",
            goal=f"Frontend work that uses the backend result of: {contract.goal}",
            phase="plan",
            mode="source-write",
        )
    return TaskContract.from_json(data)


def start_fresh(
    kind: str,
    source: SessionTree,
    resources: LoadedResources,
    summarize: Callable[[SessionTree, TaskContract], str],
    session_dir: str | os.PathLike[str] | None = None,
    agent_dir: str | os.PathLike[str] | None = None,
    source_path: str | None = None,
    leaf_id: str | None = None,
    estimator: TokenEstimator | None = None,
    planned_files: Sequence[str] = (),
) -> FreshResult:
    """Create and write the seeded session; ``summarize`` gives the deterministic summary of the old branch."""
    if kind not in FRESH_KINDS:
        raise FreshError(f"/fresh {kind}: use one of {', '.join(FRESH_KINDS)}")
    contract = latest_contract(source, leaf_id)
    if contract is None:
        raise FreshError("/fresh needs a task: this branch has no Task Contract to carry over.")
    header = source.header or {}
    source_id = str(header.get("id", ""))
    new_contract = fresh_contract(contract, kind, source_id)
    excluded = latest_exclusions(source, leaf_id) if kind in SAME_TASK_KINDS else NO_EXCLUSIONS
    summary = summarize(source, contract)
    estimator = estimator or TokenEstimator()
    count = estimator.counter.count
    session = create_session(resources.cwd, session_dir, agent_dir=agent_dir, parent_session=source_path)
    tree = session.tree
    intro = f"Handed over from session {source_id} with /fresh {kind}.\n\n{summary}"
    tree.append_custom_message(
        SUMMARY_CUSTOM_TYPE, [{"type": "text", "text": intro}], True, {"from": source_id, "kind": kind}
    )
    bundle = assemble_bundle(
        BundleRequest(
            resources.cwd,
            resources.project_trusted,
            new_contract,
            new_contract.goal,
            unfamiliar=new_contract.extra.get("unfamiliar") is True,  # the task pack comes along
            planned_files=planned_files,
            count=count,
        )
    )
    rows = context_file_entries(
        resources.context_files, count, resources.settings.context_files_enforce_hard_cap()
    )
    task_id = f"task-{source_id[:8]}-{kind}"
    # the tools the new session starts with (as the runtime opening it will choose) and its prompt
    names = allowed_tools(new_contract, DEFAULT_ACTIVE_TOOLS, ALL_TOOL_NAMES)
    registry = create_default_tools(ALL_TOOL_NAMES)
    carried = Exclusions(task_id, excluded.parts)
    parts = prompt_parts_for(resources, names, registry, lambda files: context_files_for_task(files, carried))
    specs = [ToolSpec(s.name, s.description, s.parameters) for s in registry.specs(names)]
    manifest = build_manifest(
        task_id,
        now_utc(),
        estimator.record_tokenizer,
        rows,
        bundle,
        new_contract,
        estimator.system_prompt("".join(p.text for p in parts)),
        estimator.tools(specs),
        count(intro),
    )
    # the session has no user message yet: its name is what lists and search show for it
    tree.set_name(f"/fresh {kind}: {new_contract.title or new_contract.goal}"[:200])
    start_task(tree, new_contract, bundle, manifest)  # the bundle stays last, right before the first prompt
    _carry_exclusions(tree, excluded, manifest, resources.cwd)
    if session.path is not None:
        session.write_new_file()
    return FreshResult(session, str(session.path) if session.path else None, new_contract, summary)


def _carry_exclusions(tree: SessionTree, excluded: Exclusions, manifest: Manifest, cwd: str) -> None:
    """Record the task's exclusions for the new manifest: each part that is loaded again there."""
    keys = {p.key for p in excluded.parts}
    rows = [e for e in manifest.entries if (e.layer, e.kind, e.path) in keys and excludable(e)]
    if rows:
        save_exclusions(tree, Exclusions(manifest.task_id, tuple(part_of(e, cwd) for e in rows)))


def handoff_summary(
    tree: SessionTree, contract: TaskContract, leaf_id: str | None = None, verifiers: Sequence[str] = ()
) -> str:
    """The governor's deterministic summary of the whole branch (no model call) plus the files it read
    and changed: what the new session is told about the old one."""
    context = tree.build_context(leaf_id) if leaf_id is not None else tree.build_context()
    messages: list[Message] = list(context.messages)
    summary = deterministic_summary(messages, contract.to_json(), verifiers)
    return summary + format_file_lists(compute_file_lists(extract_file_ops(messages)))
