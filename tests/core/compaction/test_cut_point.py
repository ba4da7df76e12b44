from __future__ import annotations

from piwork.core.compaction.cut_point import CutPoint, find_cut_point, find_turn_start_index

from .builders import Chain, assistant, call, result, user


def _turns(n: int, size: int = 400) -> Chain:
    chain = Chain()
    for i in range(n):
        chain.msg(user("u" * size, ts=10 * i))
        chain.msg(assistant("a" * size, ts=10 * i + 1))
    return chain


def test_keeps_recent_messages_and_cuts_at_a_user_message() -> None:
    chain = _turns(4)  # each message is 100 tokens
    cut = find_cut_point(chain.entries, 0, 8, 300, strict_pi=True)
    # walking back: 7, 6, 5 reach 300 at index 5 (an assistant) -> cut there, inside turn 2
    assert cut == CutPoint(5, 4, True)
    cut = find_cut_point(chain.entries, 0, 8, 400, strict_pi=True)
    assert cut == CutPoint(4, -1, False)


def test_never_cuts_at_a_tool_result() -> None:
    chain = Chain()
    chain.msg(user("u" * 400))
    chain.msg(assistant("", call("read", path="a")))
    chain.msg(result("r" * 4000))
    chain.msg(user("v" * 400))
    # the budget is reached at the user message: kept alone
    assert find_cut_point(chain.entries, 0, 4, 10, strict_pi=True) == CutPoint(3, -1, False)
    # reached at the tool result: the cut moves to the next cut point, never onto the result
    assert find_cut_point(chain.entries, 0, 4, 150, strict_pi=True) == CutPoint(3, -1, False)
    assert find_cut_point(chain.entries, 0, 3, 10, strict_pi=False) == CutPoint(1, 0, True)


def test_nothing_to_cut_keeps_everything_from_start() -> None:
    chain = Chain()
    chain.add("model_change", provider="p", modelId="m")
    assert find_cut_point(chain.entries, 0, 1, 10, strict_pi=True) == CutPoint(0, -1, False)


def test_metadata_before_a_user_message_moves_with_the_cut() -> None:
    chain = Chain()
    chain.msg(user("u" * 400))
    chain.msg(assistant("a" * 400))
    chain.add("model_change", provider="p", modelId="m")
    chain.msg(user("v" * 400))
    chain.msg(assistant("b" * 400))
    # The reference quirk: the model change becomes the cut entry and fakes a split turn.
    assert find_cut_point(chain.entries, 0, 5, 20000, strict_pi=True) == CutPoint(0, -1, False)
    assert find_cut_point(chain.entries, 0, 5, 150, strict_pi=True) == CutPoint(2, 0, True)
    # piwork looks at the first entry with messages after the cut: a user message, a clean boundary.
    assert find_cut_point(chain.entries, 0, 5, 150, strict_pi=False) == CutPoint(2, -1, False)


def test_budget_crossed_after_the_last_cut_point() -> None:
    chain = Chain()
    chain.msg(user("u" * 400))
    chain.msg(assistant("a" * 400))
    chain.msg(user("v" * 400))
    chain.msg(assistant("", call("read", "c1", path="x"), call("read", "c2", path="y")))
    chain.msg(result("r" * 40000, "c1"))
    chain.msg(result("s" * 40000, "c2"))
    # the cut lands on the last cut point before the crossing: the call keeps its results
    assert find_cut_point(chain.entries, 0, 6, 20000, strict_pi=True) == CutPoint(3, 2, True)
    assert find_cut_point(chain.entries, 0, 6, 20000, strict_pi=False) == CutPoint(3, 2, True)


def test_turn_start_search() -> None:
    chain = _turns(2)
    assert find_turn_start_index(chain.entries, 3, 0) == 2
    assert find_turn_start_index(chain.entries, 1, 1) == -1
    compaction = Chain()
    compaction.add("compaction", summary="s", tokensBefore=1)
    assert find_turn_start_index(compaction.entries, 0, 0) == -1
