"""GraphLayout with a filter: hidden entries hang in their nearest shown ancestor's lane (exact rows,
lanes and lines), and streaming under a tip the filter shows only while it is the leaf."""

from __future__ import annotations

from typing import Any

from piwork.core.ids import SequentialIds
from piwork.core.session.graph_layout import NOTHING_SHOWN, GraphLayout, Splice, graph_shows
from piwork.core.session.records import EntryRecord
from piwork.core.session.tree import SessionTree, tree_from_values

STAMP = "2025-01-01T00:00:00.000Z"


def _entry(entry_id: str, parent: str | None, kind: str, text: str = "x") -> dict[str, Any]:
    if kind == "model_change":
        return {
            "type": kind,
            "id": entry_id,
            "parentId": parent,
            "timestamp": STAMP,
            "provider": "p",
            "modelId": "m",
        }
    if kind == "user":
        message: dict[str, Any] = {"role": "user", "content": text, "timestamp": 1}
    elif kind == "assistant":
        message = {"role": "assistant", "content": [{"type": "text", "text": text}], "stopReason": "stop"}
    elif kind == "tool_call":  # an assistant turn with only a tool call
        message = {"role": "assistant", "stopReason": "toolUse",
                   "content": [{"type": "toolCall", "id": "c", "name": "bash", "arguments": {}}]}  # fmt: skip
    else:
        message = {"role": "toolResult", "toolCallId": "c", "toolName": "bash",
                   "content": [{"type": "text", "text": text}], "isError": False}  # fmt: skip
    return {"type": "message", "id": entry_id, "parentId": parent, "timestamp": STAMP, "message": message}


def _tree(*entries: tuple[str, str | None, str]) -> SessionTree:
    return tree_from_values([_entry(*e) for e in entries], new_id=SequentialIds("n"))


def _leaf_seq(tree: SessionTree) -> int | None:
    record = tree.record(tree.leaf_id) if tree.leaf_id is not None else None
    return record.seq if record is not None else None


def _conversation(tree: SessionTree, hide_tools: bool = False) -> Any:
    """Like the tree view's filters: bookkeeping hidden, tool results hidden with `hide_tools`, and a
    tool-call turn without text shown only while it is the leaf."""

    def shows(record: EntryRecord) -> bool:
        if not graph_shows(record):
            return False
        if hide_tools and record.role == "toolResult":
            return False
        details = tree.details(record)
        pure_call = record.role == "assistant" and not details.meta.get("hasText")
        return not pure_call or record.seq == _leaf_seq(tree)

    return shows


def _user_only(record: EntryRecord) -> bool:
    return record.type == "message" and record.role == "user"


def _rows(layout: GraphLayout) -> list[tuple[str, int]]:
    return [(str(layout.tree.records[seq].id), layout.lane[seq]) for seq in layout.order]


def _seq(tree: SessionTree, entry_id: str) -> int:
    record = tree.record(entry_id)
    assert record is not None
    return record.seq


def _id(tree: SessionTree, seq: int | None) -> str | None:
    return None if seq is None else str(tree.records[seq].id)


def _branchy() -> SessionTree:
    tree = _tree(
        ("u1", None, "user"), ("a1", "u1", "tool_call"), ("r1", "a1", "tool_result"),
        ("a2", "r1", "assistant"), ("u2", "a2", "user"), ("a3", "u2", "assistant"),
        ("m1", "a2", "model_change"), ("u3", "m1", "user"), ("a4", "u3", "assistant"),
        ("u4", "r1", "user"),
    )  # fmt: skip
    tree.branch("a4")
    return tree


def _same_as_fresh(layout: GraphLayout, shows: Any) -> None:
    fresh = GraphLayout(layout.tree, shows)
    assert _rows(layout) == _rows(fresh)
    assert layout.through == fresh.through and layout.row_of == fresh.row_of
    assert layout.anchor == fresh.anchor and layout.parent == fresh.parent
    assert layout.width == fresh.width


def test_only_user_messages_hang_on_the_nearest_shown_ancestor() -> None:
    tree = _branchy()
    layout = GraphLayout(tree, _user_only)
    # u2, u3 and u4 all hang on u1: one fork of three, each later branch in a lane of its own
    assert _rows(layout) == [("u1", 0), ("u2", 0), ("u3", 1), ("u4", 2)]
    assert layout.through == [(), (1, 2), (2,), ()]
    assert layout.fork_lanes(_seq(tree, "u1")) == (1, 2)
    assert layout.width == 3
    anchors = {str(tree.records[seq].id): _id(tree, above) for seq, above in layout.anchor.items()}
    assert anchors == {"u1": "u1", "a1": "u1", "r1": "u1", "a2": "u1", "u2": "u2", "a3": "u2",
                       "m1": "u1", "u3": "u3", "a4": "u3", "u4": "u4"}  # fmt: skip
    assert _id(tree, layout.shown_seq("a4")) == "u3"


def test_without_tools_the_tool_call_turn_and_its_result_fold_into_the_lane_above() -> None:
    tree = _branchy()
    layout = GraphLayout(tree, _conversation(tree, hide_tools=True))
    # a1 (tool call, not the leaf) and r1 are hidden: a2 and u4 hang on u1; m1 is bookkeeping: u3 on a2
    assert _rows(layout) == [("u1", 0), ("a2", 0), ("u2", 0), ("a3", 0), ("u3", 2), ("a4", 2), ("u4", 1)]
    assert layout.through == [(), (1,), (1, 2), (1, 2), (1,), (1,), ()]
    assert [_id(tree, p) for p in (layout.parent[_seq(tree, x)] for x in ("a2", "u3", "u4"))] == [
        "u1", "a2", "u1"
    ]  # fmt: skip
    # the default conversation filter shows the tool result: u4 forks off r1 below a1's row
    shown = GraphLayout(tree, _conversation(tree))
    assert _rows(shown) == [("u1", 0), ("r1", 0), ("a2", 0), ("u2", 0), ("a3", 0), ("u3", 2),
                            ("a4", 2), ("u4", 1)]  # fmt: skip


def test_a_tool_call_turn_gives_its_row_to_what_comes_under_it() -> None:
    tree = _tree(("u1", None, "user"))
    shows = _conversation(tree)
    layout = GraphLayout(tree, shows)

    def stream(kind: str) -> Splice | None:
        if kind == "model_change":
            entry_id = tree.append_model_change("p", "m2")
        else:
            entry = _entry("-", None, kind)
            entry_id = tree.append_message(entry["message"])
        record = tree.record(entry_id)
        assert record is not None
        return layout.extend(record)

    assert stream("tool_call") == Splice(1, 0, 1)  # shown while it is the leaf
    assert _rows(layout) == [("u1", 0), ("n0001", 0)]
    assert stream("tool_result") == Splice(1, 1, 1)  # n1 is hidden now: its result takes the row
    assert _rows(layout) == [("u1", 0), ("n0002", 0)]
    _same_as_fresh(layout, shows)
    assert stream("tool_call") == Splice(2, 0, 1)
    assert stream("model_change") == Splice(2, 1, 0)  # the call hidden, the model change not drawn
    assert _rows(layout) == [("u1", 0), ("n0002", 0)]
    assert _id(tree, layout.shown_seq("n0004")) == "n0002"
    _same_as_fresh(layout, shows)
    assert stream("assistant") == Splice(2, 0, 1)
    assert stream("model_change") == NOTHING_SHOWN
    _same_as_fresh(layout, shows)
    assert _rows(layout) == [("u1", 0), ("n0002", 0), ("n0005", 0)]


def test_hiding_a_branch_head_or_an_entry_with_other_children_asks_for_a_new_layout() -> None:
    tree = _tree(("u1", None, "user"), ("a1", "u1", "assistant"), ("c1", "u1", "tool_call"))
    shows = _conversation(tree)
    layout = GraphLayout(tree, shows)
    assert _rows(layout) == [("u1", 0), ("a1", 0), ("c1", 1)]  # c1 heads a branch
    result = tree.append_message(_entry("-", None, "tool_result")["message"])
    assert layout.extend(tree.record(result)) is None  # type: ignore[arg-type]
    assert _rows(GraphLayout(tree, shows)) == [("u1", 0), ("a1", 0), ("n0001", 1)]
    # a leaf tool call with an earlier (hidden) entry under it: its row cannot simply go
    tree2 = _tree(("u1", None, "user"), ("c1", "u1", "tool_call"), ("m", "c1", "model_change"))
    tree2.branch("c1")
    layout2 = GraphLayout(tree2, _conversation(tree2))
    assert _rows(layout2) == [("u1", 0), ("c1", 0)]
    result = tree2.append_message(_entry("-", None, "tool_result")["message"])
    assert layout2.extend(tree2.record(result)) is None  # type: ignore[arg-type]
