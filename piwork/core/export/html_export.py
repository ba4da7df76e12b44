"""A session as one self-contained HTML page: every entry of every branch, a graph of the tree, and a
viewer that shows the conversation up to any entry.

The page needs nothing at view time: its style and script are inline and the session travels as JSON
inside a ``<script type="application/json">`` element. In that JSON every ``/`` is written ``\\/``
and every ``<`` as ``\\u003c`` (both mean the same to a JSON parser), so a ``</script>`` in a
message cannot end the element early and no ``http://`` address appears anywhere in the file.
"""

from __future__ import annotations

import html
import os
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any

import orjson

from piwork import __version__
from piwork.core.errors import InputRejected
from piwork.core.messages import message_text
from piwork.core.session.reader import read_session_file

_ASSETS = resources.files("piwork.core.export") / "assets"


class ExportError(InputRejected):
    """A file that cannot be exported (not a session, unreadable)."""


@dataclass(frozen=True)
class ExportedSession:
    """What the page is built from: the header, every entry in file order, and the leaf."""

    header: dict[str, Any]
    entries: list[dict[str, Any]]
    leaf_id: str | None
    name: str | None


def load_for_export(path: str | os.PathLike[str]) -> ExportedSession:
    """Read every entry of ``path`` (nothing is written)."""
    loaded = read_session_file(path, keep_bodies=True)
    if loaded.status == "missing":
        raise ExportError(f"No such session file: {path}")
    if loaded.status != "ok" or loaded.header is None:
        raise ExportError(f"Not a session file: {path}")
    entries = [r.body for r in loaded.records if isinstance(r.body, dict) and isinstance(r.id, str)]
    leaf = next((r.id for r in reversed(loaded.records) if r.type != "session"), None)
    name = None
    for entry in entries:
        if entry.get("type") == "session_info":
            raw = entry.get("name")
            name = raw.strip() or None if isinstance(raw, str) else None
    return ExportedSession(loaded.header, entries, leaf if isinstance(leaf, str) else None, name)


def _title(session: ExportedSession) -> str:
    if session.name:
        return session.name
    for entry in session.entries:
        message = entry.get("message")
        if entry.get("type") == "message" and isinstance(message, dict) and message.get("role") == "user":
            text = " ".join(message_text(message, " ").split())
            if text:
                return text if len(text) <= 80 else text[:79] + "…"
    return "Session " + str(session.header.get("id", ""))


def embedded_json(value: Any) -> str:
    """JSON safe inside a ``<script>`` element and free of ``http://``-like addresses."""
    data = orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS)
    data = data.replace(b"/", b"\\/").replace(b"<", b"\\u003c")
    # U+2028/2029 are fine in JSON; escape them anyway for older script parsers.
    data = data.replace("\u2028".encode(), b"\\u2028").replace("\u2029".encode(), b"\\u2029")
    return data.decode("utf-8")


def _asset(name: str) -> str:
    return (_ASSETS / name).read_text(encoding="utf-8")


def render_html(
    session: ExportedSession,
    *,
    system_prompt: str | None = None,
    tools: Iterable[dict[str, Any]] = (),
    exported_at: datetime | None = None,
) -> str:
    """The page for ``session``; ``system_prompt`` and ``tools`` are shown when given (the window
    knows them, a file alone does not)."""
    title = _title(session)
    data = {
        "title": title,
        "header": session.header,
        "leafId": session.leaf_id,
        "entries": session.entries,
        "systemPrompt": system_prompt,
        "tools": list(tools),
        "exportedAt": (exported_at or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "generator": f"piwork {__version__}",
    }
    return "".join(
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
            embedded_json(data),
            "</script>\n<script>\n",
            _asset("export.js"),
            "</script>\n</body>\n</html>\n",
        ]
    )


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
    temporary = target.with_name(target.name + ".part")
    temporary.write_text(page, encoding="utf-8")
    os.replace(temporary, target)
    return target
