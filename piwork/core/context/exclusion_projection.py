"""What an excluded part becomes in the request: a short marker in place of its content.

A bundle layer's ``<context_layer …>…</context_layer>`` is replaced, in a copy of the bundle message
made per request, by the same wrapper holding a marker that says what was left out and how to bring it
back; a context file's content in the system prompt's ``<project_context>`` is replaced the same way.
The transcript and the session file keep the original.

Where a bundle part starts and ends is read from the bundle entry's ``details.parts`` (offsets recorded
when the bundle was assembled); a bundle recorded without them is split at its part headers.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from piwork.core.context.entries import BUNDLE_CUSTOM_TYPE
from piwork.core.context.exclusions import ExcludedPart, Exclusions
from piwork.core.messages import Message
from piwork.core.resources.context_files import ContextFile
from piwork.core.resources.system_prompt import escape_xml
from piwork.core.truncate import format_size

_CLOSE = "\n</context_layer>"
_HEADER = re.compile(r'<context_layer kind="([A-Za-z]+)" path="([^"\n]*)">\n')
_WHAT = {
    "profile": "the project profile",
    "pack": "the task pack",
    "index": "the context index summary",
    "snapshot": "the project snapshot",
    "memory": "the memory summary",
    "required": "this required file",
    "contextFile": "this context file",
}


def _size(text: str) -> str:
    lines = len(text.splitlines())
    return f"{lines} line{'s' if lines != 1 else ''}, {format_size(len(text.encode('utf-8', 'replace')))}"


def marker_text(part: ExcludedPart, removed: str) -> str:
    """The marker for ``part`` whose content ``removed`` was left out (piwork wording)."""
    what = _WHAT.get(part.kind, "this part")
    text = f"[piwork: the user excluded {what} from this task's context ({_size(removed)} left out)."
    if part.kind not in ("pack", "index"):
        text += " The file itself is unchanged: read it if the task needs it."
    return text + f" The user can bring it back with /context include {part.name}]"


# ----------------------------------------------------------------------------- the bundle


def _recorded_spans(text: str, details: Any) -> list[tuple[str, str, int, int]] | None:
    """(kind, escaped path, start, end) of each part from ``details.parts``, if they fit the text."""
    raw = details.get("parts") if isinstance(details, Mapping) else None
    if not isinstance(raw, list):
        return None
    spans = []
    for item in raw:
        if not isinstance(item, Mapping):
            return None
        kind, path, start, end = item.get("kind"), item.get("path"), item.get("start"), item.get("end")
        if not (isinstance(kind, str) and isinstance(path, str) and isinstance(start, int)):
            return None
        if not isinstance(end, int) or not 0 <= start < end <= len(text):
            return None
        escaped = escape_xml(path)
        if not text.startswith(f'<context_layer kind="{kind}" path="{escaped}">\n', start):
            return None
        if not text[:end].endswith(_CLOSE):
            return None
        spans.append((kind, escaped, start, end))
    return spans


def _scanned_spans(text: str) -> list[tuple[str, str, int, int]]:
    """Parts found by their headers: each runs to the last closing tag before the next header."""
    heads = [m for m in _HEADER.finditer(text) if m.start() == 0 or text[: m.start()].endswith("\n\n")]
    spans = []
    for i, match in enumerate(heads):
        limit = heads[i + 1].start() if i + 1 < len(heads) else len(text)
        end = text.rfind(_CLOSE, match.end(), limit)
        if end < 0:
            continue
        spans.append((match.group(1), match.group(2), match.start(), end + len(_CLOSE)))
    return spans


def bundle_without(text: str, details: Any, parts: Sequence[ExcludedPart]) -> str:
    """The bundle text with each excluded part's content replaced by its marker."""
    spans = _recorded_spans(text, details)
    if spans is None:
        spans = _scanned_spans(text)
    wanted = {(p.kind, escape_xml(p.shown)): p for p in parts}
    out = text
    for kind, escaped, start, end in reversed(spans):
        part = wanted.get((kind, escaped))
        if part is None:
            continue
        header = f'<context_layer kind="{kind}" path="{escaped}">\n'
        body = text[start + len(header) : end - len(_CLOSE)]
        marked = f'<context_layer kind="{kind}" path="{escaped}" excluded="true">\n{marker_text(part, body)}{_CLOSE}'
        out = out[:start] + marked + out[end:]
    return out


def is_bundle(message: Message) -> bool:
    return message.get("role") == "custom" and message.get("customType") == BUNDLE_CUSTOM_TYPE


def bundle_message_without(message: Message, parts: Sequence[ExcludedPart]) -> Message:
    """A copy of a bundle message without ``parts`` (the message itself when none of them is in it)."""
    content = message.get("content")
    details = message.get("details")
    if isinstance(content, str):
        text = bundle_without(content, details, parts)
        return message if text == content else {**message, "content": text}
    if not isinstance(content, list):
        return message
    blocks: list[Any] = []
    changed = False
    for block in content:
        if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
            text = bundle_without(block["text"], details, parts)
            if text != block["text"]:
                block = {**block, "text": text}
                changed = True
        blocks.append(block)
    return {**message, "content": blocks} if changed else message


class RequestProjection:
    """Applies a task's exclusions to the messages of a request, returning the very same copy of a bundle
    message for as long as neither it nor the exclusions change (so the request prefix stays stable for
    the governor's scan and the provider's cache)."""

    def __init__(self) -> None:
        self._cache: dict[int, tuple[Message, tuple[Any, ...], Message]] = {}

    def messages(self, messages: list[Message], exclusions: Exclusions) -> list[Message]:
        parts = exclusions.bundle_parts
        if not parts:
            return messages
        key = tuple(p.key for p in parts)
        out: list[Message] | None = None
        cache: dict[int, tuple[Message, tuple[Any, ...], Message]] = {}
        for i, message in enumerate(messages):
            if not is_bundle(message):
                continue
            cached = self._cache.get(id(message))
            if cached is not None and cached[0] is message and cached[1] == key:
                copy = cached[2]
            else:
                copy = bundle_message_without(message, parts)
            cache[id(message)] = (message, key, copy)
            if copy is not message:
                if out is None:
                    out = list(messages)
                out[i] = copy
        self._cache = cache
        return out if out is not None else messages


# ----------------------------------------------------------------------------- layer 1


def context_files_for_task(files: Sequence[ContextFile], exclusions: Exclusions) -> list[ContextFile]:
    """The context files of the system prompt, each excluded one reduced to its marker."""
    paths = exclusions.context_file_paths
    if not paths:
        return list(files)
    by_path = {p.path: p for p in exclusions.parts if p.layer == 1}
    return [
        replace(f, content=marker_text(by_path[f.path], f.content)) if f.path in paths else f for f in files
    ]
