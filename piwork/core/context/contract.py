"""The Task Contract: what a task is for, how it is verified, and which tools it may use.

Kept as a state-only ``custom`` entry ``piwork.taskContract``; its text form opens the context
bundle. Tool rules: a read-only task gets only the non-writing tools (read, grep, find, ls); a
source-write task gets edit/write only once it has a verify command.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal, cast

from piwork.core.context.entries import custom_bodies
from piwork.core.resources.profile import TASK_MODES, Profile, TaskMode
from piwork.core.session.tree import SessionTree
from piwork.core.tools.registry import builtin_tool_names, tool_facts

CONTRACT_CUSTOM_TYPE = "piwork.taskContract"
Phase = Literal["scout", "plan", "implement", "verify"]
PHASES: tuple[Phase, ...] = ("scout", "plan", "implement", "verify")
# the built-in tools that change nothing (read, grep, find, ls), by what each tool declares
READ_ONLY_TOOLS = builtin_tool_names(lambda facts: facts.read_only)
# piwork's context tools (model_tools): they change nothing, so every task has them
CONTEXT_TOOLS = ("context_preflight", "context_budget", "context_index_status", "context_index_search")
SEARCH_RESULTS = 10  # most results of an index search (``/context search`` and the model's tool)


class ContractError(ValueError):
    """A contract that cannot be used as given (the message says which field and why)."""


@dataclass(frozen=True)
class TaskContract:
    title: str
    goal: str
    mode: TaskMode
    phase: Phase
    started_at: str
    acceptance: tuple[str, ...] = ()
    verify: str | None = None
    force_verify: bool = False
    extra: Mapping[str, Any] = field(default_factory=dict)  # unknown keys, kept on rewrite

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = dict(self.extra)
        out.update(
            title=self.title,
            goal=self.goal,
            acceptance=list(self.acceptance),
            verify=self.verify,
            mode=self.mode,
            phase=self.phase,
            startedAt=self.started_at,
        )
        if self.force_verify:
            out["forceVerify"] = True
        return out

    @classmethod
    def from_json(cls, value: Any) -> TaskContract:
        if not isinstance(value, Mapping):
            raise ContractError("the task contract is not an object")
        mode, phase = value.get("mode"), value.get("phase")
        if mode not in TASK_MODES:
            raise ContractError(f'mode must be "read-only" or "source-write", not {mode!r}')
        if phase not in PHASES:
            raise ContractError(f"phase must be one of {', '.join(PHASES)}, not {phase!r}")
        acceptance = value.get("acceptance") or []
        if not isinstance(acceptance, list) or not all(isinstance(a, str) for a in acceptance):
            raise ContractError("acceptance must be a list of strings")
        verify = value.get("verify")
        if verify is not None and not isinstance(verify, str):
            raise ContractError("verify must be a command (a string)")
        known = {"title", "goal", "acceptance", "verify", "mode", "phase", "startedAt", "forceVerify"}
        return cls(
            str(value.get("title") or ""),
            str(value.get("goal") or ""),
            cast(TaskMode, mode),
            cast(Phase, phase),
            str(value.get("startedAt") or ""),
            tuple(acceptance),
            verify.strip() or None if isinstance(verify, str) else None,
            value.get("forceVerify") is True,
            {k: v for k, v in value.items() if k not in known},
        )

    def with_phase(self, phase: Phase) -> TaskContract:
        if phase not in PHASES:
            raise ContractError(f"phase must be one of {', '.join(PHASES)}, not {phase!r}")
        return replace(self, phase=phase)

    def render_text(self) -> str:
        lines = ["Task contract", f"Title: {self.title}", f"Goal: {self.goal}"]
        if self.acceptance:
            lines.append("Acceptance:")
            lines.extend(f"- {a}" for a in self.acceptance)
        lines.append(f"Verify: {self.verify or '(not set)'}")
        lines.append(f"Mode: {self.mode}; phase: {self.phase}")
        if self.mode == "read-only":
            lines.append(f"This task is read-only: only {_listed(READ_ONLY_TOOLS, 'and')} are available.")
        elif not self.verify:
            lines.append("No verify command yet: edit and write stay off until one is set.")
        return "\n".join(lines)


def allowed_tools(
    contract: TaskContract | None, active: Iterable[str], available: Iterable[str] | None = None
) -> list[str]:
    """The tools the task's rules leave active, from the ``active`` ones (order kept).

    A read-only task gets exactly the non-writing tools (read, grep, find, ls) that are ``available``
    (default: ``active``), whether or not they were active before; a source-write task without a
    verify command loses edit and write. Every task gets the context tools that are ``available``.
    """
    names = list(active)
    if contract is None:
        return names
    pool = set(names if available is None else available)
    context = [n for n in CONTEXT_TOOLS if n in pool]
    if contract.mode == "read-only":
        return [*(n for n in READ_ONLY_TOOLS if n in pool), *context]
    if not contract.verify:
        names = [n for n in names if not tool_facts(n).changes_files]
    return [*names, *(n for n in context if n not in names)]


def blocked_tool_reason(contract: TaskContract | None, tool_name: str) -> str | None:
    """Why the task forbids ``tool_name`` (None when allowed); for an error result if it is called anyway."""
    if contract is None or tool_name in allowed_tools(contract, [tool_name]):
        return None
    if contract.mode == "read-only":
        return (
            f"The task '{contract.title}' is read-only: {tool_name} is not available "
            f"(use {_listed(READ_ONLY_TOOLS, 'or')})."
        )
    return (
        f"The task '{contract.title}' has no verify command yet: set one in the task contract "
        f"before using {tool_name}."
    )


def _listed(names: tuple[str, ...], last: str) -> str:
    """``a, b and c`` (or ``a, b or c``)."""
    return f"{', '.join(names[:-1])} {last} {names[-1]}" if len(names) > 1 else "".join(names)


def verify_commands(contract: TaskContract | None, profile: Profile | None) -> list[str]:
    """The registered verifier commands: the contract's ``verify``, then the profile's ``verify[]``."""
    out: list[str] = []
    for command in ([contract.verify] if contract and contract.verify else []) + list(
        profile.verify if profile else ()
    ):
        if command.strip() and command.strip() not in out:
            out.append(command.strip())
    return out


def append_contract(tree: SessionTree, contract: TaskContract) -> str:
    return tree.append_custom_entry(CONTRACT_CUSTOM_TYPE, contract.to_json())


def latest_contract(tree: SessionTree, leaf_id: Any = None) -> TaskContract | None:
    """The contract in force at the leaf (or ``leaf_id``): the last valid one on the path."""
    for body in custom_bodies(tree, CONTRACT_CUSTOM_TYPE, leaf_id):
        try:
            return TaskContract.from_json(body.get("data"))
        except ContractError:
            continue
    return None
