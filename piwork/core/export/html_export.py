"""A session as one self-contained HTML page: every entry of every branch, a graph of the tree, and a
viewer that shows the conversation up to any entry.

The page needs nothing at view time: its style and script are inline and the session travels as JSON
inside a ``<script type="application/json">`` element. In that JSON every ``/`` is written ``\\/``
and every ``<`` as ``\\u003c`` (both mean the same to a JSON parser), so a ``</script>`` in a
message cannot end the element early and no ``http://`` address appears anywhere in the file.
"""

from __future__ import annotations

import html
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any

import orjson

from piwork import __version__
from piwork.core.collector import paused_gc
from piwork.core.errors import InputRejected
from piwork.core.fs.atomic import write_atomically
from piwork.core.messages import message_text, output_line_count
from piwork.core.session.format import CURRENT_VERSION, json_loads_bytes
from piwork.core.session.migrate import migrate_to_current, version_at_least
from piwork.core.session.reader import read_regular_bytes, read_session_file

_ASSETS = resources.files("piwork.core.export") / "assets"


class ExportError(InputRejected):
    """A file that cannot be exported (not a session, unreadable)."""


@dataclass(frozen=True)
class ExportedSession:
    """What the page is built from: the header, every entry as JSON text in file order, the leaf, a title."""

    header: dict[str, Any]
    entries_json: list[bytes]
    leaf_id: str | None
    title: str


def load_for_export(path: str | os.PathLike[str]) -> ExportedSession:
    """Read every entry of ``path`` (nothing is written).

    An entry goes into the page as the very JSON text of its line, checked to be valid JSON (a line
    that only a lenient reading accepts is written anew), so a large session is not rebuilt object by
    object. A file of an older format version is migrated in memory first."""
    file_path = Path(path)
    loaded = read_session_file(file_path)
    if loaded.status == "missing":
        raise ExportError(f"No such session file: {path}")
    if loaded.status != "ok" or loaded.header is None:
        raise ExportError(f"Not a session file: {path}")
    records = [r for r in loaded.records if r.type != "session" and isinstance(r.id, str)]
    if not version_at_least(loaded.version, CURRENT_VERSION):
        return _migrated(file_path)
    data = reread_session(file_path)
    entries: list[bytes] = []
    name: str | None = None
    first_user = ""
    with paused_gc():
        for record in records:
            raw = data[record.offset : record.offset + record.length]
            try:
                value = orjson.loads(raw)
            except orjson.JSONDecodeError:
                try:
                    value = json_loads_bytes(raw)
                except ValueError:
                    continue
                raw = json.dumps(value).encode("ascii")
            if not isinstance(value, dict):
                continue
            entries.append(raw)
            if record.type == "session_info":
                name = _name_of(value)
            elif not first_user and record.role == "user":
                first_user = _user_text(value)
    leaf = records[-1].id if records else None
    return ExportedSession(loaded.header, entries, leaf, _title(name, first_user, loaded.header))


def _migrated(path: Path) -> ExportedSession:
    full = read_session_file(path, keep_bodies=True)
    values: list[Any] = [full.header] + [r.body for r in full.records]
    migrate_to_current(values)
    entries = [v for v in values[1:] if isinstance(v, dict) and isinstance(v.get("id"), str)]
    name: str | None = None
    first_user = ""
    for entry in entries:
        if entry.get("type") == "session_info":
            name = _name_of(entry)
        elif not first_user:
            first_user = _user_text(entry)
    leaf = entries[-1]["id"] if entries else None
    header = values[0] if isinstance(values[0], dict) else {}
    return ExportedSession(header, [orjson.dumps(e) for e in entries], leaf, _title(name, first_user, header))


def _name_of(entry: dict[str, Any]) -> str | None:
    raw = entry.get("name")
    return (raw.strip() or None) if isinstance(raw, str) else None


def _user_text(entry: dict[str, Any]) -> str:
    message = entry.get("message")
    if entry.get("type") == "message" and isinstance(message, dict) and message.get("role") == "user":
        return " ".join(message_text(message, " ").split())
    return ""


def _title(name: str | None, first_user: str, header: dict[str, Any]) -> str:
    if name:
        return name
    if first_user:
        return first_user if len(first_user) <= 80 else first_user[:79] + "…"
    return "Session " + str(header.get("id", ""))


def embedded_json(value: Any, entries_json: list[bytes] | None = None) -> bytes:
    """JSON safe inside a ``<script>`` element and free of ``http://``-like addresses; with
    ``entries_json``, ``value`` gets an ``entries`` array of those JSON texts."""
    data = orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS)
    if entries_json is not None:
        data = (
            data[:-1]
            + (b',"entries":[' if len(data) > 2 else b'"entries":[')
            + b",".join(entries_json)
            + b"]}"
        )
    return data.replace(b"/", b"\\/").replace(b"<", b"\\u003c")


def _asset(name: str) -> str:
    return (_ASSETS / name).read_text(encoding="utf-8")


def output_lines(entries_json: list[bytes]) -> dict[str, int]:
    """The line count of every tool result's and shell run's output, by entry id: the page shows these
    figures, the ones the window's tool cards give (only those lines are parsed)."""
    counts: dict[str, int] = {}
    for raw in entries_json:
        if b"toolResult" not in raw and b"bashExecution" not in raw:
            continue
        try:
            entry = json_loads_bytes(raw)
        except ValueError:
            continue
        message = entry.get("message") if isinstance(entry, dict) else None
        entry_id = entry.get("id") if isinstance(entry, dict) else None
        shown = isinstance(message, dict) and message.get("role") in ("toolResult", "bashExecution")
        if shown and isinstance(entry_id, str) and isinstance(message, dict):
            counts[entry_id] = output_line_count(message)
    return counts


def render_html(
    session: ExportedSession,
    *,
    system_prompt: str | None = None,
    tools: Iterable[dict[str, Any]] = (),
    exported_at: datetime | None = None,
) -> bytes:
    """The page for ``session`` (UTF-8); ``system_prompt`` and ``tools`` are shown when given (the
    window knows them, a file alone does not). Built as bytes: the entries stay the file's own text."""
    title = session.title
    data = {
        "title": title,
        "header": session.header,
        "leafId": session.leaf_id,
        "systemPrompt": system_prompt,
        "tools": list(tools),
        "exportedAt": (exported_at or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "generator": f"piwork {__version__}",
        "outputLines": output_lines(session.entries_json),
    }
    head = "".join(
        [
            '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n',
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n',
            # Nothing may be loaded from anywhere: the page is complete as it is.
            '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
            "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n",
            # "/" as a character reference too: a title quoting an address shows it but holds no URL.
            f"<title>{html.escape(title).replace('/', '&#47;')} — piwork export</title>\n",
            "<style>\n",
            _asset("export.css"),
            "</style>\n</head>\n<body>\n",
            '<noscript><p class="noscript">This export needs JavaScript to show the conversation; '
            "the session data is embedded in the page source.</p></noscript>\n",
            '<div id="app"></div>\n',
            '<script type="application/json" id="session-data">',
        ]
    )
    tail = "</script>\n<script>\n" + _asset("export.js") + "</script>\n</body>\n</html>\n"
    return b"".join([head.encode("utf-8"), embedded_json(data, session.entries_json), tail.encode("utf-8")])


def export_html(
    source: str | os.PathLike[str],
    output: str | os.PathLike[str],
    *,
    system_prompt: str | None = None,
    tools: Iterable[dict[str, Any]] = (),
) -> Path:
    """Write the page for the session file ``source`` to ``output``; returns the written path."""
    page = render_html(load_for_export(source), system_prompt=system_prompt, tools=tools)
    target = Path(output)
    write_atomically(target, page, durable=False)  # a page made again from the session at will
    return target


def reread_session(path: Path) -> bytes:
    """The file's bytes for the entries' own text; one replaced by a FIFO or device since it was parsed
    is refused."""
    try:
        return read_regular_bytes(path)
    except OSError as err:
        raise ExportError(f"Cannot read {path} again: {err.strerror or err}") from err
