"""The approval gate: a ``before_tool_call`` hook that runs, asks about or refuses each call.

Only the calls that run a command (bash) or change a file (edit, write) are gated; reads, searches and
piwork's own context tools always run. *Run everything* lets every call through (Pi's behaviour).
*Read only* refuses the gated calls with a result that says why; the tools offered to the model stay
the same (the mode is the person's choice for the project, switched at any time; changing the tool list
would change the system prompt and the session's recorded tools with it). *Ask* lets a call matching an
"always allow" rule through and otherwise asks ``ask`` (the window's card), with the change an edit or
write would make computed first. With nobody to ask (``piwork -p``) the call is refused unless
``approve_all`` (``--yes``). The wait ends with the run: the tool batch runs the hook under the run's
abort signal, so Stop gives the call the aborted result.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

from piwork.core.agent.tool_calls import BlockDecision
from piwork.core.approvals.rules import (
    ApprovalMode,
    ProjectRules,
    command_matches,
    path_matches,
    suggested_prefix,
)
from piwork.core.approvals.store import ApprovalStore
from piwork.core.paths import named_path
from piwork.core.tools.change_preview import ChangePreview, preview_change
from piwork.core.tools.registry import tool_facts

CallKind = Literal["command", "file"]
Decision = Literal["approve", "deny", "always"]

READ_ONLY_TEXT = (
    "Not run: this project is read-only in piwork, so bash, edit and write calls are refused. "
    "Say what you would run or change instead; the user can switch the project to another mode."
)
NOBODY_TO_ASK_TEXT = (
    "Not run: this project asks before commands and file changes, and this run (piwork -p) has nobody "
    "to ask. Run it again with --yes to allow them."
)


def denied_text(tool: str, reason: str) -> str:
    """The tool result of a call the user denied, with their reason when they gave one."""
    text = f"Not run: the user denied this {tool} call."
    reason = reason.strip()
    return f"{text} Their reason: {reason}" if reason else text


@dataclass(frozen=True)
class ApprovalRequest:
    """One call waiting for the user: a command and its folder, or a file change and its diff."""

    call_id: str
    tool: str
    kind: CallKind
    cwd: str
    command: str = ""
    change: ChangePreview | None = None
    suggestion: str = ""  # the "always allow" rule offered: a command prefix or the file's path


@dataclass(frozen=True)
class ApprovalAnswer:
    decision: Decision
    reason: str = ""  # a denial's reason, given to the model
    rule: str = ""  # "always": the prefix or path to save (the suggestion, edited)


ApprovalAsker = Callable[[ApprovalRequest], Awaitable[ApprovalAnswer]]


def call_kind(tool: str) -> CallKind | None:
    facts = tool_facts(tool)
    if facts.command_argument is not None:
        return "command"
    if facts.file_action in ("edit", "write"):
        return "file"
    return None


class ApprovalGate:
    """One project's approvals for a session (see the module's description)."""

    def __init__(
        self,
        store: ApprovalStore,
        project: str,
        ask: ApprovalAsker | None = None,
        approve_all: bool = False,
    ) -> None:
        self.store = store
        self.project = project
        self.ask = ask  # set by the window once it shows the session; None: nobody to ask
        self.approve_all = approve_all
        self._rules = ProjectRules()
        self.listeners: list[Callable[[ProjectRules], None]] = []  # the footer follows the mode

    @property
    def rules(self) -> ProjectRules:
        return self._rules

    @property
    def mode(self) -> ApprovalMode:
        return self._rules.mode

    @property
    def warnings(self) -> list[str]:
        return self.store.warnings

    async def load(self) -> ProjectRules:
        self._set(await asyncio.to_thread(self.store.rules_for, self.project))
        return self._rules

    async def set_mode(self, mode: ApprovalMode) -> None:
        self._set(await asyncio.to_thread(self.store.update, self.project, lambda r: _with_mode(r, mode)))

    async def allow_always(self, kind: CallKind, rule: str) -> None:
        """Save ``rule`` (a command prefix, or a path) for this project."""

        def change(rules: ProjectRules) -> ProjectRules:
            return rules.with_command(rule) if kind == "command" else rules.with_path(rule)

        self._set(await asyncio.to_thread(self.store.update, self.project, change))

    def _set(self, rules: ProjectRules) -> None:
        self._rules = rules
        for listener in list(self.listeners):
            listener(rules)

    def allowed_by_rule(self, kind: CallKind, args: dict[str, Any], absolute: str = "") -> bool:
        if kind == "command":
            command = str(args.get("command", ""))
            return any(command_matches(command, prefix) for prefix in self._rules.commands)
        return any(path_matches(absolute, rule, self.project) for rule in self._rules.paths)

    async def before_tool_call(self, call: dict[str, Any], args: dict[str, Any]) -> BlockDecision | None:
        tool = str(call.get("name", ""))
        kind = call_kind(tool)
        if kind is None or self.mode == "run":
            return None
        if self.mode == "read-only":
            return BlockDecision(READ_ONLY_TEXT)
        if self.approve_all:
            return None
        request = await self._request(str(call.get("id", "")), tool, kind, args)
        absolute = request.change.absolute if request.change is not None else ""
        if self.allowed_by_rule(kind, args, absolute):
            return None
        if self.ask is None:
            return BlockDecision(NOBODY_TO_ASK_TEXT)
        answer = await self.ask(request)
        if answer.decision == "deny":
            return BlockDecision(denied_text(tool, answer.reason))
        if answer.decision == "always" and answer.rule.strip():
            await self.allow_always(kind, answer.rule)
        return None

    async def _request(
        self, call_id: str, tool: str, kind: CallKind, args: dict[str, Any]
    ) -> ApprovalRequest:
        if kind == "command":
            command = str(args.get("command", ""))
            return ApprovalRequest(
                call_id, tool, kind, self.project, command, suggestion=suggested_prefix(command)
            )
        change = await asyncio.to_thread(preview_change, tool, args, self.project)
        return ApprovalRequest(
            call_id,
            tool,
            kind,
            self.project,
            change=change,
            suggestion=named_path(change.absolute, self.project),
        )


def _with_mode(rules: ProjectRules, mode: ApprovalMode) -> ProjectRules:
    return ProjectRules(mode, rules.commands, rules.paths)
