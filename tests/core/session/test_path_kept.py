"""The leaf's path is walked once and extended as entries are appended; it always equals a fresh walk."""

from __future__ import annotations

import random
from pathlib import Path

from piwork.core.session.store import open_session
from piwork.core.session.tree import SessionTree
from tests.core.session.helpers import HEADER, assistant, user, write_session


def _fresh(tree: SessionTree, leaf: str | None) -> list[str]:
    """The path of ``leaf`` walked on a new tree built from the same entries (nothing kept)."""
    copy = SessionTree(tree.header, [r for r in tree.records if r.type != "session"], load_body=tree.body)
    return [str(r.id) for r in copy.path(leaf)]


def test_kept_path_follows_appends_branches_and_reused_ids() -> None:
    rng = random.Random(5)
    tree = SessionTree(dict(HEADER))
    ids: list[str] = []
    for n in range(300):
        if ids and rng.random() < 0.15:  # go back to an older entry and branch from it
            tree.leaf_id = rng.choice(ids)
        entry = user(f"e{n}", tree.leaf_id, f"text {n}") if n % 2 else assistant(f"e{n}", tree.leaf_id, "a")
        if ids and rng.random() < 0.03:  # an id used again: the later entry wins, older paths change
            entry["id"] = rng.choice(ids)
        tree.append_raw(entry)
        ids.append(str(entry["id"]))
        for leaf in (tree.leaf_id, rng.choice(ids), tree.leaf_id):
            assert [str(r.id) for r in tree.path(leaf)] == _fresh(tree, leaf)
    path = tree.path()
    path.clear()  # the caller's copy: the kept path is not touched
    assert [str(r.id) for r in tree.path()] == _fresh(tree, tree.leaf_id)
    assert tree.path("no-such-id") == [] and tree.path(None) == []


def test_kept_path_is_dropped_when_the_file_is_read_again(tmp_path: Path) -> None:
    entries = [user("u1", None, "one"), assistant("a1", "u1", "two"), user("u2", "a1", "three")]
    path = write_session(tmp_path / "s.jsonl", entries)
    store = open_session(path, writable=False)
    tree = store.tree
    assert [r.id for r in tree.path("u2")] == ["u1", "a1", "u2"]
    other = write_session(tmp_path / "t.jsonl", [user("u1", None, "one"), user("u2", "u1", "moved")])
    reread = open_session(other, writable=False)
    tree.replace_records(reread.tree.header, reread.tree.records)
    assert [r.id for r in tree.path("u2")] == ["u1", "u2"]
    reread.close()
    store.close()
