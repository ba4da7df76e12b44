"""Lenient parsing of streamed tool-call arguments (strict, then repaired, then partial, then ``{}``).

Models sometimes emit raw control characters or invalid backslash escapes inside JSON strings, and while
a call streams its arguments are an unfinished prefix. ``parse_tool_arguments`` always returns a dict.
"""

from __future__ import annotations

import json
import re
from typing import Any

_VALID_ESCAPES = frozenset('"\\/bfnrtu')
_HEX4 = re.compile(r"[0-9a-fA-F]{4}")
_CONTROL_ESCAPES = {"\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def repair_json(text: str) -> str:
    """Escape raw control characters inside strings and double backslashes before invalid escapes."""
    out: list[str] = []
    in_string = False
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if not in_string:
            out.append(ch)
            in_string = ch == '"'
        elif ch == '"':
            out.append(ch)
            in_string = False
        elif ch == "\\":
            nxt = text[i + 1] if i + 1 < n else ""
            if nxt == "u" and _HEX4.fullmatch(text, i + 2, i + 6):
                out.append(text[i : i + 6])
                i += 6
                continue
            if nxt and nxt != "u" and nxt in _VALID_ESCAPES:
                out.append(text[i : i + 2])
                i += 2
                continue
            out.append("\\\\")
        elif ord(ch) < 0x20:
            out.append(_CONTROL_ESCAPES.get(ch, f"\\u{ord(ch):04x}"))
        else:
            out.append(ch)
        i += 1
    return "".join(out)


class _Incomplete(Exception):
    pass


class _PartialParser:
    """Recursive-descent JSON parser that stops gracefully at the end of an unfinished document."""

    _NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def parse(self) -> Any:
        value = self._value()
        return value

    def _ws(self) -> None:
        text, pos = self.text, self.pos
        while pos < len(text) and text[pos] in " \t\r\n":
            pos += 1
        self.pos = pos

    def _value(self) -> Any:
        self._ws()
        if self.pos >= len(self.text):
            raise _Incomplete
        ch = self.text[self.pos]
        if ch == "{":
            return self._object()
        if ch == "[":
            return self._array()
        if ch == '"':
            return self._string()
        for literal, value in (("true", True), ("false", False), ("null", None)):
            if self.text.startswith(literal, self.pos):
                self.pos += len(literal)
                return value
            if literal.startswith(self.text[self.pos :]):
                raise _Incomplete
        return self._number()

    def _number(self) -> Any:
        match = self._NUMBER.match(self.text, self.pos)
        rest = self.text[self.pos :]
        if match is None:
            if rest in ("-",):
                raise _Incomplete
            raise ValueError("not JSON")
        self.pos = match.end()
        trailing = self.text[self.pos :]
        if trailing and not trailing.strip(".eE+-0123456789"):  # an unfinished "1." or "2e" at the end
            self.pos = len(self.text)
        return json.loads(match.group())

    def _string(self) -> str:
        # Returns the (possibly unfinished) string; an unfinished one ends the document.
        text = self.text
        i = self.pos + 1
        while i < len(text):
            ch = text[i]
            if ch == "\\":
                i += 2
                continue
            if ch == '"':
                value: str = json.loads(text[self.pos : i + 1])
                self.pos = i + 1
                return value
            i += 1
        body = text[self.pos + 1 :]
        cut = _safe_escape_prefix(body)
        self.pos = len(text)
        try:
            partial: str = json.loads('"' + cut + '"')
        except ValueError:
            partial = cut
        raise _PartialString(partial)

    def _object(self) -> dict[str, Any]:
        result: dict[str, Any] = {}
        self.pos += 1
        while True:
            self._ws()
            if self.pos >= len(self.text):
                return result
            ch = self.text[self.pos]
            if ch == "}":
                self.pos += 1
                return result
            if ch == ",":
                self.pos += 1
                continue
            if ch != '"':
                raise ValueError("not JSON")
            try:
                key = self._string()
            except _PartialString:
                return result
            self._ws()
            if self.pos >= len(self.text):
                return result
            if self.text[self.pos] != ":":
                raise ValueError("not JSON")
            self.pos += 1
            try:
                result[key] = self._value()
            except _PartialString as partial:
                result[key] = partial.value
                return result
            except _Incomplete:
                return result

    def _array(self) -> list[Any]:
        result: list[Any] = []
        self.pos += 1
        while True:
            self._ws()
            if self.pos >= len(self.text):
                return result
            ch = self.text[self.pos]
            if ch == "]":
                self.pos += 1
                return result
            if ch == ",":
                self.pos += 1
                continue
            try:
                result.append(self._value())
            except _PartialString as partial:
                result.append(partial.value)
                return result
            except _Incomplete:
                return result


class _PartialString(_Incomplete):
    def __init__(self, value: str) -> None:
        super().__init__()
        self.value = value


def _safe_escape_prefix(body: str) -> str:
    """Drop a dangling, unfinished escape sequence at the end of an unterminated string."""
    backslash = body.rfind("\\")
    if backslash < 0:
        return body
    prefix = body[:backslash]
    tail = body[backslash + 1 :]
    if (len(prefix) - len(prefix.rstrip("\\"))) % 2 == 1:  # that backslash is itself escaped
        return body
    if not tail:
        return body[:backslash]
    if tail[0] == "u" and len(tail) < 5:
        return body[:backslash]
    return body


def parse_partial_json(text: str) -> Any:
    """Parse the longest meaningful prefix of unfinished JSON (open strings/arrays/objects are closed)."""
    try:
        return _PartialParser(text).parse()
    except _PartialString as partial:
        return partial.value
    except _Incomplete:
        return None


def parse_tool_arguments(text: str) -> dict[str, Any]:
    """Tool-call arguments from streamed JSON text; never raises, always a dict."""
    if not text or not text.strip():
        return {}
    for candidate in _candidates(text):
        if isinstance(candidate, dict):
            return candidate
    return {}


def _candidates(text: str) -> Any:
    try:
        yield json.loads(text)
        return
    except ValueError:
        pass
    repaired = repair_json(text)
    if repaired != text:
        try:
            yield json.loads(repaired)
            return
        except ValueError:
            pass
    for source in (text, repaired):
        try:
            yield parse_partial_json(source)
            return
        except (ValueError, RecursionError):
            continue


class StreamingArguments:
    """The raw JSON of a tool call as it streams, with a live parse for display.

    Re-parsing the whole prefix on every fragment is quadratic, and a large ``write`` call streams
    hundreds of kilobytes in thousands of fragments. Small prefixes are re-parsed on every fragment;
    beyond ``ALWAYS_BELOW`` characters only when the text has grown by a quarter since the last parse,
    which keeps the total work linear. ``final()`` always parses everything.
    """

    ALWAYS_BELOW = 4096
    GROWTH = 1.25

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._size = 0
        self._parsed_size = 0
        self.value: dict[str, Any] = {}

    def append(self, fragment: str) -> bool:
        """Add a fragment; True when ``value`` was refreshed."""
        if not fragment:
            return False
        self._parts.append(fragment)
        self._size += len(fragment)
        if self._size < self.ALWAYS_BELOW or self._size >= self._parsed_size * self.GROWTH:
            self.value = parse_tool_arguments(self.text)
            self._parsed_size = self._size
            return True
        return False

    @property
    def text(self) -> str:
        if len(self._parts) > 1:
            self._parts = ["".join(self._parts)]
        return self._parts[0] if self._parts else ""

    def final(self) -> dict[str, Any]:
        if self._parsed_size != self._size:
            self.value = parse_tool_arguments(self.text)
            self._parsed_size = self._size
        return self.value
