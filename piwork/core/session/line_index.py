"""Indexing message lines from their bytes, without a JSON parse.

Pi and piwork write every message entry as
``{"type":"message","id":…,"parentId":…,"timestamp":…,"message":{"role":…`` on one line, so
the fields the tree needs sit at the front of the line. ``scan_message_lines`` finds those lines
in a block of a file with one regular-expression scan (a quoted ``{"type":"message"`` cannot occur
inside a JSON string, where quotes are escaped) and reports every other line, and every line it
is unsure about, to the caller for a full parse.

A line Pi's ``JSON.parse`` rejects must not be indexed. The common ways a line in the usual layout
is still not JSON are caught before the scan, for a whole block at C speed (``suspect_lines``): a
raw control character (a TAB or a line break inside a string) and the words ``NaN`` and
``Infinity`` (not JSON values). Those lines are parsed in full, and skipped with a diagnostic when
the parse fails. Any other damage further along a line is found when its body is first read (an
unreadable body is reported with its line number and the entry left out of what uses it).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from piwork.core.session.records import NO_META, BodySource, EntryRecord

MESSAGE_PREFIX = re.compile(
    rb'\{"type":"message","id":"([A-Za-z0-9._-]+)","parentId":(?:null|"([A-Za-z0-9._-]+)"),'
    rb'"timestamp":"([0-9TZ:.+-]+)","message":\{"role":"([A-Za-z]+)"'
)
_ROLES = {r.encode(): r for r in ("user", "assistant", "toolResult", "bashExecution", "custom")}
_TEXT_BLOCK = b'{"type":"text","text":"'
_STOP_REASON = b'"stopReason":"'
# UTF-8 lead bytes of the non-ASCII characters JavaScript's trim() removes.
_UNICODE_SPACES = (
    b"\xc2\xa0",
    b"\xe1\x9a\x80",
    b"\xe2\x80",
    b"\xe2\x81\x9f",
    b"\xe3\x80\x80",
    b"\xef\xbb\xbf",
)
_BLANK_START = re.compile(rb"(?:[ \t]|\\[nrt])*")
_VISIBLE_ESCAPES = (b'"', b"\\", b"/", b"b")  # escapes of characters JavaScript's trim() keeps
# Right after the role: content whose first block is text starting with a printable ASCII
# character other than a space, a quote or a backslash.
_VISIBLE_TEXT_FIRST = re.compile(rb',"content":\[\{"type":"text","text":"[!#-\[\]-~]')
CARRIAGE_RETURN, CLOSING_BRACE = 13, 125
# Every byte but the control characters JSON strings may not hold raw (the newline ends a line).
_NOT_CONTROL = bytes(b for b in range(256) if b >= 0x20 or b == 0x0A)
_CONTROL = re.compile(rb"[\x00-\x09\x0b-\x1f]")
_NOT_JSON_WORDS = (b"NaN", b"Infinity")


def suspect_lines(data: bytes, begin: int, stop: int) -> list[tuple[int, int]]:
    """``(start, end)`` of the lines of ``data[begin:stop]`` (whole lines) that hold a raw control
    character (a carriage return right before the newline aside) or the word ``NaN`` or ``Infinity``:
    lines that must be parsed in full rather than indexed from their bytes. In file order."""
    hits: list[int] = []
    # Most blocks are nearly all of ``data`` and hold no control character: look at the whole of it
    # rather than copy the block (a fresh copy of a few MiB costs more than the scan)
    controls = data.translate(None, _NOT_CONTROL) if 2 * (stop - begin) >= len(data) else b"\x00"
    block = b""
    if controls:
        block = data[begin:stop]
        controls = block.translate(None, _NOT_CONTROL)
    if controls:
        crlf = block.count(b"\r\n")
        if len(controls) != crlf or controls.count(b"\r") != crlf:
            for found in _CONTROL.finditer(data, begin, stop):
                at = found.start()
                if data[at] != CARRIAGE_RETURN or data[at + 1 : at + 2] != b"\n":
                    hits.append(at)
    for word in _NOT_JSON_WORDS:
        _find_word(data, word, begin, stop, hits)
    spans: list[tuple[int, int]] = []
    for at in sorted(hits):
        if spans and at <= spans[-1][1]:
            continue
        start = data.rfind(b"\n", begin, at) + 1 or begin
        spans.append((max(start, begin), data.index(b"\n", at, stop)))
    return spans


def _find_word(data: bytes, word: bytes, begin: int, stop: int, hits: list[int]) -> None:
    """Add to ``hits`` where ``word`` starts in ``data[begin:stop]`` (some of them when occurrences overlap:
    enough to name every line holding it). Its first letter is looked for at ``memchr`` speed, several
    times faster than a search for the word, as long as that letter is rare; past a share of the block the
    rest is searched for the word itself."""
    find, starts = data.find, data.startswith
    first, rest = word[:1], word[1:]
    budget = (stop - begin) >> 8  # a step per letter found costs about what a search of 256 bytes does
    at = find(first, begin, stop)
    while at >= 0:
        if starts(rest, at + 1, stop):
            hits.append(at)
        budget -= 1
        if budget < 0:
            at = find(word, at + 1, stop)
            while at >= 0:
                hits.append(at)
                at = find(word, at + len(word), stop)
            return
        at = find(first, at + 1, stop)


def is_suspect(raw: bytes) -> bool:
    """``suspect_lines`` for one line without its newline."""
    return bool(suspect_lines(raw + b"\n", 0, len(raw) + 1))


def _meta(has_text: bool, stop: bytes | None) -> Mapping[str, Any]:
    values: dict[str, Any] = {"hasText": has_text}
    if stop is not None:
        values["stopReason"] = stop.decode("utf-8", "replace")
    return MappingProxyType(values)


# Assistant records of the usual stop reasons share one read-only ``meta`` (a constant table).
_STOP_REASONS = (None, b"stop", b"length", b"toolUse", b"error", b"aborted")
_ASSISTANT_META = {
    (has_text, stop): _meta(has_text, stop) for has_text in (True, False) for stop in _STOP_REASONS
}

OtherLine = Callable[[int, int, int], None]
"""Called with ``(start, end, line number)`` of a line to parse (``end``: position of its newline)."""


def _has_text(data: bytes, start: int, end: int) -> bool | None:
    """Whether an assistant line has a non-blank text block; ``None`` when that needs a parse."""
    position = data.find(_TEXT_BLOCK, start, end)
    while position >= 0:
        blank = _BLANK_START.match(data, position + len(_TEXT_BLOCK), end)
        after = blank.end() if blank is not None else position + len(_TEXT_BLOCK)
        if after >= end:
            return None
        following = data[after]
        if following != 0x22:  # not the closing quote: there is text
            if following == 0x5C and data[after + 1 : after + 2] in _VISIBLE_ESCAPES:
                return True  # a quote, a backslash, a slash or a backspace
            if following == 0x5C or data.startswith(_UNICODE_SPACES, after):
                return None  # another escape or a Unicode space: let the full parse decide
            return True
        position = data.find(_TEXT_BLOCK, after, end)
    return False


def _assistant_meta(data: bytes, start: int, end: int) -> Mapping[str, Any] | None:
    # The usual reply starts with a text block whose first character is visible: it has text.
    has_text = (
        True if _VISIBLE_TEXT_FIRST.match(data, start, end) is not None else _has_text(data, start, end)
    )
    if has_text is None:
        return None
    stop_at = data.rfind(_STOP_REASON, start, end)
    stop = None
    if stop_at >= 0:
        value_at = stop_at + len(_STOP_REASON)
        stop = data[value_at : data.find(b'"', value_at, end)]
    meta = _ASSISTANT_META.get((has_text, stop))
    return _meta(has_text, stop) if meta is None else meta


def _record(
    match: re.Match[bytes],
    data: bytes,
    end: int,
    seq: int,
    line: int,
    offset: int,
    source: BodySource | None = None,
) -> EntryRecord | None:
    """The record of a matched line ``data[match.start():end]``, or ``None`` if unsure."""
    last = end - 1
    if data[last] == CARRIAGE_RETURN:
        last -= 1
    if data[last] != CLOSING_BRACE:
        return None
    entry_id, parent_id, timestamp, role_bytes = match.groups()
    role = _ROLES.get(role_bytes) or role_bytes.decode("ascii")
    record = EntryRecord(
        seq,
        entry_id.decode("ascii"),
        None if parent_id is None else parent_id.decode("ascii"),
        "message",
        timestamp.decode("ascii"),
        line,
        offset,
        end - match.start(),
        role,
        source=source,
    )
    if role == "assistant":
        meta = _assistant_meta(data, match.end(), end)
        if meta is None:
            return None
        record.meta = meta
    return record


def light_record(raw: bytes, seq: int, line: int, offset: int) -> EntryRecord | None:
    """Index one message line (without its newline) from its bytes, or ``None`` if not possible."""
    match = MESSAGE_PREFIX.match(raw)
    if match is None or is_suspect(raw):
        return None
    return _record(match, raw, len(raw), seq, line, offset)


def scan_message_lines(
    data: bytes,
    begin: int,
    stop: int,
    base: int,
    line: int,
    records: list[EntryRecord],
    other: OtherLine,
    source: BodySource | None = None,
) -> int:
    """Index the lines of ``data[begin:stop]`` (whole lines, each ending with a newline) into ``records``.

    ``base`` is the file offset of ``data`` and ``line`` the number of the line before ``begin``.
    Lines that are not message lines in the usual layout go to ``other`` in file order, between
    the appends to ``records``; the others get ``source``. Returns the number of the last line.
    (The hot loop of opening a large session, hence written out in one function.)
    """
    find = data.find
    match = MESSAGE_PREFIX.match
    roles = _ROLES
    append = records.append
    seq = len(records)
    size = stop
    position = begin
    previous_bytes, previous = b"", ""  # id of the last message line, as bytes and as text
    lengths: dict[int, int] = {}  # one int object per distinct line length
    while position < size:
        end = find(b"\n", position)
        line += 1
        found = match(data, position)
        if found is not None:
            last = data[end - 1]
            if last == CARRIAGE_RETURN:
                last = data[end - 2]
            entry_id, parent_id, timestamp, role_bytes = found.groups()
            role = roles.get(role_bytes)
            meta = NO_META if role != "assistant" else _assistant_meta(data, found.end(), end)
            if last == CLOSING_BRACE and role is not None and meta is not None:
                if parent_id is None:
                    parent = None
                elif parent_id == previous_bytes:
                    parent = previous  # the line before is the parent: share its id string
                else:
                    parent = parent_id.decode("ascii")
                previous_bytes = entry_id
                previous = entry_id.decode("ascii")
                append(
                    EntryRecord(
                        seq,
                        previous,
                        parent,
                        "message",
                        timestamp.decode("ascii"),
                        line,
                        base + position,
                        lengths.setdefault(end - position, end - position),
                        role,
                        None,
                        meta,
                        None,
                        source,
                    )
                )
                seq += 1
                position = end + 1
                continue
        other(position, end, line)
        seq = len(records)
        position = end + 1
    return line
