"""Starting a task in a running session, and keeping its tool rules in force.

``begin_task`` records the Task Contract, the manifest and the context bundle (right before the
task's first prompt, which the caller sends next), adds the bundle to the session's in-memory context
and applies the contract's tool rules. ``set_phase`` records a phase change (a boundary for the
governor) without a new session.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from piwork.core.context.bundle import (
    Bundle,
    BundleRequest,
    assemble_bundle,
    build_manifest,
    context_file_entries,
    start_task,
)
from piwork.core.context.contract import ContractError, Phase, TaskContract, allowed_tools, append_contract
from piwork.core.context.estimate import TokenEstimator, tools_json
from piwork.core.context.index import now_utc
from piwork.core.context.manifest import Manifest
from piwork.core.llm.types import ToolSpec
from piwork.core.resources.loader import LoadedResources
from piwork.core.session.context import entry_to_messages
from piwork.core.tools.registry import ALL_TOOL_NAMES, DEFAULT_ACTIVE_TOOLS

if TYPE_CHECKING:
    from piwork.core.agent.session import AgentSession


@dataclass(frozen=True)
class StartedTask:
    contract: TaskContract
    bundle: Bundle
    manifest: Manifest
    active_tools: list[str]


def apply_tool_rules(session: AgentSession, contract: TaskContract | None) -> list[str]:
    """Make the session's active tools follow the contract (read-only, verify-before-write)."""
    current = session.tool_names()
    if contract is not None and contract.mode == "source-write":
        # coming back from a read-only phase or an unverified start: the default tools return
        current += [name for name in DEFAULT_ACTIVE_TOOLS if name not in current]
    names = allowed_tools(contract, current, ALL_TOOL_NAMES)
    session.set_active_tools(names)
    return names


def begin_task(
    session: AgentSession,
    resources: LoadedResources,
    contract: TaskContract,
    task: str = "",
    unfamiliar: bool = False,
    planned_files: Sequence[str] = (),
    estimator: TokenEstimator | None = None,
) -> StartedTask:
    """Record a new task in ``session`` (call before sending the task's first prompt)."""
    estimator = estimator or TokenEstimator()
    count = estimator.counter.count
    cwd = resources.cwd
    request = BundleRequest(
        cwd,
        resources.project_trusted,
        contract,
        task or contract.goal,
        unfamiliar,
        True,
        planned_files,
        count,
    )
    bundle = assemble_bundle(request)
    active = apply_tool_rules(session, contract)
    registry = session.registry
    specs = [ToolSpec(s.name, s.description, s.parameters) for s in registry.specs(active)]
    rows = context_file_entries(
        resources.context_files, count, resources.settings.context_files_enforce_hard_cap()
    )
    manifest = build_manifest(
        "task-" + secrets.token_hex(4),
        now_utc(),
        estimator.record_tokenizer,
        rows,
        bundle,
        contract,
        estimator.system_prompt(session.system_prompt()),
        count(tools_json(specs)) if specs else 0,
        estimator.messages(session.messages),
    )
    tree = session.tree
    bundle_id = start_task(tree, contract, bundle, manifest)
    if bundle_id is not None:
        session.replace_messages([*session.messages, *entry_to_messages(tree.entry(bundle_id))])
    return StartedTask(contract, bundle, manifest, active)


def set_phase(session: AgentSession, contract: TaskContract, phase: Phase) -> TaskContract:
    """Record the contract in its new phase (a boundary); the session and its transcript stay."""
    changed = contract.with_phase(phase)
    append_contract(session.tree, changed)
    apply_tool_rules(session, changed)
    return changed


def set_verify(session: AgentSession, contract: TaskContract, verify: str) -> TaskContract:
    """Give a source-write task its verify command, which turns edit and write on."""
    changed = TaskContract.from_json({**contract.to_json(), "verify": verify})
    append_contract(session.tree, changed)
    apply_tool_rules(session, changed)
    return changed


def contract_from_text(
    text: str, profile_verify: Sequence[str] = (), default_mode: str = "source-write"
) -> TaskContract:
    """``/task [read-only|source-write] [unfamiliar] <goal>``: a contract whose verify is the profile's first."""
    words = text.split()
    mode = default_mode
    if words and words[0] in ("read-only", "source-write"):
        mode = words.pop(0)
    goal = " ".join(words).strip()
    if not goal:
        raise ContractError("Say what the task is: /task [read-only|source-write] <goal>")
    title = goal if len(goal) <= 60 else goal[:59] + "…"
    verify = profile_verify[0] if profile_verify and mode == "source-write" else None
    phase = "scout" if mode == "read-only" else "implement"
    return TaskContract.from_json(
        {
            "title": title,
            "goal": goal,
            "acceptance": [],
            "verify": verify,
            "mode": mode,
            "phase": phase,
            "startedAt": now_utc(),
        }
    )
