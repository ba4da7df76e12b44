"""Starting a task in a running session, and keeping its tool rules in force.

``begin_task`` records the Task Contract, the manifest and the context bundle (right before the
task's first prompt, which the caller sends next), adds the bundle to the session's in-memory context
and applies the contract's tool rules. ``set_phase`` records a phase change (a boundary for the
governor) without a new session.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, cast

from piwork.core.context.bundle import (
    Bundle,
    BundleRequest,
    assemble_bundle,
    build_manifest,
    context_file_entries,
    start_task,
)
from piwork.core.context.contract import (
    CONTRACT_CUSTOM_TYPE,
    PHASES,
    ContractError,
    Phase,
    TaskContract,
    allowed_tools,
    append_contract,
)
from piwork.core.context.estimate import TokenEstimator, tools_json
from piwork.core.context.index import now_utc
from piwork.core.context.manifest import Manifest
from piwork.core.llm.types import ToolSpec
from piwork.core.resources.loader import LoadedResources
from piwork.core.session.context import entry_to_messages
from piwork.core.session.tree import SessionTree
from piwork.core.tools.registry import DEFAULT_ACTIVE_TOOLS

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
    names = allowed_tools(contract, current, session.registry.names())
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
    replaced = _unprompted_task_start(tree)
    if replaced is not False:  # a task started and never prompted: this one takes its place
        if replaced is None:
            tree.reset_leaf()
        else:
            tree.branch(replaced)
        session.replace_messages(list(tree.build_context().messages))
    bundle_id = start_task(tree, contract, bundle, manifest)
    if bundle_id is not None:
        session.replace_messages([*session.messages, *entry_to_messages(tree.entry(bundle_id))])
    return StartedTask(contract, bundle, manifest, active)


def _unprompted_task_start(tree: SessionTree) -> str | Literal[False] | None:
    """Where the branch was before the latest task started, when nothing but that task's own entries
    (contract, manifest, bundle, state) came after it: the entry to go back to (None: the root).
    False when there is no such task (no contract, or a message since it)."""
    found: str | Literal[False] | None = False
    for record in reversed(tree.path()):
        if record.type not in _TASK_STATE_TYPES:
            break  # a message, a compaction, a model change: the task was used
        body = tree.body(record) if record.type == "custom" else None
        if isinstance(body, dict) and body.get("customType") == CONTRACT_CUSTOM_TYPE:
            parent = record.parent_id
            found = parent if isinstance(parent, str) else None  # go on: an earlier unprompted one
    return found


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


_TASK_STATE_TYPES = frozenset({"custom", "custom_message", "label", "session_info"})


@dataclass(frozen=True)
class TaskWords:
    """What ``/task`` was given, in any order: flags, ``key: value`` fields and the goal's words."""

    goal: str
    mode: str | None = None
    unfamiliar: bool = False
    verify: str | None = None
    acceptance: tuple[str, ...] = ()
    phase: Phase | None = None


_FIELD = re.compile(r"(?:^|\s)(verify|accept|acceptance|phase|mode):(?=\s|$)")
_FLAGS = {"read-only": "mode", "source-write": "mode", "unfamiliar": "unfamiliar"}
TASK_USAGE = (
    "/task [read-only|source-write] [unfamiliar] <goal> [verify: <command>] [accept: <criterion>]… "
    "[phase: scout|plan|implement|verify]"
)


def parse_task(text: str) -> TaskWords:
    """``/task`` words in any order. ``verify:`` and ``accept:`` (repeatable) take the text up to the
    next field; ``phase:`` and ``mode:`` one word; ``read-only``, ``source-write`` and ``unfamiliar``
    are flags anywhere else; the other words are the goal."""
    pieces = _FIELD.split(text)
    goal_words: list[str] = []
    mode: str | None = None
    unfamiliar = False
    verify: str | None = None
    acceptance: list[str] = []
    phase: Phase | None = None

    def words(chunk: str) -> None:
        nonlocal mode, unfamiliar
        for word in chunk.split():
            if word in ("read-only", "source-write"):
                mode = word
            elif word == "unfamiliar":
                unfamiliar = True
            else:
                goal_words.append(word)

    words(pieces[0])
    for key, value in zip(pieces[1::2], pieces[2::2], strict=True):
        value = value.strip()
        if key in ("phase", "mode"):
            first, _, rest = value.partition(" ")
            if key == "phase":
                if first not in PHASES:
                    raise ContractError(f"phase: use one of {', '.join(PHASES)} (got {first or 'nothing'!r})")
                phase = cast(Phase, first)
            else:
                if first not in ("read-only", "source-write"):
                    raise ContractError(f"mode: use read-only or source-write (got {first or 'nothing'!r})")
                mode = first
            words(rest)
        elif not value:
            raise ContractError(f"{key}: needs a value")
        elif key == "verify":
            verify = value
        else:
            acceptance.append(value)
    return TaskWords(" ".join(goal_words), mode, unfamiliar, verify, tuple(acceptance), phase)


def contract_from_text(
    text: str, profile_verify: Sequence[str] = (), default_mode: str = "source-write"
) -> TaskContract:
    """``/task`` (see :func:`parse_task`): a contract whose verify is the one given, else the profile's
    first (for a source-write task)."""
    return contract_from_words(parse_task(text), profile_verify, default_mode)


def contract_from_words(
    words: TaskWords, profile_verify: Sequence[str] = (), default_mode: str = "source-write"
) -> TaskContract:
    mode = words.mode or default_mode
    goal = words.goal.strip()
    if not goal:
        raise ContractError("Say what the task is: " + TASK_USAGE)
    title = goal if len(goal) <= 60 else goal[:59] + "…"
    verify = words.verify
    if verify is None and profile_verify and mode == "source-write":
        verify = profile_verify[0]
    phase = words.phase or ("scout" if mode == "read-only" else "implement")
    data: dict[str, object] = {
        "title": title,
        "goal": goal,
        "acceptance": list(words.acceptance),
        "verify": verify,
        "mode": mode,
        "phase": phase,
        "startedAt": now_utc(),
    }
    if words.unfamiliar:
        data["unfamiliar"] = True  # kept by phase changes and /fresh: the task pack stays
    return TaskContract.from_json(data)


def edit_contract(
    session: AgentSession,
    contract: TaskContract,
    *,
    goal: str | None = None,
    mode: str | None = None,
    verify: str | None = None,
    acceptance: Sequence[str] | None = None,
    phase: Phase | None = None,
) -> TaskContract:
    """Record the contract as the person edited it (goal, mode, verify, acceptance criteria, phase) and
    apply its tool rules; a changed phase or mode is a boundary for the governor (the working set is
    formed again for the new phase), nothing else changes the session. Unchanged: nothing is written."""
    data = contract.to_json()
    if goal is not None:
        goal = " ".join(goal.split())
        if not goal:
            raise ContractError("The task needs a goal.")
        data["goal"] = goal
        if contract.title in ("", contract.goal, contract.goal[:59] + "…"):
            data["title"] = goal if len(goal) <= 60 else goal[:59] + "…"
    if mode is not None:
        data["mode"] = mode
    if verify is not None:
        data["verify"] = verify.strip() or None
    if acceptance is not None:
        data["acceptance"] = [a.strip() for a in acceptance if a.strip()]
    if phase is not None:
        data["phase"] = phase
    changed = TaskContract.from_json(data)
    if changed == contract:
        return contract
    append_contract(session.tree, changed)
    apply_tool_rules(session, changed)
    return changed
