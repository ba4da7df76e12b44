"""X-ray of the next request: where its tokens come from, part by part.

Parts are the system prompt's named slices (each context file and the skills index apart), each tool
schema, and every message (tool results on their own, tagged with the boundary group they belong to).
The parts add up **exactly** to the request total counted with the same tokenizer: the system prompt and
the tool schemas are each encoded once, as a whole (as the request counts them), and every token goes to
the slice it starts in.

A view that must not wait for a cold count asks for the messages counted so far (``counted_only``): the
others come as parts marked ``counting`` with no tokens yet, and the total is what is counted so far.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from piwork.core.context.estimate import TokenEstimator, tool_schemas
from piwork.core.context.groups import partition
from piwork.core.llm.types import ToolSpec
from piwork.core.messages import Message, message_text
from piwork.core.resources.system_prompt import PromptPart

PartKind = Literal[
    "system",
    "context_file",
    "skills",
    "tool_schema",
    "user",
    "assistant",
    "tool_result",
    "custom",
    "bash",
    "compaction_summary",
    "branch_summary",
]

_ROLE_KIND: dict[str, PartKind] = {
    "user": "user",
    "assistant": "assistant",
    "toolResult": "tool_result",
    "custom": "custom",
    "bashExecution": "bash",
    "compactionSummary": "compaction_summary",
    "branchSummary": "branch_summary",
}
_FILE_BLOCK = re.compile(r'<project_instructions path="((?:[^"])*)">\n')
LABEL_CHARS = 80
_LABEL_HEAD = 4 * LABEL_CHARS  # a text's head whose words make its label, most often


@dataclass(frozen=True, slots=True)  # one per message of a long session
class XrayPart:
    kind: PartKind
    label: str
    tokens: int
    share: float  # of the request total (0..1)
    ref: str | None = None  # entry id, tool call id or file path a view can jump to
    group: int | None = None  # boundary group of a message part
    counting: bool = False  # not counted yet: ``tokens`` is 0 until a later X-ray


@dataclass(frozen=True)
class Xray:
    parts: tuple[XrayPart, ...]
    total: int  # of the counted parts: the request total once ``counting`` is 0
    tokenizer: str

    @functools.cached_property
    def counting(self) -> int:
        """How many parts are not counted yet (looked through once: a long session has 100k parts)."""
        return sum(1 for part in self.parts if part.counting)

    def by_kind(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for part in self.parts:
            out[part.kind] = out.get(part.kind, 0) + part.tokens
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "total": self.total,
            "tokenizer": self.tokenizer,
            "parts": [
                {
                    "kind": p.kind,
                    "label": p.label,
                    "tokens": p.tokens,
                    "share": p.share,
                    "ref": p.ref,
                    "group": p.group,
                    **({"counting": True} if p.counting else {}),
                }
                for p in self.parts
            ],
        }


def _unescape_attribute(text: str) -> str:
    return text.replace("&quot;", '"').replace("&lt;", "<").replace("&amp;", "&")


def _system_slices(parts: Sequence[PromptPart]) -> list[tuple[PartKind, str, str | None, str]]:
    """(kind, label, ref, text) slices; the project context is split per file."""
    out: list[tuple[PartKind, str, str | None, str]] = []
    for part in parts:
        if part.name == "skills":
            out.append(("skills", "skills index", None, part.text))
        elif part.name == "project_context":
            out.extend(_context_file_slices(part.text))
        else:
            out.append(("system", f"system prompt: {part.name}", None, part.text))
    return [s for s in out if s[3]]


def _context_file_slices(text: str) -> list[tuple[PartKind, str, str | None, str]]:
    starts = [(m.start(), _unescape_attribute(m.group(1))) for m in _FILE_BLOCK.finditer(text)]
    if not starts:
        return [("system", "system prompt: project context", None, text)]
    out: list[tuple[PartKind, str, str | None, str]] = [
        ("system", "system prompt: project context", None, text[: starts[0][0]])
    ]
    for i, (start, path) in enumerate(starts):
        end = starts[i + 1][0] if i + 1 < len(starts) else len(text)
        out.append(("context_file", path, path, text[start:end]))
    return out


def _argument(call: Message | None) -> str:
    args = call.get("arguments") if call is not None else None
    if not isinstance(args, dict):
        return ""
    for key in ("path", "command", "pattern"):
        value = args.get(key)
        if isinstance(value, str) and value:
            return value
    return ""


def _short(text: str) -> str:
    if len(text) > _LABEL_HEAD:
        # The words of a head of the text, joined, begin the words of the whole text joined (the last
        # one cut at most): once they are longer than a label, the label is theirs, and a long text is
        # not split whole for its first 80 characters.
        head = " ".join(text[:_LABEL_HEAD].split())
        if len(head) > LABEL_CHARS:
            return head[: LABEL_CHARS - 1] + "…"
    line = " ".join(text.split())
    return line if len(line) <= LABEL_CHARS else line[: LABEL_CHARS - 1] + "…"


def _message_label(message: Message, calls: dict[str, Message]) -> str:
    role = message.get("role")
    if role == "toolResult":
        call_id = message.get("toolCallId")
        call = calls.get(call_id) if isinstance(call_id, str) else None
        return _short(f"{message.get('toolName', 'tool')} {_argument(call)}".strip())
    if role == "assistant":
        content = message.get("content")
        n = (
            sum(1 for b in content if isinstance(b, dict) and b.get("type") == "toolCall")
            if isinstance(content, list)
            else 0
        )
        text = message_text(message, " ")
        label = _short(text) if text.strip() else "assistant"
        return f"{label} (+{n} tool call{'s' if n != 1 else ''})" if n else label
    if role == "bashExecution":
        return _short(f"! {message.get('command', '')}")
    if role in ("compactionSummary", "branchSummary"):
        return "compaction summary" if role == "compactionSummary" else "branch summary"
    if role == "custom":
        return _short(f"{message.get('customType', 'custom')}")
    return _short(message_text(message, " ")) or str(role)


MessageRow = tuple[Message, PartKind, str, str | None, int | None]  # message, kind, label, target, group


def message_rows(
    messages: Sequence[Message], entry_ids: Sequence[str | None] | None = None
) -> list[MessageRow]:
    """The X-ray's rows of ``messages`` before their tokens are counted: each message sent to the model
    with its part kind, label, jump target and group (see :func:`xray`). Made once for a message list, it
    serves every X-ray of that list (a partial one while the list is counted, then the complete one)."""
    rows: list[MessageRow] = []
    calls: dict[str, Message] = {}
    for message in messages:
        if message.get("role") == "assistant" and isinstance(message.get("content"), list):
            for block in message["content"]:
                if (
                    isinstance(block, dict)
                    and block.get("type") == "toolCall"
                    and isinstance(block.get("id"), str)
                ):
                    calls[block["id"]] = block
    group_of = {id(m): g for g, group in enumerate(partition(messages).groups) for m in group.messages}
    for i, message in enumerate(messages):
        role = message.get("role")
        role_kind = _ROLE_KIND.get(role) if isinstance(role, str) else None
        if role_kind is None or (role == "bashExecution" and message.get("excludeFromContext")):
            continue  # not sent to the model
        target: str | None = entry_ids[i] if entry_ids is not None and i < len(entry_ids) else None
        if role == "toolResult" and isinstance(message.get("toolCallId"), str):
            target = message["toolCallId"]
        rows.append((message, role_kind, _message_label(message, calls), target, group_of.get(id(message))))
    return rows


def xray(
    system_prompt: str | Sequence[PromptPart],
    tools: Sequence[ToolSpec],
    messages: Sequence[Message],
    estimator: TokenEstimator,
    entry_ids: Sequence[str | None] | None = None,
    counted_only: bool = False,
    rows: Sequence[MessageRow] | None = None,
) -> Xray:
    """The breakdown of a request of ``messages`` (agent messages, before conversion) by source.

    ``system_prompt`` may be the assembler's parts (``system_prompt_parts``) or the plain text;
    ``entry_ids`` (parallel to ``messages``) gives the session entry each message came from;
    ``counted_only`` leaves the messages the estimator has not counted yet as ``counting`` parts; ``rows``
    (``message_rows(messages, entry_ids)``, made earlier for these messages) saves labelling them again. Blocking:
    long texts counted for the first time are appended to the tokenizer's count file, so run it off the
    GUI thread.
    """
    if isinstance(system_prompt, str):
        prompt_parts: Sequence[PromptPart] = [PromptPart("prompt", system_prompt)] if system_prompt else []
        whole_prompt = system_prompt
    else:
        prompt_parts = system_prompt
        whole_prompt = "".join(p.text for p in prompt_parts)
    raw: list[tuple[PartKind, str, int | None, str | None, int | None]] = []

    slices = _system_slices(prompt_parts)
    ends: list[int] = []
    position = 0
    for slice_ in slices:
        position += len(slice_[3])
        ends.append(position)
    for (kind, label, ref, _), tokens in zip(slices, estimator.slices(whole_prompt, ends), strict=True):
        raw.append((kind, label, tokens, ref, None))

    if tools:
        schemas = tool_schemas(tools)
        whole_tools = "[" + ", ".join(schemas) + "]"  # tools_json(tools), serialised once
        tool_ends: list[int] = []
        position = 1  # "["
        for i, schema in enumerate(schemas):
            position += len(schema) + (2 if i else 0)  # ", " between items
            tool_ends.append(position if i + 1 < len(tools) else len(whole_tools))
        for tool, tokens in zip(tools, estimator.slices(whole_tools, tool_ends), strict=True):
            raw.append(("tool_schema", f"tool: {tool.name}", tokens, tool.name, None))

    for message, role_kind, label, target, group in (
        message_rows(messages, entry_ids) if rows is None else rows
    ):
        counted = estimator.known(message) if counted_only else estimator.message(message)
        raw.append((role_kind, label, counted, target, group))

    estimator.counter.flush()  # counts of long texts, remembered for the next run (callers are off the GUI thread)
    total = sum(r[2] or 0 for r in raw)
    parts = tuple(
        XrayPart(
            kind, label, tokens or 0, (tokens or 0) / total if total else 0.0, ref, group, tokens is None
        )
        for kind, label, tokens, ref, group in raw
    )
    return Xray(parts, total, estimator.tokenizer)
