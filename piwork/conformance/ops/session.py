"""session suite: parse_session, load_session_file, context_entries, session_context, session_tree."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from piwork.conformance.harness import CaseEnv
from piwork.core.jscompat import UNDEFINED
from piwork.core.session.context import build_context_entries, build_session_context
from piwork.core.session.format import is_header, parse_session_text
from piwork.core.session.migrate import migrate_to_current
from piwork.core.session.store import open_session
from piwork.core.session.tree import tree_from_values


def _leaf(args: dict[str, Any]) -> Any:
    return args.get("leafId", UNDEFINED)


def _parse_session(args: dict[str, Any], env: CaseEnv) -> Any:
    values = parse_session_text(args["text"])
    migrate_to_current(values, env.ids)
    return {"entries": values}


def _load_session_file(args: dict[str, Any], env: CaseEnv) -> Any:
    if env.root is not None:
        return _load_in(Path(env.root), args, env)
    # The reference opens the file from a fresh directory that is also its working directory.
    tmp = tempfile.mkdtemp(prefix="piwork-conf-")
    root = os.path.realpath(tmp)
    old_cwd = os.getcwd()
    env.root = root
    try:
        os.chdir(root)
        return _load_in(Path(root), args, env)
    finally:
        os.chdir(old_cwd)
        shutil.rmtree(tmp, ignore_errors=True)


def _load_in(root: Path, args: dict[str, Any], env: CaseEnv) -> Any:
    folder = root / "sessions"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "session.jsonl"
    path.write_bytes(args["text"].encode("utf-8", "surrogatepass"))
    session = open_session(path, new_id=env.ids, repair_now=True, keep_non_objects=True)
    try:
        header = session.tree.header
        result: dict[str, Any] = {
            "header": dict(header) if header is not None else None,
            "entries": session.tree.entries(),
            "leafId": session.tree.leaf_id,
            "fileAfter": path.read_bytes().decode("utf-8", "replace"),
        }
    finally:
        session.close()
    if header is not None and _json_string(header.get("id")) not in args["text"]:
        generated_id, generated_time = header["id"], header["timestamp"]
        result["header"]["id"] = "$SESSION_ID"
        result["header"]["timestamp"] = "$TIMESTAMP"
        after = result["fileAfter"].replace(generated_id, "$SESSION_ID")
        result["fileAfter"] = after.replace(generated_time, "$TIMESTAMP")
    return result


def _json_string(value: Any) -> str:
    from piwork.core.jscompat import js_json_stringify

    return js_json_stringify(value)


def _context_entries(args: dict[str, Any], env: CaseEnv) -> Any:
    entries = args["entries"]
    selected = build_context_entries(entries, _leaf(args))
    positions = {id(e): i for i, e in reversed(list(enumerate(entries)))}
    return {
        "ids": [e.get("id") if isinstance(e, dict) else None for e in selected],
        "indices": [positions.get(id(e), -1) for e in selected],
    }


def _session_context(args: dict[str, Any], env: CaseEnv) -> Any:
    return build_session_context(args["entries"], _leaf(args))


def _session_tree(args: dict[str, Any], env: CaseEnv) -> Any:
    values = list(args["entries"])
    if any(is_header(v) for v in values):
        migrate_to_current(values, env.ids)
    tree = tree_from_values(values)
    return {
        "leafId": tree.leaf_id,
        "tree": [node.to_json() for node in tree.tree()],
        "labels": tree.labels(),
        "sessionName": tree.name,
    }


OPS = {
    "parse_session": _parse_session,
    "load_session_file": _load_session_file,
    "context_entries": _context_entries,
    "session_context": _session_context,
    "session_tree": _session_tree,
}
