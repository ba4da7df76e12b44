from __future__ import annotations

from piwork.core.compaction.prepare import prepare_compaction
from piwork.core.compaction.settings import CompactionSettings

from .builders import Chain, assistant, call, result, user

KEEP_100 = CompactionSettings(keep_recent_tokens=100)


def _first_char(message: dict) -> str:
    content = message["content"]
    return str(content[0] if isinstance(content, str) else content[0]["text"][0])


def test_declines_when_already_compacted_or_too_small() -> None:
    chain = Chain()
    chain.msg(user("hi"))
    assert prepare_compaction(chain.entries, KEEP_100, strict_pi=True) is None  # nothing before the cut
    chain.add("compaction", summary="s", firstKeptEntryId="e1", tokensBefore=5)
    assert prepare_compaction(chain.entries, KEEP_100, strict_pi=True) is None
    assert prepare_compaction([], KEEP_100, strict_pi=True) is None


def test_first_compaction_summarizes_history_before_the_cut() -> None:
    chain = Chain()
    chain.msg(user("u" * 400))
    chain.msg(assistant("", call("read", path="notes.md")))
    chain.msg(result("r" * 400))
    chain.msg(user("v" * 400))
    chain.msg(assistant("b" * 400))
    prep = prepare_compaction(chain.entries, KEEP_100, strict_pi=True)
    assert prep is not None
    assert prep.first_kept_entry_id == "e5"
    assert prep.is_split_turn and prep.turn_prefix_messages == [chain.entries[3]["message"]]
    assert [m["role"] for m in prep.messages_to_summarize] == ["user", "assistant", "toolResult"]
    assert prep.previous_summary is None
    assert prep.file_lists.read_files == ["notes.md"]
    assert prep.tokens_before == 100 + 2 + 100 + 100 + 100 + 4  # all estimated, no usage


def test_repeated_compaction_starts_at_previous_kept_boundary_and_carries_files() -> None:
    chain = Chain()
    chain.msg(user("u" * 400))
    chain.msg(assistant("a" * 400))
    chain.msg(user("v" * 400))
    chain.add(
        "compaction",
        summary="earlier",
        firstKeptEntryId="e3",
        tokensBefore=300,
        details={"readFiles": ["old.txt"], "modifiedFiles": ["mod.txt"]},
    )
    chain.msg(assistant("b" * 400))
    chain.msg(user("w" * 400))
    chain.msg(assistant("c" * 400))
    prep = prepare_compaction(chain.entries, KEEP_100, strict_pi=True)
    assert prep is not None
    assert prep.previous_summary == "earlier"
    # e3 (kept by the previous compaction) is summarized again; the compaction entry itself is not.
    assert [_first_char(m) for m in prep.messages_to_summarize] == ["v", "b"]
    # the cut lands on the last assistant message: its user message is the split turn's prefix
    assert prep.first_kept_entry_id == "e7"
    assert prep.is_split_turn and [_first_char(m) for m in prep.turn_prefix_messages] == ["w"]
    assert prep.file_lists.to_details() == {"readFiles": ["old.txt"], "modifiedFiles": ["mod.txt"]}


def test_hook_supplied_details_are_not_carried() -> None:
    chain = Chain()
    chain.msg(user("u" * 400))
    chain.add(
        "compaction",
        summary="s",
        firstKeptEntryId="e1",
        tokensBefore=1,
        fromHook=True,
        details={"readFiles": ["hook.txt"], "modifiedFiles": []},
    )
    chain.msg(assistant("a" * 400))
    chain.msg(user("v" * 400))
    prep = prepare_compaction(chain.entries, KEEP_100, strict_pi=True)
    assert prep is not None and prep.file_lists.read_files == []


def test_unresolvable_first_kept_id_starts_after_the_compaction() -> None:
    chain = Chain()
    chain.msg(user("u" * 400))
    chain.add("compaction", summary="s", firstKeptEntryId="gone", tokensBefore=1)
    chain.msg(user("v" * 400))
    chain.msg(assistant("a" * 400))
    chain.msg(user("w" * 400))
    prep = prepare_compaction(chain.entries, KEEP_100, strict_pi=True)
    assert prep is not None
    assert [m["content"] for m in prep.messages_to_summarize if m["role"] == "user"] == ["v" * 400]


def test_retained_tail_is_summarized_again_by_piwork_only() -> None:
    chain = Chain()
    chain.msg(user("u" * 400))
    chain.add("compaction", summary="s", tokensBefore=1, retainedTail=[user("kept by tail")])
    chain.msg(user("v" * 400))
    chain.msg(assistant("a" * 400))
    chain.msg(user("w" * 400))
    strict = prepare_compaction(chain.entries, KEEP_100, strict_pi=True)
    relaxed = prepare_compaction(chain.entries, KEEP_100, strict_pi=False)
    assert strict is not None and relaxed is not None
    assert relaxed.messages_to_summarize[0]["content"] == "kept by tail"
    assert relaxed.messages_to_summarize[1:] == strict.messages_to_summarize
