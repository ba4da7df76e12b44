"""Which files the summarized part of a conversation read or changed.

Only the calls of tools that touch one named file (``read``, ``write`` and ``edit``, by what each tool
declares) in assistant messages are tracked (and the
calls a tool made itself, recorded on its result as ``nestedCalls``), with their ``path`` argument
taken verbatim (``./a.py`` and ``a.py`` stay distinct). The lists are carried from
one summary to the next through the ``details`` of compaction and branch-summary entries, so they
accumulate over repeated compactions.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from piwork.core.jscompat import js_sorted
from piwork.core.tools.base import FILE_ACTION_WORDS
from piwork.core.tools.registry import tool_facts


@dataclass
class FileOps:
    """Insertion-ordered sets of paths (dicts used as ordered sets)."""

    read: dict[str, None] = field(default_factory=dict)
    written: dict[str, None] = field(default_factory=dict)
    edited: dict[str, None] = field(default_factory=dict)

    def add_from_message(self, message: Any) -> None:
        """Record the file tool calls of an assistant message, or the nested calls recorded on a
        tool result; anything else is ignored."""
        if not isinstance(message, Mapping):
            return
        if message.get("role") == "toolResult":
            nested = message.get("nestedCalls")
            calls = nested.get("calls") if isinstance(nested, Mapping) else None
            for call in calls if isinstance(calls, list) else ():
                if isinstance(call, Mapping):
                    self._add(call.get("name"), call.get("arguments"))
            return
        if message.get("role") != "assistant":
            return
        content = message.get("content")
        if not isinstance(content, list):
            return
        for block in content:
            if not isinstance(block, Mapping) or block.get("type") != "toolCall":
                continue
            if "arguments" not in block or "name" not in block:
                continue
            self._add(block["name"], block["arguments"])

    def _add(self, name: Any, args: Any) -> None:
        facts = tool_facts(name) if isinstance(name, str) else None
        if facts is None or facts.file_action is None or facts.path_argument is None:
            return
        path = args.get(facts.path_argument) if isinstance(args, Mapping) else None
        if isinstance(path, str) and path:
            getattr(self, FILE_ACTION_WORDS[facts.file_action])[path] = None

    def add_from_details(self, details: Any) -> None:
        """Carry the lists of an earlier summary: read files stay read, modified count as edited.

        Non-string items (a hand-edited file) are skipped."""
        if not isinstance(details, Mapping):
            return
        read_files = details.get("readFiles")
        if isinstance(read_files, list):
            for path in read_files:
                if isinstance(path, str):
                    self.read[path] = None
        modified_files = details.get("modifiedFiles")
        if isinstance(modified_files, list):
            for path in modified_files:
                if isinstance(path, str):
                    self.edited[path] = None

    def to_json(self) -> dict[str, list[str]]:
        return {"read": list(self.read), "written": list(self.written), "edited": list(self.edited)}


@dataclass(frozen=True)
class FileLists:
    """``modified_files`` = edited ∪ written; ``read_files`` = read minus modified; both JS-sorted."""

    read_files: list[str]
    modified_files: list[str]

    def to_details(self) -> dict[str, list[str]]:
        return {"readFiles": list(self.read_files), "modifiedFiles": list(self.modified_files)}


def extract_file_ops(messages: Iterable[Any], ops: FileOps | None = None) -> FileOps:
    ops = FileOps() if ops is None else ops
    for message in messages:
        ops.add_from_message(message)
    return ops


def compute_file_lists(ops: FileOps) -> FileLists:
    modified = dict.fromkeys([*ops.edited, *ops.written])
    read_only = [path for path in ops.read if path not in modified]
    return FileLists(read_files=js_sorted(read_only), modified_files=js_sorted(list(modified)))


def format_file_lists(lists: FileLists) -> str:
    """The block appended to a summary: empty, or ``\\n\\n`` + the non-empty sections."""
    sections = []
    if lists.read_files:
        sections.append("<read-files>\n" + "\n".join(lists.read_files) + "\n</read-files>")
    if lists.modified_files:
        sections.append("<modified-files>\n" + "\n".join(lists.modified_files) + "\n</modified-files>")
    if not sections:
        return ""
    return "\n\n" + "\n\n".join(sections)
