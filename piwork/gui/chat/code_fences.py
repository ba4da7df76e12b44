"""Fenced code blocks found in a message's Markdown source, and a person's message prepared as Markdown.

The code a copy button gives is taken from the source, not from the rendered document: Qt's Markdown
importer turns tabs into spaces (a Makefile copied back would break), and it runs two adjacent blocks of one
language together. No Qt here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_OPENING = re.compile(r"^(?P<indent> *)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")


@dataclass(frozen=True, slots=True)
class FencedCode:
    language: str  # the first word of the info string ("" when none)
    code: str  # the lines between the fences, as written
    lines: int  # how many lines the code has


def _closes(line: str, fence: str) -> bool:
    stripped = line.strip()
    return bool(stripped) and set(stripped) == {fence[0]} and len(stripped) >= len(fence)


TEXT, FENCE, CODE = "text", "fence", "code"  # what a line of the source is


def _scan(text: str) -> tuple[list[str], list[str], list[FencedCode]]:
    """The lines of ``text``, what each is (text, a fence, code), and the fenced blocks in order."""
    lines = text.split("\n")
    roles: list[str] = []
    blocks: list[FencedCode] = []
    fence: str | None = None
    indent = 0
    language = ""
    body: list[str] = []
    for line in lines:
        if fence is None:
            opening = _OPENING.match(line) if ("`" in line or "~" in line) else None
            if opening and not (opening["fence"][0] == "`" and "`" in opening["info"]):
                fence, indent = opening["fence"], len(opening["indent"])
                info = opening["info"].strip()
                language, body = (info.split()[0] if info else ""), []
                roles.append(FENCE)
            else:
                roles.append(TEXT)
        elif fence[0] in line and _closes(line, fence):
            blocks.append(FencedCode(language, "\n".join(body), len(body)))
            fence = None
            roles.append(FENCE)
        else:
            lead = len(line) - len(line.lstrip(" "))
            body.append(line[min(lead, indent) :])  # CommonMark drops up to the fence's indent
            roles.append(CODE)
    if fence is not None:  # an unclosed fence runs to the end of the text
        blocks.append(FencedCode(language, "\n".join(body), len(body)))
    return lines, roles, blocks


def fenced_code(text: str) -> list[FencedCode]:
    """The fenced code blocks of ``text``, in order (a ``` or ~~~ line opens one, a like fence closes it)."""
    if "```" not in text and "~~~" not in text:
        return []
    return _scan(text)[2]


def person_markdown(text: str) -> str:
    """A person's message as Markdown that keeps its line breaks: what someone types on separate lines
    stays on separate lines (Markdown would join them into one paragraph); code blocks stay as typed.
    Two trailing spaces make the break: at the end of a block (a list item, a heading) they are ignored."""
    if "\n" not in text:
        return text
    lines, roles, _blocks = _scan(text)
    out = []
    for n, line in enumerate(lines):
        joined = (
            n + 1 < len(lines)
            and roles[n] == TEXT
            and roles[n + 1] == TEXT
            and bool(line.strip())
            and bool(lines[n + 1].strip())
        )
        out.append(line.rstrip() + "  " if joined else line)
    return "\n".join(out)
