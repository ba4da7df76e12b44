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


def test_first_count_of_a_file_equals_a_fresh_count(tmp_path: Path) -> None:
    """The first count reads the file's bodies in windows; it matches counting each entry alone, over
    every branch, with unreadable lines and entries appended since left as a fresh count leaves them."""
    import json

    from tests.core.session.helpers import HEADER, stamp

    lines = [json.dumps(HEADER)]
    parent = None
    for n in range(3000):
        if n and n % 50 == 0:  # a side branch every 50 entries
            parent = f"m{n - 7}"
        cost = {"input": 0.1 * n, "output": 0.003, "cacheRead": 0, "cacheWrite": 0, "total": 0.1 * n + 0.003}
        usage = {"input": n, "output": 3, "cacheRead": 1, "cacheWrite": 0, "totalTokens": n + 4, "cost": cost}
        message = (
            {"role": "user", "content": f"q {n}", "timestamp": n}
            if n % 2 == 0
            else {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": f"a {n}"},
                    {"type": "toolCall", "id": f"c{n}", "name": "read", "arguments": {}},
                ],
                "usage": usage,
                "stopReason": "toolUse",
                "timestamp": n,
            }
        )
        entry = {"type": "message", "id": f"m{n}", "parentId": parent, "timestamp": stamp(n % 3600)}
        line = json.dumps({**entry, "message": message}, separators=(",", ":"))
        if n % 997 == 0:
            line = line[:-9] + "\tbroken"  # indexed, then unreadable when its body is read
        lines.append(line)
        parent = f"m{n}"
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    store = open_session(path)
    tree = store.tree
    tree.append_message(user("appended"))
    tree.append_message(assistant("reply", usage=7))
    counted = StatsTracker(tree).current()
    fresh = session_stats(tree.body(r) for r in tree.records if r.type != "session")
    assert counted == fresh
    assert (counted.user_messages, counted.assistant_messages, counted.tool_calls) == (1499, 1499, 1498)
    store.close()
