"""Which tool results the governor may take out of the working set, why, and what stands in their place.

Only two kinds of result are ever candidates: raw reads (``read``, ``grep``, ``find``, ``ls`` and read-like
``bash`` commands) and raw logs (test and build runs, and the registered verifier commands). A candidate
is elided only with a reason from :data:`REASONS`; the stub that replaces its content names the tool and
argument, the original size, the reason and how to get the content back.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from piwork.core.context.records import ReasonCode
from piwork.core.messages import Message

CandidateKind = Literal["read", "log"]
ARGUMENT_CHARS = 200

READ_TOOLS = frozenset({"read", "grep", "find", "ls"})
WRITE_TOOLS = frozenset({"edit", "write"})
_READ_PROGRAMS = frozenset({"cat", "head", "tail", "less", "rg", "grep", "find", "ls", "tree"})
_READ_PAIRS = frozenset({("sed", "-n"), ("git", "show"), ("git", "diff"), ("git", "log")})
_LOG_PROGRAMS = frozenset({"pytest", "tox", "make", "mvn", "gradle", "jest", "vitest"})
_LOG_PAIRS = frozenset(
    {
        ("npm", "test"),
        ("pnpm", "test"),
        ("yarn", "test"),
        ("go", "test"),
        ("cargo", "test"),
        ("cargo", "build"),
    }
)
_LOG_TRIPLES = frozenset({("python", "-m", "pytest"), ("python3", "-m", "pytest"), ("npm", "run", "build")})

REASONS: dict[ReasonCode, str] = {
    "superseded": "the same path was read again or changed later",
    "repeated": "a later result has identical content",
    "earlier-phase": "it belongs to an earlier task or phase",
    "resolved-log": "a later run of the same command succeeded",
    "aged": "the context is under pressure and this result is older than the recent turns",
}
STUB_MARK = "[piwork elided this tool result from the working set"


def _words(command: str) -> list[str]:
    try:
        return shlex.split(command)[:3]
    except ValueError:
        return command.split()[:3]


def command_of(arguments: Any) -> str:
    command = arguments.get("command") if isinstance(arguments, dict) else None
    return command.strip() if isinstance(command, str) else ""


def classify(tool: str, arguments: Any, verifiers: Sequence[str] = ()) -> CandidateKind | None:
    """``read``/``log`` for a candidate result of this call, None for results that are always kept."""
    if tool in READ_TOOLS:
        return "read"
    if tool != "bash":
        return None
    command = command_of(arguments)
    if not command:
        return None
    if command in {v.strip() for v in verifiers}:
        return "log"
    words = _words(command)
    head = os.path.basename(words[0]) if words else ""
    if head in _READ_PROGRAMS or tuple(words[:2]) in _READ_PAIRS:
        return "read"
    if head in _LOG_PROGRAMS or tuple(words[:2]) in _LOG_PAIRS or tuple(words[:3]) in _LOG_TRIPLES:
        return "log"
    return None


def main_argument(tool: str, arguments: Any) -> str:
    """The path or command a stub and the log name, at most 200 characters."""
    args = arguments if isinstance(arguments, dict) else {}
    if tool == "bash":
        text = command_of(args)
    elif tool in ("grep", "find"):
        pattern = str(args.get("pattern", ""))
        path = args.get("path")
        text = f"{pattern} in {path}" if isinstance(path, str) and path else pattern
    else:
        path = args.get("path")
        text = path if isinstance(path, str) else ""
    text = " ".join(text.split())
    return text if len(text) <= ARGUMENT_CHARS else text[: ARGUMENT_CHARS - 1] + "…"


def path_key(arguments: Any) -> str | None:
    path = arguments.get("path") if isinstance(arguments, dict) else None
    return os.path.normpath(path) if isinstance(path, str) and path else None


def call_shape(tool: str, arguments: Any) -> str:
    """A tool call's name and arguments, to recognise the same call made again."""
    return tool + "\0" + json.dumps(arguments, sort_keys=True, ensure_ascii=False, default=str)


def content_digest(message: Message) -> str:
    """SHA-256 of a result's content blocks (text and images), to recognise repeated output."""
    content = message.get("content")
    data = json.dumps(content, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(data.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True)
class OriginalSize:
    lines: int
    bytes: int
    tokens: int
    images: int


def original_size(message: Message, tokens: int) -> OriginalSize:
    content = message.get("content")
    texts: list[str] = []
    images = 0
    if isinstance(content, str):
        texts.append(content)
    elif isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"])
            elif isinstance(block, dict) and block.get("type") == "image":
                images += 1
    text = "\n".join(texts)
    lines = text.count("\n") + 1 if text else 0
    return OriginalSize(lines, len(text.encode("utf-8", "surrogatepass")), tokens, images)


def stub_text(tool: str, argument: str, kind: CandidateKind, size: OriginalSize, reason: ReasonCode) -> str:
    """What the model reads instead of the elided content (piwork's own words)."""
    shown = f"{tool} {argument}".strip()
    images = f", {size.images} image{'s' if size.images != 1 else ''} dropped" if size.images else ""
    if tool == "read":
        back = "read the file again (it may have changed since)"
    elif kind == "log":
        back = "run the command again"
    else:
        back = "run the same call again"
    return (
        f"{STUB_MARK} to keep the context small: {shown}]\n"
        f"Original output: {size.lines} lines, {size.bytes} bytes, ≈{size.tokens} tokens{images}.\n"
        f"Reason: {reason} ({REASONS[reason]}).\n"
        f"To see it again, {back}. The session file keeps the full original."
    )


def elided_copy(message: Message, text: str) -> Message:
    """The same tool result (id, tool name, error flag, details) with one text block as its content."""
    return {**message, "content": [{"type": "text", "text": text}]}
