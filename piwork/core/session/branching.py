"""New sessions made from existing ones: branched session, clone and fork.

A branched session holds the root→leaf path of its source with ``label`` entries removed and
the rest re-linked (later entries may hang under labels), then fresh ``label`` entries for the
labels still set on the path. Entry ids stay the same; the header names the source file as
``parentSession``. Like any new session it is written once it has an assistant message.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from piwork.core.errors import PiworkError
from piwork.core.messages import message_text
from piwork.core.session.file_bodies import FileBodies
from piwork.core.session.format import session_file_name
from piwork.core.session.store import Session, new_header
from piwork.core.session.tree import EntryNotFound, SessionTree, tree_from_values

NOT_SAVED = "This session has not been saved yet. Send a message before cloning or forking it."


class BranchingError(PiworkError):
    """A clone or fork that cannot be made (message written for the user)."""


def branched_values(tree: SessionTree, leaf_id: str) -> list[dict[str, Any]]:
    """The path to ``leaf_id`` without labels, re-linked, followed by fresh label entries."""
    path = tree.path(leaf_id)
    if not path:
        raise EntryNotFound(leaf_id)
    kept: list[dict[str, Any]] = []
    replacement: dict[str, str] = {}
    pending_labels: list[str] = []
    parent_id: str | None = None
    for record in path:
        if record.type == "label":
            pending_labels.append(str(record.id))
            continue
        for label_id in pending_labels:
            replacement[label_id] = str(record.id)
        pending_labels.clear()
        entry = dict(tree.body(record))
        entry["parentId"] = parent_id
        if entry.get("type") == "compaction":
            first_kept = entry.get("firstKeptEntryId")
            if isinstance(first_kept, str) and first_kept in replacement:
                entry["firstKeptEntryId"] = replacement[first_kept]
        kept.append(entry)
        parent_id = record.id
    taken = {str(e.get("id")) for e in kept}
    on_path = {e.get("id") for e in kept if isinstance(e.get("id"), str)}
    labels: list[dict[str, Any]] = []
    last_id = kept[-1]["id"] if kept else None
    for target, label, stamp in tree.label_items():
        if target not in on_path:
            continue
        label_id = _fresh_id(tree, taken)
        taken.add(label_id)
        labels.append(
            {
                "type": "label",
                "id": label_id,
                "parentId": last_id,
                "timestamp": stamp,
                "targetId": target,
                "label": label,
            }
        )
        last_id = label_id
    return kept + labels


def _fresh_id(tree: SessionTree, taken: set[str]) -> str:
    while True:
        candidate = tree.new_entry_id()
        if candidate not in taken:
            return candidate


def create_branched_session(source: Session, leaf_id: str) -> Session:
    """A new session in the source's folder holding the path to ``leaf_id`` (see module doc)."""
    values = branched_values(source.tree, leaf_id)
    parent = str(source.path) if source.path is not None else None
    header = new_header(source.cwd, parent_session=parent)
    if source.session_dir is None:
        bodies = FileBodies(None)
        tree = tree_from_values(values, header, load_body=bodies, new_id=source.tree.id_factory)
        return Session(tree, None, source.cwd, None, bodies=bodies, flushed=False)
    path = source.session_dir / session_file_name(header["timestamp"], header["id"])
    bodies = FileBodies(path)
    tree = tree_from_values(values, header, load_body=bodies, new_id=source.tree.id_factory)
    session = Session(tree, path, source.cwd, source.session_dir, bodies=bodies, flushed=False)
    if tree.has_conversation:
        session.write_new_file()
    return session


def _require_saved(source: Session) -> None:
    if source.path is None or not source.path.exists():
        raise BranchingError(NOT_SAVED)


def clone_session(source: Session) -> Session:
    """The active branch (root → current leaf) as a new session."""
    _require_saved(source)
    if source.tree.leaf_id is None:
        raise BranchingError("There is nothing to clone yet.")
    return create_branched_session(source, str(source.tree.leaf_id))


@dataclass
class ForkResult:
    """The forked session and the text of the user message, for the editor."""

    session: Session
    editor_text: str


def fork_session(source: Session, user_entry_id: str) -> ForkResult:
    """Fork before a user message: its parent's path becomes a new session, its text goes to the editor."""
    _require_saved(source)
    record = source.tree.record(user_entry_id)
    if record is None:
        raise EntryNotFound(user_entry_id)
    body = source.tree.body(record)
    message = body.get("message") if isinstance(body, dict) else None
    text = message_text(message) if isinstance(message, dict) else ""
    parent_id = record.parent_id
    if not isinstance(parent_id, str) or not source.tree.has(parent_id):
        header = new_header(source.cwd, parent_session=str(source.path))
        assert source.session_dir is not None
        path = source.session_dir / session_file_name(header["timestamp"], header["id"])
        bodies = FileBodies(path)
        tree = SessionTree(header, load_body=bodies, new_id=source.tree.id_factory)
        session = Session(tree, path, source.cwd, source.session_dir, bodies=bodies, flushed=False)
        return ForkResult(session, text)
    return ForkResult(create_branched_session(source, parent_id), text)
