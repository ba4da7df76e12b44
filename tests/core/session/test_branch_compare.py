"""compare_branches and path_activity on a session recorded by real agent runs (loopback provider,
real tools): the files each branch read and changed with the edit's diff, commands and exit codes,
tokens, cost and last answers, from the common ancestor."""

from __future__ import annotations

from pathlib import Path

import pytest

from piwork.core.session.branch_activity import branch_activity
from piwork.core.session.branch_compare import compare_branches, conversation_leaf, path_activity
from piwork.core.session.store import open_session
from piwork.core.session.tree import EntryNotFound
from tests.support.branch_runs import RecordedBranches, record_two_branches


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> RecordedBranches:
    return record_two_branches(tmp_path_factory.mktemp("branches"))


def test_two_branches_side_by_side_from_their_common_ancestor(recorded: RecordedBranches) -> None:
    session = open_session(recorded.path)
    ids = recorded.ids
    result = compare_branches(session.tree, ids["tip_a"], ids["tip_b"])
    assert result.ancestor_id == ids["fork"]
    a, b = result.a, result.b
    # A: one prompt, four tool turns and the answer; B starts with the branch summary of A
    assert (a.user_messages, a.assistant_messages, a.tool_results) == (1, 5, 4)
    assert b.entry_ids[0] == ids["summary"] and (b.user_messages, b.tool_results) == (1, 3)
    assert [(t.path, t.action, t.failed) for t in a.touches] == [
        ("hello.py", "write", False), ("hello.py", "read", False), ("hello.py", "edit", False),
    ]  # fmt: skip
    edit = a.touches[2]
    assert edit.result_entry_id == ids["edit_result"] and edit.diff == "-1 print('hi')\n+1 print('hello')"
    assert a.changed_files() == ["hello.py"] and a.read_files() == ["hello.py"]
    assert [(c.command, c.exit_code, c.status) for c in a.commands] == [("python3 hello.py", 0, "exit 0")]
    assert [(t.path, t.action, t.failed) for t in b.touches] == [
        ("notes/plan.txt", "write", False), ("nope.txt", "read", True),
    ]  # fmt: skip
    assert b.changed_files() == ["notes/plan.txt"]
    failed = b.commands[0]
    assert (failed.exit_code, failed.status, failed.entry_id) == (2, "exit 2", ids["failed_bash"])
    assert not failed.ok
    # tokens from the scripted usage: A's five replies; B's four replies plus the summary's request
    assert a.tokens["input"] == 120 + 140 + 160 + 180 + 200 and a.tokens["output"] == 20 + 10 + 30 + 10 + 12
    assert b.tokens["input"] == 300 + 90 + 110 + 120 + 130
    assert a.cost == pytest.approx((800 * 3 + 82 * 15) / 1e6)  # models.json prices per million tokens
    assert b.cost == pytest.approx((750 * 3 + 84 * 15) / 1e6)
    assert a.last_answer == "Done: hello.py prints hello." and a.last_answer_id == ids["tip_a"]
    assert b.last_answer == "Plan B written to notes/plan.txt."
    session.close()


def test_an_entry_and_its_ancestor_and_unknown_ids(recorded: RecordedBranches) -> None:
    session = open_session(recorded.path)
    ids = recorded.ids
    result = compare_branches(session.tree, ids["fork"], ids["tip_a"])
    assert result.ancestor_id == ids["fork"] and result.b_contains_a and not result.a_contains_b
    assert result.a.entry_ids == [] and result.a.last_answer is None
    with pytest.raises(EntryNotFound):
        compare_branches(session.tree, ids["fork"], "nope")
    session.close()


def test_the_current_position_skips_bookkeeping_at_the_leaf(
    recorded: RecordedBranches, tmp_path: Path
) -> None:
    copy = tmp_path / "s.jsonl"
    copy.write_bytes(recorded.path.read_bytes())
    session = open_session(copy, writable=True)
    tree = session.tree
    assert conversation_leaf(tree) == recorded.ids["tip_b"]
    tree.set_label(recorded.ids["fork"], "start")  # the label entry becomes the leaf
    assert tree.leaf_id != recorded.ids["tip_b"] and conversation_leaf(tree) == recorded.ids["tip_b"]
    tree.reset_leaf()
    assert conversation_leaf(tree) is None
    session.close()


def test_files_touched_on_the_active_path_and_on_any_branch(recorded: RecordedBranches) -> None:
    session = open_session(recorded.path)
    ids = recorded.ids
    active = path_activity(session.tree)  # leaf = tip of B
    assert [f.display for f in active.files()] == ["notes/plan.txt", "nope.txt"]
    branch_a = path_activity(session.tree, ids["tip_a"])
    (hello,) = branch_a.files()
    assert hello.actions == ["write", "read", "edit"] and hello.changed
    assert hello.key == str(recorded.project / "hello.py")
    assert [t.diff is not None for t in hello.touches] == [False, False, True]
    assert hello.touches[0].content == "print('hi')\n" and hello.touches[2].content is None
    session.close()


def test_results_after_the_fork_are_paired_with_calls_before_it(tmp_path: Path) -> None:
    call = {"type": "message", "id": "c", "parentId": None, "message": {"role": "assistant", "content": [
        {"type": "toolCall", "id": "t1", "name": "edit", "arguments": {"path": "/x/a.py"}}]}}  # fmt: skip
    result = {"type": "message", "id": "r", "parentId": "c", "message": {"role": "toolResult", "toolCallId": "t1",
              "toolName": "edit", "isError": False, "details": {"diff": "+1 x"}, "content": []}}  # fmt: skip
    activity = branch_activity([result], None, before=[call])
    assert [(t.path, t.diff, t.result_entry_id) for t in activity.touches] == [("/x/a.py", "+1 x", "r")]
    assert activity.assistant_messages == 0
    unanswered = branch_activity([call])
    assert [(t.failed, t.result_entry_id) for t in unanswered.touches] == [(True, None)]
