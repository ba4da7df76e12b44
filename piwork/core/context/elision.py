"""Which tool results the governor may take out of the working set, why, and what stands in their place.

Only two kinds of result are ever candidates: raw reads (the tools that declare their results elidable —
``read``, ``grep``, ``find``, ``ls`` — and read-like ``bash`` commands) and raw logs (test and build runs, and the registered verifier commands). A candidate
is elided only with a reason from :data:`REASONS`; the stub that replaces its content names the tool and
argument, the original size, the reason and how to get the content back.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from piwork.core.context.records import ReasonCode
from piwork.core.messages import Message
from piwork.core.tools.registry import tool_facts

CandidateKind = Literal["read", "log"]
ARGUMENT_CHARS = 200

_READ_PROGRAMS = frozenset(
    {"cat", "head", "tail", "less", "more", "rg", "grep", "find", "ls", "tree", "nl", "wc"}
)
_READ_PAIRS = frozenset({("sed", "-n"), ("git", "show"), ("git", "diff"), ("git", "log"), ("git", "status")})
_LOG_PROGRAMS = frozenset(
    {
        "pytest",
        "tox",
        "nox",
        "make",
        "mvn",
        "gradle",
        "jest",
        "vitest",
        "ruff",
        "mypy",
        "pyright",
        "tsc",
        "eslint",
    }
)
_LOG_PAIRS = frozenset(
    {
        ("npm", "test"),
        ("pnpm", "test"),
        ("yarn", "test"),
        ("bun", "test"),
        ("go", "test"),
        ("go", "build"),
        ("go", "vet"),
        ("cargo", "test"),
        ("cargo", "build"),
        ("cargo", "check"),
        ("cargo", "clippy"),
    }
)
_RUN_SCRIPTS = frozenset({"test", "build", "lint", "typecheck", "check"})  # npm|pnpm|yarn run <script>
_PACKAGE_RUNNERS = frozenset({"npm", "pnpm", "yarn", "bun"})
_PYTHON_MODULES = frozenset({"pytest", "mypy", "ruff", "unittest", "tox", "pyright"})
_SETUP_PROGRAMS = frozenset({"cd", "pushd", "popd", "export", "source", ".", "set", "unset"})
_WRAPPERS = frozenset({"env", "time", "nice", "nohup", "command", "exec", "xvfb-run"})
_RUNNER_PREFIXES = frozenset(
    {("uv", "run"), ("poetry", "run"), ("pipenv", "run"), ("pdm", "run"), ("hatch", "run")}
)
_OPERATORS = frozenset({"&&", "||", ";", "|", "&", "|&", ";;"})

REASONS: dict[ReasonCode, str] = {
    "superseded": "the same path was read again or changed later",
    "repeated": "a later result has identical content",
    "earlier-phase": "it belongs to an earlier task or phase",
    "resolved-log": "a later run of the same command succeeded",
    "aged": "the context is under pressure and this result is older than the recent turns",
}
STUB_MARK = "[piwork elided this tool result from the working set"


def _tokens(command: str) -> list[str]:
    lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|")
    lexer.whitespace_split = True
    try:
        return list(lexer)
    except ValueError:
        return command.split()


def _strip_wrappers(words: list[str]) -> list[str]:
    """The words of the program a segment really runs: without ``VAR=value`` assignments, ``env``,
    ``time``, ``timeout 60``, ``uv run``/``poetry run``, ``npx``, ``git``'s global options and
    ``python -m``."""
    while words:
        head = os.path.basename(words[0])
        if ("=" in words[0] and not words[0].startswith("=")) or head in _WRAPPERS:
            words = words[1:]
        elif head == "timeout":
            words = words[1:]
            while words and words[0].startswith("-"):
                words = words[1:]
            words = words[1:]  # the duration
        elif tuple(words[:2]) in _RUNNER_PREFIXES:
            words = words[2:]
        elif head in ("npx", "bunx", "pnpx"):
            words = words[1:]
        elif head == "git" and len(words) > 1 and words[1].startswith("-"):
            rest = words[1:]
            while rest and rest[0].startswith("-"):
                takes_value = rest[0] in ("-C", "-c", "--git-dir", "--work-tree")
                rest = rest[2:] if takes_value else rest[1:]
            words = ["git", *rest]
        elif head.startswith("python") and len(words) > 2 and words[1] == "-m":
            words = words[2:]
        else:
            break
    return words


def program_words(command: str) -> list[str]:
    """The first words of the program a shell command runs, skipping set-up segments (``cd x &&``,
    ``export``) and wrappers; pipes and ``|| true`` after it do not change what it is."""
    segment: list[str] = []
    for token in [*_tokens(command), ";"]:
        if token in _OPERATORS:
            words = _strip_wrappers(segment)
            if words and os.path.basename(words[0]) not in _SETUP_PROGRAMS:
                return words[:4]
            segment = []
        else:
            segment.append(token)
    return []


_PLAIN = re.compile(r"[^\s;&|'\"\\$`()<>]+(?:\s+[^\s;&|'\"\\$`()<>]+)*")


@functools.lru_cache(maxsize=4096)
def command_kind(command: str) -> CandidateKind | None:
    """``read`` for a read-like shell command, ``log`` for a test, build or lint run, None otherwise
    (remembered per command: a session runs the same ones again and again)."""
    stripped = command.strip()
    # a plain command (no quoting, no operators) needs no shell lexer
    words = _strip_wrappers(stripped.split())[:4] if _PLAIN.fullmatch(stripped) else program_words(command)
    if words and os.path.basename(words[0]) in _SETUP_PROGRAMS:
        words = []
    if not words:
        return None
    head = os.path.basename(words[0])
    pair = (head, words[1] if len(words) > 1 else "")
    if head in _READ_PROGRAMS or pair in _READ_PAIRS:
        return "read"
    if head in _LOG_PROGRAMS or head in _PYTHON_MODULES or pair in _LOG_PAIRS:
        return "log"
    if head in _PACKAGE_RUNNERS and pair[1] == "run" and len(words) > 2 and words[2] in _RUN_SCRIPTS:
        return "log"
    return None


_FAILURE_LINE = re.compile(
    r"^(?:FAILED\b|FAIL\b|ERROR\b|--- FAIL\b|Traceback \(most recent call last\)"
    r"|(?:[A-Za-z_][\w.]*)?Error: |error(?:\[E\d+\])?: |npm ERR!|make(?:\[\d+\])?: \*\*\*)"
    r"|^\S+?:\d+(?::\d+)?: (?:fatal )?error\b"  # a compiler's file:line[:col]: error
    r"|^\S+?\(\d+,\d+\): error TS\d+"  # tsc
    r"|\berror TS\d+:"
    r"|^Found \d+ errors?\b"  # mypy, ruff
    r"|=+ .*\b\d+ (?:failed|errors?)\b.* =+$"  # pytest's summary line
    r"|\b(?:exit(?:ed with)? (?:code|status)|Exit code:?|returned non-zero exit status) [1-9]\d*\b",
    re.MULTILINE,
)


def failure_seen(text: str) -> bool:
    """Whether a run's output reports a failure (a test, a compiler error, a traceback, a non-zero exit
    the command printed), even when a pipe or ``|| true`` made the shell exit 0."""
    return _FAILURE_LINE.search(text) is not None


def result_failed(message: Message, kind: CandidateKind | None) -> bool:
    """A failed result: ``isError``, or a test/build/lint run whose output reports a failure."""
    if message.get("isError") is True:
        return True
    return kind == "log" and failure_seen(result_text(message))


def result_text(message: Message) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "\n".join(
        block["text"]
        for block in content
        if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str)
    )


def command_of(arguments: Any, key: str = "command") -> str:
    command = arguments.get(key) if isinstance(arguments, dict) else None
    return command.strip() if isinstance(command, str) else ""


def call_command(tool: str, arguments: Any) -> str:
    """The shell command a call of ``tool`` runs, stripped; empty for tools that run none."""
    key = tool_facts(tool).command_argument
    return command_of(arguments, key) if key is not None else ""


def classify(tool: str, arguments: Any, verifiers: Sequence[str] = ()) -> CandidateKind | None:
    """``read``/``log`` for a candidate result of this call, None for results that are always kept."""
    if tool_facts(tool).elidable:
        return "read"
    command = call_command(tool, arguments)
    if not command:
        return None
    if command in {v.strip() for v in verifiers}:
        return "log"
    return command_kind(command)


def main_argument(tool: str, arguments: Any) -> str:
    """The path or command a stub and the log name, at most 200 characters."""
    args = arguments if isinstance(arguments, dict) else {}
    facts = tool_facts(tool)
    path = args.get(facts.path_argument or "path")
    if facts.command_argument is not None:
        text = command_of(args, facts.command_argument)
    elif facts.pattern_argument is not None:
        pattern = str(args.get(facts.pattern_argument, ""))
        text = f"{pattern} in {path}" if isinstance(path, str) and path else pattern
    else:
        text = path if isinstance(path, str) else ""
        if facts.reads_file:
            text += "".join(
                f" {key}={args[key]}" for key in ("offset", "limit") if isinstance(args.get(key), int)
            )
    text = " ".join(text.split())
    return text if len(text) <= ARGUMENT_CHARS else text[: ARGUMENT_CHARS - 1] + "…"


def path_key(tool: str, arguments: Any) -> str | None:
    """The normalised path a call of ``tool`` works on (None when it names none)."""
    key = tool_facts(tool).path_argument or "path"
    path = arguments.get(key) if isinstance(arguments, dict) else None
    return os.path.normpath(path) if isinstance(path, str) and path else None


def read_range(arguments: Any) -> tuple[int | None, int | None]:
    """A ``read`` call's (offset, limit); (None, None) reads the file from its start."""
    args = arguments if isinstance(arguments, dict) else {}
    offset, limit = args.get("offset"), args.get("limit")
    return (
        offset if isinstance(offset, int) and not isinstance(offset, bool) and offset > 1 else None,
        limit if isinstance(limit, int) and not isinstance(limit, bool) else None,
    )


# one encoder for every shape: json.dumps with options builds a new encoder on each call
_SHAPE_JSON = json.JSONEncoder(sort_keys=True, ensure_ascii=False, default=str).encode


def call_shape(tool: str, arguments: Any) -> str:
    """A tool call's name and arguments, to recognise the same call made again."""
    return tool + "\0" + _SHAPE_JSON(arguments)


def content_digest(message: Message) -> str:
    """SHA-256 of a result's content blocks (text and images), to recognise repeated output."""
    content = message.get("content")
    if isinstance(content, list) and all(
        isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str) and len(b) == 2
        for b in content
    ):  # text only (nearly every result): the texts themselves, without encoding them as JSON first
        digest = hashlib.sha256(b"text\0")
        for block in content:
            digest.update(block["text"].encode("utf-8", "surrogatepass"))
            digest.update(b"\0\1")
        return digest.hexdigest()
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
    if tool_facts(tool).reads_file:
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
