"""Session statistics kept up to date as entries are appended, and after a reload from disk."""

from __future__ import annotations

from pathlib import Path

from piwork.core.agent.stats import StatsTracker, session_stats
from piwork.core.session.store import create_session, open_session
from tests.core.compaction.builders import assistant, user


def test_tracker_counts_new_entries_and_starts_over_after_a_reload(tmp_path: Path) -> None:
    store = create_session(str(tmp_path), tmp_path / "sessions")
    tree = store.tree
    tracker = StatsTracker(tree)
    assert tracker.current().assistant_messages == 0
    tree.append_message(user("one"))
    tree.append_message(assistant("two", usage=100))
    first = tracker.current()
    assert (first.user_messages, first.assistant_messages, first.tokens["input"]) == (1, 1, 100)
    first.tokens["input"] = 1e9  # the caller's copy; the tracker's totals stay right
    tree.append_message(user("three"))
    tree.append_message(assistant("four", usage=50))
    second = tracker.current()
    assert second == session_stats(tree.entries())
    assert (second.user_messages, second.tokens["input"]) == (2, 150)
    assert store.path is not None
    reopened = open_session(store.path, writable=False)
    tree.replace_records(reopened.tree.header, reopened.tree.records[:2])  # as after a reload
    assert tracker.current() == session_stats(tree.entries())
    assert tracker.current().user_messages == 1
    reopened.close()
    store.close()
