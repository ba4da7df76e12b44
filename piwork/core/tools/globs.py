"""Glob patterns (``*``, ``?``, ``**``, ``[...]``, ``{a,b}``) compiled to regular expressions."""

from __future__ import annotations

import re


def glob_to_regex(pattern: str) -> str:
    """A regex source matching the whole text against ``pattern``; ``*`` and ``?`` never match ``/``."""
    out: list[str] = []
    i = 0
    depth = 0  # open {...} groups
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**", i):
            at_start = i == 0 or pattern[i - 1] == "/"
            j = i + 2
            if at_start and j < len(pattern) and pattern[j] == "/":
                out.append("(?:.*/)?")
                i = j + 1
                continue
            if at_start and j == len(pattern):
                out.append(".*")
                i = j
                continue
            out.append("[^/]*")
            i = j
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            end = pattern.find("]", i + 2 if pattern[i + 1 : i + 2] in ("!", "^") else i + 1)
            if end == -1:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1 : end]
                if body[:1] in ("!", "^"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = end
        elif c == "{":
            depth += 1
            out.append("(?:")
        elif c == "}" and depth:
            depth -= 1
            out.append(")")
        elif c == "," and depth:
            out.append("|")
        elif c == "\\" and i + 1 < len(pattern):
            i += 1
            out.append(re.escape(pattern[i]))
        else:
            out.append(re.escape(c))
        i += 1
    out.extend(")" * depth)
    return "".join(out)


def compile_glob(pattern: str, smart_case: bool = True) -> re.Pattern[str]:
    """Compile ``pattern``; with smart case, an all-lowercase pattern matches case-insensitively."""
    flags = re.IGNORECASE if smart_case and pattern == pattern.lower() else 0
    return re.compile(f"(?s:{glob_to_regex(pattern)})\\Z", flags)
