"""Find the tool results of a session whose output was cut before the model saw it.

Works on the shared message shapes (AgentMessage dicts): `toolResult` messages whose `details` carry
`truncation`, `fullOutputPath` or a limit flag, and `bashExecution` messages (the user's own `!`
commands) marked `truncated`. The command or path comes from the assistant's matching tool call.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from piwork.core.tools import LogInfo, tool_facts
from piwork.core.truncate import format_size

_LIMIT_FLAGS = {
    "matchLimitReached": "match limit reached",
    "resultLimitReached": "result limit reached",
    "entryLimitReached": "entry limit reached",
    "linesTruncated": "long lines shortened",
}


@dataclass(frozen=True)
class TruncatedOutput:
    tool_call_id: str
    tool_name: str
    title: str  # the command, path or pattern the tool worked on
    model_text: str  # what the model saw
    truncation: Mapping[str, Any] | None
    full_output_path: str | None
    limit_notes: tuple[str, ...]
    is_error: bool
    timestamp: int | None

    @property
    def keeps_tail(self) -> bool:
        return self.tool_name == "!bash" or tool_facts(self.tool_name).keeps_output_tail

    def cut_summary(self) -> str:
        """ "kept lines 1001-3000 of 3000, 9.8KB of 13.6KB (by lines)" and any limit notes."""
        parts: list[str] = []
        t = self.truncation
        if t and t.get("truncated"):
            total = int(t.get("totalLines") or 0)
            kept = int(t.get("outputLines") or 0)
            if kept == 0:
                lines = f"kept 0 of {total} lines"
            elif self.keeps_tail:
                lines = f"kept lines {total - kept + 1}–{total} of {total}"
            else:
                lines = f"kept lines 1–{kept} of {total}"
            sizes = f"{format_size(int(t.get('outputBytes') or 0))} of {format_size(int(t.get('totalBytes') or 0))}"
            by = t.get("truncatedBy")
            parts.append(f"{lines}, {sizes}" + (f" (limit: {by})" if by else ""))
            if t.get("firstLineExceedsLimit"):
                parts.append("first line alone exceeds the limit")
            if t.get("lastLinePartial"):
                parts.append("last line partial")
        parts.extend(self.limit_notes)
        return "; ".join(parts) if parts else "output cut"


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"]
        images = sum(1 for b in content if isinstance(b, dict) and b.get("type") == "image")
        return "\n".join(texts) + ("\n" if texts and images else "") + "[image]\n" * images
    return ""


def _title(tool_name: str, args: Mapping[str, Any]) -> str:
    facts = tool_facts(tool_name)
    command = args.get(facts.command_argument or "command")
    pattern = args.get(facts.pattern_argument or "pattern")
    path = args.get(facts.path_argument or "path")
    if isinstance(command, str) and command:
        return command
    if isinstance(pattern, str) and pattern:
        return f"{pattern} in {path}" if isinstance(path, str) and path else pattern
    if isinstance(path, str) and path:
        return path
    return tool_name


def collect_truncated_outputs(messages: Iterable[Mapping[str, Any]]) -> list[TruncatedOutput]:
    calls: dict[str, tuple[str, Mapping[str, Any]]] = {}
    found: list[TruncatedOutput] = []
    for message in messages:
        role = message.get("role")
        if role == "assistant" and isinstance(message.get("content"), list):
            for block in message["content"]:
                if isinstance(block, dict) and block.get("type") == "toolCall":
                    args = block.get("arguments")
                    calls[str(block.get("id"))] = (
                        str(block.get("name")),
                        args if isinstance(args, dict) else {},
                    )
        elif role == "toolResult":
            item = _from_tool_result(message, calls)
            if item is not None:
                found.append(item)
        elif role == "bashExecution" and (message.get("truncated") or message.get("fullOutputPath")):
            found.append(
                TruncatedOutput(
                    tool_call_id="",
                    tool_name="!bash",
                    title=str(message.get("command", "")),
                    model_text=str(message.get("output", "")),
                    truncation=None,
                    full_output_path=message.get("fullOutputPath") or None,
                    limit_notes=("output cut to its last lines",) if message.get("truncated") else (),
                    is_error=bool(message.get("cancelled")) or message.get("exitCode") not in (0, None),
                    timestamp=message.get("timestamp") if isinstance(message.get("timestamp"), int) else None,
                )
            )
    return found


def _from_tool_result(
    message: Mapping[str, Any], calls: Mapping[str, tuple[str, Mapping[str, Any]]]
) -> TruncatedOutput | None:
    details = message.get("details")
    if not isinstance(details, dict):
        return None
    truncation = details.get("truncation")
    truncation = truncation if isinstance(truncation, dict) else None
    path = details.get("fullOutputPath")
    notes = tuple(text for flag, text in _LIMIT_FLAGS.items() if details.get(flag))
    if not ((truncation and truncation.get("truncated")) or path or notes):
        return None
    call_id = str(message.get("toolCallId", ""))
    name, args = calls.get(call_id, (str(message.get("toolName", "")), {}))
    timestamp = message.get("timestamp")
    return TruncatedOutput(
        tool_call_id=call_id,
        tool_name=str(message.get("toolName") or name),
        title=_title(name, args),
        model_text=_text_of(message.get("content")),
        truncation=truncation,
        full_output_path=path if isinstance(path, str) and path else None,
        limit_notes=notes,
        is_error=bool(message.get("isError")),
        timestamp=timestamp if isinstance(timestamp, int) else None,
    )


def outputs_from_logs(infos: Iterable[LogInfo], known_paths: set[str]) -> list[TruncatedOutput]:
    """Logs of the session folder that no listed message refers to (e.g. results on other branches).

    Their sidecar (written by the tools engine) names the tool, call and command; what the model
    saw is not known here.
    """
    found: list[TruncatedOutput] = []
    for info in infos:
        path = str(info.path)
        if path in known_paths:
            continue
        meta = info.metadata
        truncation = meta.get("truncation")
        found.append(
            TruncatedOutput(
                tool_call_id=info.tool_call_id or "",
                tool_name=str(meta.get("tool") or "bash"),
                title=info.command or info.path.name,
                model_text="(this result is not among the messages shown: see the full output)",
                truncation={**truncation, "truncated": True} if isinstance(truncation, dict) else None,
                full_output_path=path,
                limit_notes=("from the session's log folder",),
                is_error=bool(
                    meta.get("timedOut") or meta.get("aborted") or meta.get("exitCode") not in (0, None)
                ),
                timestamp=int(info.modified * 1000),
            )
        )
    return found
