"""The active branch (or the branch to any entry) as a new, standalone session file.

The new file has its own session id and holds the root → leaf path with ``label`` entries left out
and the ``parentId`` chain re-linked over them (the same shape a clone has), then fresh label entries
for the labels set on that path. Opening it gives the context the branch had.
"""

from __future__ import annotations

import os
from pathlib import Path

from piwork.core.export.html_export import ExportError
from piwork.core.session.branching import branched_values
from piwork.core.session.format import serialize
from piwork.core.session.migrate import migrate_to_current
from piwork.core.session.reader import read_session_file
from piwork.core.session.store import new_header
from piwork.core.session.tree import EntryNotFound, tree_from_values


def export_branch_jsonl(
    source: str | os.PathLike[str], output: str | os.PathLike[str], leaf_id: str | None = None
) -> Path:
    """Write the branch ending at ``leaf_id`` (default: the session's leaf) of ``source`` to ``output``.

    Refuses to overwrite the source. Returns the written path."""
    source_path = Path(os.path.abspath(source))
    target = Path(os.path.abspath(output))
    if target == source_path or (target.exists() and os.path.samefile(target, source_path)):
        raise ExportError("The exported branch must go to another file than the session itself.")
    loaded = read_session_file(source_path, keep_bodies=True)
    if loaded.status == "missing":
        raise ExportError(f"No such session file: {source}")
    if loaded.status != "ok" or loaded.header is None:
        raise ExportError(f"Not a session file: {source}")
    values = [loaded.header] + [r.body for r in loaded.records]
    migrate_to_current(values)
    header = values[0]
    tree = tree_from_values(values[1:], header)
    leaf = leaf_id if leaf_id is not None else tree.leaf_id
    if leaf is None:
        raise ExportError("The session has no entries to export.")
    try:
        branch = branched_values(tree, str(leaf))
    except EntryNotFound as err:
        raise ExportError(f"No entry {leaf} in {source}") from err
    cwd = header.get("cwd") if isinstance(header.get("cwd"), str) else os.getcwd()
    new = new_header(str(cwd), parent_session=str(source_path))
    temporary = target.with_name(target.name + ".part")
    with open(temporary, "w", encoding="utf-8") as out:
        out.write(serialize(new))
        for value in branch:
            out.write(serialize(value))
        out.flush()
        os.fsync(out.fileno())
    os.replace(temporary, target)
    return target
