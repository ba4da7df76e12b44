"""minimatch-style glob matching (the rules Pi applies to settings resource filters).

``*`` and ``?`` stay within one path segment, ``**`` spans segments, ``[...]`` classes and ``{a,b}``
alternatives are supported, and wildcards never match a segment starting with ``.``.
"""

from __future__ import annotations

import re
from functools import lru_cache

_SEGMENT = r"(?!\.)[^/]+"


def _expand_braces(pattern: str) -> list[str]:
    match = re.search(r"\{([^{}]*,[^{}]*)\}", pattern)
    if not match:
        return [pattern]
    head, tail = pattern[: match.start()], pattern[match.end() :]
    out: list[str] = []
    for option in match.group(1).split(","):
        out.extend(_expand_braces(head + option + tail))
    return out


def _segment_regex(segment: str) -> str:
    out: list[str] = []
    i = 0
    wild = False
    while i < len(segment):
        char = segment[i]
        if char == "*":
            out.append("[^/]*")
            wild = True
        elif char == "?":
            out.append("[^/]")
            wild = True
        elif char == "[":
            end = segment.find("]", i + 2)
            if end == -1:
                out.append(re.escape(char))
            else:
                body = segment[i + 1 : end]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                wild = True
                i = end
        elif char == "\\" and i + 1 < len(segment):
            i += 1
            out.append(re.escape(segment[i]))
        else:
            out.append(re.escape(char))
        i += 1
    text = "".join(out)
    if wild and not segment.startswith("."):
        text = r"(?!\.)" + text
    if segment == "*":
        text = r"(?!\.)[^/]+"
    return text


@lru_cache(maxsize=1024)
def _compile(pattern: str) -> re.Pattern[str]:
    alternatives = []
    for expanded in _expand_braces(pattern):
        parts = expanded.split("/")
        pieces: list[str] = []
        for index, part in enumerate(parts):
            last = index == len(parts) - 1
            if part == "**":
                if last and index > 0:
                    pieces.append(f"(?:/{_SEGMENT})*")
                elif last:
                    pieces.append(f"(?:{_SEGMENT}(?:/{_SEGMENT})*)?")
                else:
                    pieces.append(f"(?:{_SEGMENT}/)*")
                continue
            pieces.append(_segment_regex(part) + ("" if last else "/"))
        joined = "".join(pieces).replace("/(?:/", "(?:/")
        alternatives.append(joined)
    return re.compile("^(?:" + "|".join(alternatives) + ")$")


def glob_match(path: str, pattern: str) -> bool:
    if not pattern:
        return path == ""
    return _compile(pattern).match(path) is not None
