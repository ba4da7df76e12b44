"""The open session file deleted or replaced by another program: nothing is written where nobody can see it."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from piwork.core.session.store import Session, SessionFileGone, create_session, open_session


def _assistant(text: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "stopReason": "stop",
        "timestamp": 2,
        "api": "anthropic-messages",
        "provider": "p",
        "model": "m",
        "usage": {},
    }


def _started(tmp_path: Path) -> Session:
    store = create_session(str(tmp_path), str(tmp_path))
    store.tree.append_message({"role": "user", "content": "one", "timestamp": 1})
    store.tree.append_message(_assistant("a"))
    assert store.path is not None and store.path.is_file()
    return store


def test_a_deleted_file_stops_the_writing_and_says_so(tmp_path: Path) -> None:
    store = _started(tmp_path)
    assert store.path is not None
    store.path.unlink()
    with pytest.raises(SessionFileGone, match="was deleted or moved by another program; piwork stopped"):
        store.tree.append_message({"role": "user", "content": "two", "timestamp": 3})
    assert store.read_only and store.notices[-1].startswith(f"The session file {store.path} was deleted")
    assert not store.path.exists()
    store.close()


def test_a_replaced_file_is_reloaded_and_the_next_entries_land_in_it(tmp_path: Path) -> None:
    store = _started(tmp_path)
    assert store.path is not None
    copy = store.path.with_suffix(".tmp")
    copy.write_bytes(store.path.read_bytes())
    os.replace(copy, store.path)  # how an editor saves
    store.tree.append_message({"role": "user", "content": "two", "timestamp": 3})
    store.tree.append_message(_assistant("b"))
    store.close()
    assert "reloaded it before writing" in store.notices[-1]
    reopened = open_session(store.path, writable=False)
    assert [r.role for r in reopened.tree.records if r.type == "message"] == ["user", "assistant"] * 2
    reopened.close()


@pytest.mark.parametrize("content", [b"", b"my notes, saved over the session\n"])
def test_a_file_overwritten_with_something_else_is_left_as_it_is(tmp_path: Path, content: bytes) -> None:
    store = _started(tmp_path)
    assert store.path is not None
    store.path.write_bytes(content)
    with pytest.raises(SessionFileGone, match="was changed by another program and is no longer a session"):
        store.tree.append_message({"role": "user", "content": "two", "timestamp": 3})
    store.close()
    assert store.read_only and store.path.read_bytes() == content
