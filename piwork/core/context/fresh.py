"""``/fresh task|scout|be-to-fe``: continue a task in a new session, seeded instead of carried over.

Used when preflight finds the input too large or the working set cannot be reduced safely. The new
session (its header names the old one as parent) holds: a summary of the old branch handed over as a
``piwork.freshSummary`` message, then the Task Contract, a new manifest and a freshly assembled
context bundle — ready for the first prompt. The old session is not touched.

- ``task``: the same contract, phase kept;
- ``scout``: the contract made read-only, phase ``scout``;
- ``be-to-fe``: a frontend contract that starts from the backend result (phase ``plan``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from piwork.core.compaction.file_ops import compute_file_lists, extract_file_ops, format_file_lists
from piwork.core.context.bundle import (
    BundleRequest,
    assemble_bundle,
    build_manifest,
    context_file_entries,
    start_task,
)
from piwork.core.context.contract import TaskContract, latest_contract
from piwork.core.context.durable import deterministic_summary
from piwork.core.context.estimate import TokenEstimator
from piwork.core.context.index import now_utc
from piwork.core.errors import PiworkError
from piwork.core.messages import Message
from piwork.core.resources.loader import LoadedResources
from piwork.core.session.store import Session, create_session
from piwork.core.session.tree import SessionTree

FreshKind = Literal["task", "scout", "be-to-fe"]
FRESH_KINDS: tuple[FreshKind, ...] = ("task", "scout", "be-to-fe")
SUMMARY_CUSTOM_TYPE = "piwork.freshSummary"


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
            planned_files=planned_files,
            count=count,
        )
    )
    rows = context_file_entries(
        resources.context_files, count, resources.settings.context_files_enforce_hard_cap()
    )
    manifest = build_manifest(
        f"task-{source_id[:8]}-{kind}",
        now_utc(),
        estimator.record_tokenizer,
        rows,
        bundle,
        new_contract,
        0,
        0,
        count(intro),
    )
    # the session has no user message yet: its name is what lists and search show for it
    tree.set_name(f"/fresh {kind}: {new_contract.title or new_contract.goal}"[:200])
    start_task(tree, new_contract, bundle, manifest)  # the bundle stays last, right before the first prompt
    if session.path is not None:
        session.write_new_file()
    return FreshResult(session, str(session.path) if session.path else None, new_contract, summary)


def handoff_summary(
    tree: SessionTree, contract: TaskContract, leaf_id: str | None = None, verifiers: Sequence[str] = ()
) -> str:
    """The governor's deterministic summary of the whole branch (no model call) plus the files it read
    and changed: what the new session is told about the old one."""
    context = tree.build_context(leaf_id) if leaf_id is not None else tree.build_context()
    messages: list[Message] = list(context.messages)
    summary = deterministic_summary(messages, contract.to_json(), verifiers)
    return summary + format_file_lists(compute_file_lists(extract_file_ops(messages)))
