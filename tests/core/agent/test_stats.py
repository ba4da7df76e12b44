"""Session statistics kept up to date as entries are appended, and after a reload from disk."""

from __future__ import annotations

from pathlib import Path

from piwork.core.agent.stats import StatsTracker, session_stats
from piwork.core.llm.types import Model
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


def test_usage_entries_are_billed_and_never_context() -> None:
    from piwork.core.agent.stats import session_stats

    cost = {"input": 0.0, "output": 0.0, "cacheRead": 0.0, "cacheWrite": 0.02, "total": 0.02}
    warm = {"input": 3, "output": 0, "cacheRead": 0, "cacheWrite": 900, "totalTokens": 903, "cost": cost}
    entries = [
        {"type": "message", "id": "u", "message": {"role": "user", "content": "hi"}},
        {
            "type": "usage",
            "id": "w",
            "kind": "cacheWarming",
            "provider": "anthropic",
            "model": "m",
            "usage": warm,
        },
    ]
    stats = session_stats(entries)
    assert stats.tokens == {"input": 3.0, "output": 0.0, "cacheRead": 0.0, "cacheWrite": 900.0}
    assert stats.cost["total"] == 0.02 and stats.user_messages == 1 and stats.assistant_messages == 0


def test_usage_from_before_a_context_edit_is_not_trusted() -> None:
    from piwork.core.agent.stats import context_usage

    model = Model(
        id="m", name="m", api="anthropic-messages", provider="p", base_url="http://x", context_window=1000
    )
    reply = {
        "role": "assistant",
        "content": [{"type": "text", "text": "a" * 40}],
        "stopReason": "stop",
        "usage": {"input": 500, "output": 10, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 510},
    }
    messages = [{"role": "user", "content": "q" * 40}, reply]
    branch = [{"type": "message", "id": "r", "message": reply}]
    trusted = context_usage(model, messages, branch)
    assert trusted is not None and trusted.tokens == 510
    edited = context_usage(
        model, messages, [*branch, {"type": "context_edit", "id": "e", "targetId": "x", "replacement": None}]
    )
    assert edited is not None and edited.tokens == 20  # 10 + 10 estimated, the usage no longer applies
