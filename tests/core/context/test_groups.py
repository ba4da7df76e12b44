from __future__ import annotations

from piwork.core.context.groups import Orphan, partition
from tests.core.context.transcripts import assistant, call, custom, result, user


def spans(messages: list[dict]) -> list[tuple[int, int]]:
    return [(g.start, g.end) for g in partition(messages).groups]


def test_assistant_opens_a_group_its_results_join() -> None:
    messages = [
        user("go"),
        assistant(call("a", "read", path="x"), call("b", "ls", path=".")),
        result("a", "read", "1"),
        result("b", "ls", "2"),
        custom("piwork.contextBundle", "bundle"),
        assistant(text="done"),
    ]
    assert spans(messages) == [(0, 1), (1, 4), (4, 5), (5, 6)]
    assert partition(messages).ok


def test_orphan_result() -> None:
    messages = [
        user("go"),
        assistant(call("a", "read", path="x")),
        result("a", "read", "1"),
        result("z", "read", "2"),
    ]
    part = partition(messages)
    assert part.orphans == (Orphan("result", "z", 3),)
    assert spans(messages) == [(0, 1), (1, 3), (3, 4)]


def test_result_after_a_user_message_is_an_orphan() -> None:
    messages = [assistant(call("a", "read", path="x")), user("wait"), result("a", "read", "1")]
    assert partition(messages).orphans == (Orphan("call", "a", 0), Orphan("result", "a", 2))


def test_orphan_call() -> None:
    messages = [
        user("go"),
        assistant(call("a", "read", path="x"), call("b", "read", path="y")),
        result("a", "read", "1"),
        user("next"),
    ]
    assert partition(messages).orphans == (Orphan("call", "b", 1),)


def test_errored_and_aborted_assistants_are_ignored() -> None:
    messages = [
        user("go"),
        assistant(call("a", "read", path="x"), stop="error"),
        assistant(call("b", "read", path="y"), stop="aborted"),
        user("again"),
    ]
    part = partition(messages)
    assert part.ok
    assert spans(messages) == [(0, 1), (1, 2), (2, 3), (3, 4)]


def test_empty() -> None:
    assert partition([]).groups == () and partition([]).ok
