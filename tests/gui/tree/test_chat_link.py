"""chat_row_of_entry: session entries matched to the chat rows of the messages they recorded."""

from __future__ import annotations

from piwork.gui.tree.chat_link import chat_row_of_entry


def test_entries_match_their_messages_and_nothing_else() -> None:
    user = {"role": "user", "content": "hi", "timestamp": 5}
    result = {"role": "toolResult", "toolCallId": "c2", "timestamp": 7, "content": []}
    summary = {"role": "branchSummary", "summary": "went elsewhere", "fromId": "x", "timestamp": 9}
    compacted = {"role": "compactionSummary", "summary": "older turns", "tokensBefore": 10, "timestamp": 11}
    custom = {"role": "custom", "customType": "note", "content": "remember", "timestamp": 12}
    shown = [(user, 1), (result, 2), (summary, 3), (compacted, 4), (custom, 5)]
    entry = {"type": "message", "id": "a", "message": {"role": "user", "content": "hi", "timestamp": 5}}
    assert chat_row_of_entry(entry, shown) == 1
    other_call = {"type": "message", "message": {"role": "toolResult", "toolCallId": "c1", "timestamp": 7}}
    assert chat_row_of_entry(other_call, shown) is None
    same_call = {"type": "message", "message": {"role": "toolResult", "toolCallId": "c2", "timestamp": 7}}
    assert chat_row_of_entry(same_call, shown) == 2
    assert chat_row_of_entry({"type": "branch_summary", "summary": "went elsewhere"}, shown) == 3
    assert chat_row_of_entry({"type": "compaction", "summary": "older turns"}, shown) == 4
    assert (
        chat_row_of_entry({"type": "custom_message", "customType": "note", "content": "remember"}, shown) == 5
    )
    assert chat_row_of_entry({"type": "label", "targetId": "a"}, shown) is None
    assert chat_row_of_entry(None, shown) is None
