"""Session format v3: constants, names and locations, serialization and the pure JSONL parser.

The parser does no I/O: it takes the bytes (or text) of a file and returns the parsed values with
their line numbers and byte offsets plus diagnostics, so the store, the session browser and the
tests share one reading of the format.
"""

from __future__ import annotations

import json
import json.scanner
import os
import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from piwork.core.jscompat import js_json_stringify, js_trim, json_loads_js
from piwork.core.paths import SESSION_DIR_ENV, expand_home
from piwork.core.session.timestamps import now_ms

CURRENT_VERSION = 3
HEADER_SCAN_LIMIT = 1024 * 1024
SESSION_ID_PATTERN = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")

# Diagnostic kinds (spec: sessions §4).
MALFORMED_JSON = "malformed_json"
TORN_TAIL = "torn_tail"
MISSING_ID = "missing_id"
DUPLICATE_ID = "duplicate_id"
DANGLING_PARENT = "dangling_parent"
CYCLE = "cycle"
BAD_HEADER = "bad_header"
UNSUPPORTED_FORMAT = "unsupported_format"


@dataclass(frozen=True)
class Diagnostic:
    """A problem found in a session file; ``line`` is 1-based (0 when not tied to a line)."""

    kind: str
    line: int
    byte_offset: int
    message: str
    entry_id: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "kind": self.kind,
            "line": self.line,
            "byteOffset": self.byte_offset,
            "message": self.message,
        }
        if self.entry_id is not None:
            out["entryId"] = self.entry_id
        return out


def new_session_id() -> str:
    """A UUID v7 (48-bit millisecond time, then random bits), the form Pi uses for session ids."""
    value = (now_ms() & ((1 << 48) - 1)) << 80
    value |= 0x7 << 76
    value |= _random_bits(12) << 64
    value |= 0b10 << 62
    value |= _random_bits(62)
    return str(uuid.UUID(int=value))


def _random_bits(count: int) -> int:
    """``count`` bits from the system's CSPRNG (what ``secrets`` reads, without loading OpenSSL)."""
    return int.from_bytes(os.urandom((count + 7) // 8), "big") >> (-count % 8)


def is_valid_session_id(session_id: str) -> bool:
    return SESSION_ID_PATTERN.fullmatch(session_id) is not None


def encode_cwd(cwd: str) -> str:
    """The per-cwd folder name: ``/home/ana/proj`` → ``--home-ana-proj--``."""
    absolute = os.path.abspath(cwd)
    if absolute[:1] in ("/", "\\"):
        absolute = absolute[1:]
    return "--" + re.sub(r"[/\\:]", "-", absolute) + "--"


def sessions_root(agent_dir: str | os.PathLike[str]) -> Path:
    return Path(agent_dir) / "sessions"


def default_session_dir(cwd: str, agent_dir: str | os.PathLike[str]) -> Path:
    return sessions_root(agent_dir) / encode_cwd(cwd)


def resolve_session_dir(
    cwd: str,
    agent_dir: str | os.PathLike[str],
    flag: str | None = None,
    env: Mapping[str, str] | None = None,
    settings_dir: str | None = None,
) -> Path:
    """Where new sessions go: ``--session-dir``, then ``$PI_CODING_AGENT_SESSION_DIR``, then the
    ``sessionDir`` setting, then the per-cwd folder (``~`` expanded in all of them)."""
    environ = os.environ if env is None else env
    for candidate in (flag, environ.get(SESSION_DIR_ENV), settings_dir):
        if candidate:
            return Path(os.path.abspath(expand_home(candidate, environ)))
    return default_session_dir(cwd, agent_dir)


def session_file_name(header_timestamp: str, session_id: str) -> str:
    return header_timestamp.replace(":", "-").replace(".", "-") + f"_{session_id}.jsonl"


def serialize(value: Any) -> str:
    """One JSONL line exactly as JavaScript's ``JSON.stringify`` writes it, with its newline."""
    return js_json_stringify(value) + "\n"


def is_header(value: Any) -> bool:
    return isinstance(value, dict) and value.get("type") == "session"


def is_valid_header(value: Any) -> bool:
    return is_header(value) and isinstance(value.get("id"), str)


def is_v4_header(value: Any) -> bool:
    return isinstance(value, dict) and value.get("v") == 4 and value.get("kind") == "header"


def _reject_constant(name: str) -> Any:
    raise ValueError(f"invalid JSON literal {name}")


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)
_C_SCAN: Any = json.scanner.make_scanner(_DECODER)  # type: ignore[arg-type]
_JSON_SPACE = (" ", "\t", "\n", "\r", "")


def json_loads(text: str) -> Any:
    """``JSON.parse`` rules (no NaN/Infinity, no BOM) at the speed of the C decoder.

    Integers keep full precision here; JavaScript's rounding beyond 2**53 happens when they are
    written back (``js_json_stringify``), so files come out byte-identical. A value nested too
    deeply for the decoder is a ``ValueError`` like any other unreadable line.
    """
    try:
        if text[:1] in _JSON_SPACE:
            return _DECODER.decode(text)
        value, end = _scan_once(text, 0)
    except RecursionError as err:
        raise ValueError("JSON value nested too deeply") from err
    if end != len(text) and text[end:].strip(" \t\n\r"):
        raise ValueError("Extra data after the JSON value")
    return value


def json_loads_bytes(data: bytes | bytearray | memoryview) -> Any:
    """``json_loads`` of UTF-8 bytes (invalid bytes read as U+FFFD), through orjson when it can.

    orjson takes the strictly valid documents, which are most lines, several times faster and
    with the same values (JavaScript reads integers beyond 64 bits as doubles, so does orjson);
    lone surrogates, invalid UTF-8 and numbers overflowing to infinity go the standard way.
    """
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return json_loads(bytes(data).decode("utf-8", "replace"))


def _scan_once(text: str, index: int) -> tuple[Any, int]:
    try:
        result: tuple[Any, int] = _C_SCAN(text, index)
        return result
    except StopIteration as stop:
        raise ValueError("Expecting value") from stop


def parse_session_text(text: str) -> list[Any]:
    """Pi's loose text parser: trim, split on ``\\n``, skip blank and unparseable lines.

    Values that are valid JSON but not objects are kept, as the reference does.
    """
    values: list[Any] = []
    for line in js_trim(text).split("\n"):
        if not js_trim(line):
            continue
        try:
            values.append(json_loads_js(line))
        except ValueError:
            continue
    return values


def is_blank(raw: bytes) -> bool:
    if not raw.strip():
        return True
    return not js_trim(raw.decode("utf-8", "replace"))
