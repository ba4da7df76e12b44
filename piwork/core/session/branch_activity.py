"""What happened on a stretch of a session path: files read and changed, commands run, tokens, cost.

Pure functions over entry dicts (as stored in the session file, in path order). Tool calls are paired
with their results by call id: calls of the tools that touch a named file (`read`, `write`, `edit`, by what
each tool declares) give file touches (an edit carries the diff its tool recorded in the result's details),
calls of the tools that run a command (`bash`) and `!` shell commands give command runs
with their exit codes. A call without a result (the run was stopped) is kept with `finished=False`.

The checkpoints (``piwork.core.checkpoints``, a layer above) add what they saw change during each reply's
tool calls: files a command wrote (``changed``, with the tool named) and files changed by hand between turns
(``outside``); ``BranchActivity.checkpointed_calls`` counts the calls they recorded on the stretch.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from piwork.core.tools.base import FILE_ACTION_WORDS, FileAction
from piwork.core.tools.registry import tool_facts
from piwork.core.usage import USAGE_KEYS, UsageTotals

_EXIT_TEXT = re.compile(r"Command exited with code (-?\d+)\s*$")

TouchAction = FileAction | Literal["changed", "outside"]
"""A file tool's action, or what the checkpoints saw: ``changed`` during a reply's tool calls (by a command,
when ``FileTouch.tool`` names one), ``outside`` piwork between turns."""


@dataclass(frozen=True)
class FileTouch:
    """One tool call on a file."""

    path: str  # as the call named it
    key: str  # normalised absolute path (groups `a.py` and `./a.py`)
    action: TouchAction
    call_entry_id: str  # the assistant message that made the call
    result_entry_id: str | None  # its tool result (None: no result was recorded)
    failed: bool
    diff: str | None = None  # edits: the diff the tool recorded
    result_text: str = ""
    content: str | None = None  # writes: the whole content the call wrote
    tool: str | None = None  # ``changed``: the tool(s) whose calls changed it ("bash"); None: not known
    revision: tuple[str, str] | None = None  # seen by the checkpoints: the checkpoints before and after

    @property
    def words(self) -> str:
        """How the touch reads after the fact: "edited", "changed by bash", "changed outside piwork"."""
        if self.action == "changed":
            return f"changed by {self.tool}" if self.tool else "changed while the tools ran"
        if self.action == "outside":
            return "changed outside piwork"
        return FILE_ACTION_WORDS[self.action]


@dataclass(frozen=True)
class CommandRun:
    command: str
    exit_code: int | None  # None: unknown (no result, stopped, timed out, killed by a signal)
    status: str  # "exit 0", "exit 2", "timed out", "aborted", "signal SIGKILL", "no result"
    entry_id: str  # the tool result (or the call, without a result; or the shell entry)
    by_user: bool = False  # a `!` command the user ran

    @property
    def ok(self) -> bool:
        return self.exit_code == 0


@dataclass
class FileSummary:
    """Every touch of one file, in path order."""

    key: str
    display: str
    touches: list[FileTouch] = field(default_factory=list)

    @property
    def actions(self) -> list[TouchAction]:
        seen: list[TouchAction] = []
        for touch in self.touches:
            if touch.action not in seen:
                seen.append(touch.action)
        return seen

    @property
    def words(self) -> list[str]:
        """What was done to the file, each way once, in the order first done ("edited", "changed by bash")."""
        seen: list[str] = []
        for touch in self.touches:
            if touch.words not in seen:
                seen.append(touch.words)
        return seen

    @property
    def changed(self) -> bool:
        return any(t.action != "read" and not t.failed for t in self.touches)


@dataclass
class BranchActivity:
    entry_ids: list[str] = field(default_factory=list)
    user_messages: int = 0
    assistant_messages: int = 0
    tool_results: int = 0
    touches: list[FileTouch] = field(default_factory=list)
    commands: list[CommandRun] = field(default_factory=list)
    tokens: dict[str, float] = field(default_factory=lambda: dict.fromkeys(USAGE_KEYS, 0.0))
    cost: float = 0.0
    last_answer: str | None = None
    last_answer_id: str | None = None
    checkpointed_calls: int = 0  # tool calls on the stretch the checkpoints recorded (their changes added)

    @property
    def total_tokens(self) -> float:
        return sum(self.tokens.values())

    def files(self) -> list[FileSummary]:
        return group_files(self.touches)

    def read_files(self) -> list[str]:
        return [f.display for f in self.files() if "read" in f.actions]

    def changed_files(self) -> list[str]:
        return [f.display for f in self.files() if f.changed]


def group_files(touches: Iterable[FileTouch]) -> list[FileSummary]:
    """Touches grouped per file, files in the order they were first touched."""
    grouped: dict[str, FileSummary] = {}
    for touch in touches:
        summary = grouped.get(touch.key)
        if summary is None:
            summary = grouped[touch.key] = FileSummary(touch.key, touch.path)
        summary.touches.append(touch)
    return list(grouped.values())


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "\n".join(
        str(block.get("text", ""))
        for block in content
        if isinstance(block, dict) and block.get("type") == "text"
    )


def _file_key(path: str, cwd: str | None) -> str:
    expanded = os.path.expanduser(path)
    if cwd and not os.path.isabs(expanded):
        expanded = os.path.join(cwd, expanded)
    return os.path.normpath(expanded)


def _shown_path(path: str, key: str, cwd: str | None) -> str:
    if cwd and key.startswith(os.path.normpath(cwd) + os.sep):
        return os.path.relpath(key, cwd)
    return path


def _command_status(result: Mapping[str, Any]) -> tuple[int | None, str]:
    details = result.get("details")
    details = details if isinstance(details, Mapping) else {}
    if not result.get("isError"):
        return 0, "exit 0"
    code = details.get("exitCode")
    if isinstance(code, int) and not isinstance(code, bool):
        return code, f"exit {code}"
    if details.get("timedOut"):
        return None, "timed out"
    if details.get("aborted"):
        return None, "aborted"
    if isinstance(details.get("signal"), str):
        return None, f"signal {details['signal']}"
    found = _EXIT_TEXT.search(_text(result.get("content")).rstrip())
    if found:
        code = int(found.group(1))
        return code, f"exit {code}"
    return None, "failed"


class _Collector:
    def __init__(self, cwd: str | None) -> None:
        self.cwd = cwd
        self.activity = BranchActivity()
        self.calls: dict[str, tuple[str, dict[str, Any], str]] = {}  # call id -> (tool, arguments, entry id)
        self.answered: set[str] = set()
        self.earlier: set[str] = set()  # calls made before the stretch

    def take(self, entry: Mapping[str, Any]) -> None:
        entry_id = entry.get("id")
        if not isinstance(entry_id, str):
            return
        self.activity.entry_ids.append(entry_id)
        # branch summaries, compactions and usage entries (traffic outside a reply) record what they cost
        usage = entry.get("usage")
        if entry.get("type") in ("branch_summary", "compaction", "usage"):
            self._usage(usage)
        if entry.get("type") != "message" or not isinstance(entry.get("message"), Mapping):
            return
        message = entry["message"]
        role = message.get("role")
        if role == "user":
            self.activity.user_messages += 1
        elif role == "assistant":
            self._assistant(entry_id, message)
        elif role == "toolResult":
            self.activity.tool_results += 1
            self._result(entry_id, message)
        elif role == "bashExecution":
            code = message.get("exitCode")
            code = code if isinstance(code, int) and not isinstance(code, bool) else None
            status = (
                "cancelled"
                if message.get("cancelled")
                else (f"exit {code}" if code is not None else "failed")
            )
            self.activity.commands.append(
                CommandRun(str(message.get("command", "")), code, status, entry_id, True)
            )

    def _usage(self, usage: Any) -> None:
        added = UsageTotals(self.activity.tokens)  # adds into the activity's own token counts
        added.add(usage)
        self.activity.cost += added.cost["total"]

    def _assistant(self, entry_id: str, message: Mapping[str, Any]) -> None:
        self.activity.assistant_messages += 1
        self._usage(message.get("usage"))
        content = message.get("content")
        text = _text(content).strip()
        if text:
            self.activity.last_answer, self.activity.last_answer_id = text, entry_id
        if isinstance(content, list):
            for block in content:
                if (
                    isinstance(block, dict)
                    and block.get("type") == "toolCall"
                    and isinstance(block.get("id"), str)
                ):
                    arguments = block.get("arguments")
                    self.calls[block["id"]] = (
                        str(block.get("name", "")),
                        dict(arguments) if isinstance(arguments, Mapping) else {},
                        entry_id,
                    )

    def _result(self, entry_id: str, message: Mapping[str, Any]) -> None:
        call_id = message.get("toolCallId")
        call = self.calls.get(call_id) if isinstance(call_id, str) else None
        if call is None or not isinstance(call_id, str):
            return
        self.answered.add(call_id)
        self._record(call, entry_id, message)

    def _record(
        self, call: tuple[str, dict[str, Any], str], result_id: str | None, result: Mapping[str, Any]
    ) -> None:
        tool, arguments, call_entry = call
        failed = bool(result.get("isError"))
        facts = tool_facts(tool)
        path = arguments.get(facts.path_argument) if facts.path_argument is not None else None
        command = arguments.get(facts.command_argument) if facts.command_argument is not None else None
        if facts.file_action is not None and isinstance(path, str):
            key = _file_key(path, self.cwd)
            details = result.get("details")
            diff = details.get("diff") if isinstance(details, Mapping) else None
            content = arguments.get("content") if facts.file_action == "write" else None
            self.activity.touches.append(
                FileTouch(
                    _shown_path(path, key, self.cwd), key, facts.file_action, call_entry, result_id,
                    failed or result_id is None, diff if isinstance(diff, str) else None,
                    _text(result.get("content")), content if isinstance(content, str) else None,
                )
            )  # fmt: skip
        elif isinstance(command, str):
            if result_id is None:
                code, status = None, "no result"
            else:
                code, status = _command_status(result)
            self.activity.commands.append(CommandRun(command, code, status, result_id or call_entry))

    def learn(self, entry: Mapping[str, Any]) -> None:
        """Note the tool calls of an entry before the stretch (their results may fall inside it)."""
        message = entry.get("message") if entry.get("type") == "message" else None
        if isinstance(message, Mapping) and message.get("role") == "assistant":
            before = set(self.calls)
            saved = (self.activity.assistant_messages, dict(self.activity.tokens), self.activity.cost)
            last = (self.activity.last_answer, self.activity.last_answer_id)
            self._assistant(str(entry.get("id")), message)
            self.activity.assistant_messages, self.activity.tokens, self.activity.cost = saved
            self.activity.last_answer, self.activity.last_answer_id = last
            self.answered.update(set(self.calls) - before - self.answered)  # never listed as unanswered
            self.earlier.update(set(self.calls) - before)

    def finish(self) -> BranchActivity:
        for call_id, call in self.calls.items():
            if call_id not in self.answered:
                self._record(call, None, {})
        return self.activity


def branch_activity(
    entries: Iterable[Mapping[str, Any]], cwd: str | None = None, before: Iterable[Mapping[str, Any]] = ()
) -> BranchActivity:
    """Activity of `entries` (root→leaf order). Relative file paths are resolved against `cwd`;
    `before`: the entries leading to them (only their tool calls are read, for results in `entries`)."""
    collector = _Collector(cwd)
    for entry in before:
        if isinstance(entry, Mapping):
            collector.learn(entry)
    for entry in entries:
        if isinstance(entry, Mapping):
            collector.take(entry)
    return collector.finish()
