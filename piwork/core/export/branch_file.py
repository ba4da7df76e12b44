"""The active branch (or the branch to any entry) as a new, standalone session file.

The new file has its own session id and holds the root → leaf path with ``label`` entries left out
and the ``parentId`` chain re-linked over them (the same shape a clone has), then fresh label entries
for the labels set on that path. Opening it gives the context the branch had.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from piwork.core.collector import paused_gc
from piwork.core.export.html_export import ExportError, reread_session
from piwork.core.fs.atomic import write_atomically
from piwork.core.session.branching import branched_values
from piwork.core.session.format import CURRENT_VERSION, serialize
from piwork.core.session.migrate import migrate_to_current, version_at_least
from piwork.core.session.reader import read_session_file
from piwork.core.session.records import EntryRecord
from piwork.core.session.store import new_header
from piwork.core.session.tree import EntryNotFound, SessionTree, tree_from_values


def export_branch_jsonl(
    source: str | os.PathLike[str], output: str | os.PathLike[str], leaf_id: str | None = None
) -> Path:
    """Write the branch ending at ``leaf_id`` (default: the session's leaf) of ``source`` to ``output``.

    Refuses to overwrite the source. Returns the written path."""
    source_path = Path(os.path.abspath(source))
    target = Path(os.path.abspath(output))
    if target == source_path or (target.exists() and os.path.samefile(target, source_path)):
        raise ExportError("The exported branch must go to another file than the session itself.")
    loaded = read_session_file(source_path)
    if loaded.status == "missing":
        raise ExportError(f"No such session file: {source}")
    if loaded.status != "ok" or loaded.header is None:
        raise ExportError(f"Not a session file: {source}")
    current = version_at_least(loaded.version, CURRENT_VERSION)
    if current:
        header = loaded.header
        tree = SessionTree(header, loaded.records, load_body=_body)
    else:  # an older format: migrate every entry in memory first
        full = read_session_file(source_path, keep_bodies=True)
        values = [full.header] + [r.body for r in full.records]
        migrate_to_current(values)
        header = values[0]
        tree = tree_from_values(values[1:], header)
    leaf = leaf_id if leaf_id is not None else tree.leaf_id
    if leaf is None:
        raise ExportError("The session has no entries to export.")
    try:
        with paused_gc():
            branch = branched_values(tree, str(leaf))
    except EntryNotFound as err:
        raise ExportError(f"No entry {leaf} in {source}") from err
    data = reread_session(source_path) if current else b""
    cwd = header.get("cwd") if isinstance(header.get("cwd"), str) else os.getcwd()
    new = new_header(str(cwd), parent_session=str(source_path))
    chunks = [serialize(new).encode("utf-8")]
    for value in branch:
        record = tree.record(value.get("id")) if current else None
        if record is not None and record.offset >= 0 and _unchanged(value, record):
            chunks.append(data[record.offset : record.offset + record.length].rstrip(b"\r") + b"\n")
        else:
            chunks.append(serialize(value).encode("utf-8"))
    write_atomically(target, b"".join(chunks), durable=True)
    return target


def _body(record: EntryRecord) -> Any:
    return record.source.load(record) if record.source is not None else record.body


def _unchanged(value: dict[str, Any], record: EntryRecord) -> bool:
    """True when the branch keeps the entry as its line says (same parent, same kept-entry pointer):
    the line is then copied as it is instead of being written anew."""
    if value.get("parentId") != record.parent_id or value.get("type") == "label":
        return False
    return value.get("type") != "compaction" or value.get("firstKeptEntryId") == record.meta.get(
        "firstKeptEntryId"
    )
