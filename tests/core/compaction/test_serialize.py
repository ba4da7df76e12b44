from __future__ import annotations

import pytest

from piwork.core.compaction.serialize import cap_tool_result, serialize_conversation

from .builders import assistant, call, result, user


def test_roles_and_parts_in_order() -> None:
    thinking = {"type": "thinking", "thinking": "hmm"}
    messages = [
        user("hello"),
        {"role": "user", "content": [{"type": "image", "data": "x"}]},  # no text: nothing
        {
            **assistant("one"),
            "content": [
                thinking,
                {"type": "text", "text": "one"},
                {"type": "text", "text": "two"},
                call("edit", path="a.py", n=1.0, o={"k": None}),
            ],
        },
        result("out"),
    ]
    assert serialize_conversation(messages) == (
        "[User]: hello\n\n"  # thinking is left out
        "[Assistant]: one\ntwo\n\n"
        '[Assistant tool calls]: edit(path="a.py", n=1, o={"k":null})\n\n'
        "[Tool result]: out"
    )


def test_tool_results_are_capped_in_utf16_units() -> None:
    text = "a" * 1999 + "😀" + "tail"
    capped = cap_tool_result(text)
    # the pair that does not fit whole is left out; the count is of the units beyond the cap
    assert capped == "a" * 1999 + "\n\n[... 5 more characters truncated]"
    assert capped.endswith("\n\n[... 5 more characters truncated]")
    assert cap_tool_result("b" * 2000) == "b" * 2000


def test_assistant_string_content_is_rejected() -> None:
    with pytest.raises(TypeError):
        serialize_conversation([{"role": "assistant", "content": "text"}])
