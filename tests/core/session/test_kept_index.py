"""A large session's index leaves the cycle collector's way while it is open, and comes back on close."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest

from piwork.core import collector
from piwork.core.session.store import open_session

from .helpers import conversation, write_session


@pytest.fixture
def small_threshold(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(collector, "FREEZE_AFTER", 50)  # a few dozen entries count as large here
    try:
        yield
    finally:
        collector.release_kept()


def test_a_large_index_is_frozen_until_the_session_closes(tmp_path: Path, small_threshold: None) -> None:
    path = write_session(tmp_path / "s.jsonl", conversation(turns=60))
    assert gc.get_freeze_count() == 0
    session = open_session(path, writable=False)
    context = session.tree.build_context()
    assert len(context.messages) == 120
    assert gc.get_freeze_count() > 0
    session.close()
    assert gc.get_freeze_count() == 0
    assert gc.isenabled()


def test_a_small_session_freezes_nothing(tmp_path: Path) -> None:
    path = write_session(tmp_path / "s.jsonl", conversation(turns=3))
    with open_session(path, writable=False) as session:
        session.tree.build_context()
        assert gc.get_freeze_count() == 0
    assert gc.isenabled()
