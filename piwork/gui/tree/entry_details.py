"""The full, readable text of one session entry for the tree's detail pane (pure Python)."""

from __future__ import annotations

import json
from typing import Any

from piwork.gui.logs.sgr import strip_ansi


def _blocks_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts: list[str] = []
    for block in content:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            parts.append(str(block.get("text", "")))
        elif kind == "thinking":
            parts.append(f"[thinking]\n{block.get('thinking', '')}")
        elif kind == "toolCall":
            args = json.dumps(block.get("arguments", {}), indent=2, ensure_ascii=False)
            parts.append(f"[tool call {block.get('name', '?')}]\n{args}")
        elif kind == "image":
            parts.append(f"[image {block.get('mimeType', '')}]")
    return "\n\n".join(parts)


def _files(details: Any) -> str:
    if not isinstance(details, dict):
        return ""
    lines: list[str] = []
    for key, title in (("readFiles", "Read files"), ("modifiedFiles", "Modified files")):
        files = details.get(key)
        if isinstance(files, list) and files:
            lines.append(f"{title}: " + ", ".join(str(f) for f in files))
    return "\n".join(lines)


STOP_WORDS = {
    "stop": "finished",
    "toolUse": "asked for tools",
    "length": "cut at the output limit",
    "error": "failed",
    "aborted": "stopped",
}


def entry_detail_text(entry: Any) -> str:
    """Header line(s) and the entry's whole text (terminal escapes dropped): message content, summary..."""
    return strip_ansi(_detail_text(entry))


def _detail_text(entry: Any) -> str:
    if not isinstance(entry, dict):
        return "(this line could not be read)"
    kind = entry.get("type")
    head = f"{kind} · {entry.get('id')} · {entry.get('timestamp')}"
    if kind == "message" and isinstance(entry.get("message"), dict):
        message = entry["message"]
        role = message.get("role")
        if role == "bashExecution":
            body = f"$ {message.get('command', '')}\n{message.get('output', '')}"
        else:
            body = _blocks_text(message.get("content"))
        extra = []
        if role == "assistant":
            ending = STOP_WORDS.get(str(message.get("stopReason")), str(message.get("stopReason")))
            extra.append(f"{message.get('provider', '')}/{message.get('model', '')} · {ending}")
            if message.get("errorMessage"):
                extra.append(f"Error: {message['errorMessage']}")
        if role == "toolResult":
            extra.append(f"{message.get('toolName', '')}{' (error)' if message.get('isError') else ''}")
        return "\n".join([f"{head} · {role}", *extra, "", body])
    if kind == "compaction":
        tokens = entry.get("tokensBefore")
        info = f"Compacted {tokens} tokens; history kept from {entry.get('firstKeptEntryId')}"
        return "\n".join(
            x
            for x in (head, info, _files(entry.get("details")), "", str(entry.get("summary", "")))
            if x is not None
        )
    if kind == "branch_summary":
        info = f"Summary of the branch that ended at {entry.get('fromId')}"
        summary = entry.get("summary") or "(empty summary: nothing reaches the model)"
        return "\n".join((head, info, _files(entry.get("details")), "", str(summary)))
    if kind == "custom_message":
        return "\n".join((f"{head} · {entry.get('customType')}", "", _blocks_text(entry.get("content"))))
    fields = {k: v for k, v in entry.items() if k not in ("type", "id", "parentId", "timestamp")}
    return "\n".join((head, "", json.dumps(fields, indent=2, ensure_ascii=False)))
