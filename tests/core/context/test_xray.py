from __future__ import annotations

from pathlib import Path

import pytest

from piwork.core.context.estimate import CHARS4, TokenEstimator
from piwork.core.context.xray import xray
from piwork.core.llm.tokens import TokenCounter, Tokenizers
from piwork.core.llm.types import LlmContext, ToolSpec
from piwork.core.messages import convert_to_llm
from piwork.core.resources.context_files import ContextFile
from piwork.core.resources.skills import Skill, _source_info
from piwork.core.resources.system_prompt import SystemPromptInput, build_system_prompt, system_prompt_parts
from tests.core.context.transcripts import assistant, call, custom, result, user

TOOLS = [
    ToolSpec(
        "read", "Read a file. Ünïcode ✓", {"type": "object", "properties": {"path": {"type": "string"}}}
    ),
    ToolSpec("bash", "Run a command", {"type": "object", "properties": {"command": {"type": "string"}}}),
    ToolSpec("ls", "List", {"type": "object", "properties": {}}),
]


def prompt_input(tmp_path: Path) -> SystemPromptInput:
    skill_file = tmp_path / "skills" / "s" / "SKILL.md"
    return SystemPromptInput(
        cwd=str(tmp_path),
        active_tools=("read", "bash", "ls"),
        tool_snippets={"read": "Read files", "bash": "Run commands"},
        context_files=(
            ContextFile(str(tmp_path / "AGENTS.md"), "Use pytest.\nKeep it small."),
            ContextFile(str(tmp_path / 'sub "q"' / "AGENTS.md"), "Nested rules & <tags>."),
        ),
        skills=(
            Skill(
                name="s",
                description="does s",
                file_path=str(skill_file),
                base_dir=str(skill_file.parent),
                disable_model_invocation=False,
                source_info=_source_info(str(skill_file), str(skill_file.parent), "user"),
            ),
        ),
    )


def transcript() -> list[dict]:
    return [
        custom("piwork.contextBundle", '<context_layer kind="profile">p</context_layer>'),
        user("Fix the failing test in app.py — please"),
        assistant(
            call("c1", "read", path="app.py"), call("c2", "bash", command="pytest -q"), text="Looking."
        ),
        result("c1", "read", "def f():\n    return 1\n" * 30),
        result("c2", "bash", "F.. 1 failed", is_error=True, images=1),
        {"role": "bashExecution", "command": "ls", "output": "a\nb", "exitCode": 0, "timestamp": 1},
        {
            "role": "bashExecution",
            "command": "secret",
            "output": "x",
            "exitCode": 0,
            "excludeFromContext": True,
        },
        {"role": "compactionSummary", "summary": "earlier work", "tokensBefore": 5, "timestamp": 2},
        assistant(text="Fixed it."),
    ]


def counters(tmp_path: Path) -> list[TokenCounter]:
    tokenizers = Tokenizers(tmp_path / "agent", env={})
    tokenizers.load()
    return [tokenizers.counter_for("gpt-4"), CHARS4]


@pytest.mark.parametrize("which", [0, 1])
def test_parts_add_up_exactly_to_the_request_total(tmp_path: Path, which: int) -> None:
    counter = counters(tmp_path)[which]
    prompt = prompt_input(tmp_path)
    parts = system_prompt_parts(prompt)
    messages = transcript()
    ids = [f"e{i}" for i in range(len(messages))]
    result_ = xray(parts, TOOLS, messages, TokenEstimator(counter), ids)
    expected = counter.count_context(LlmContext(build_system_prompt(prompt), convert_to_llm(messages), TOOLS))
    assert result_.total == expected
    assert sum(p.tokens for p in result_.parts) == expected
    assert abs(sum(p.share for p in result_.parts) - 1.0) < 1e-9
    assert result_.tokenizer == counter.info.label

    kinds = [(p.kind, p.label, p.ref, p.group) for p in result_.parts]
    files = [k for k in kinds if k[0] == "context_file"]
    assert [f[2] for f in files] == [str(tmp_path / "AGENTS.md"), str(tmp_path / 'sub "q"' / "AGENTS.md")]
    assert sum(1 for k in kinds if k[0] == "skills") == 1
    assert [k[1] for k in kinds if k[0] == "tool_schema"] == ["tool: read", "tool: bash", "tool: ls"]
    messages_parts = [k for k in kinds if k[3] is not None]
    assert messages_parts == [
        ("custom", "piwork.contextBundle", "e0", 0),
        ("user", "Fix the failing test in app.py — please", "e1", 1),
        ("assistant", "Looking. (+2 tool calls)", "e2", 2),
        ("tool_result", "read app.py", "c1", 2),
        ("tool_result", "bash pytest -q", "c2", 2),
        ("bash", "! ls", "e5", 3),
        ("compaction_summary", "compaction summary", "e7", 5),
        ("assistant", "Fixed it.", "e8", 6),
    ]
    by_kind = result_.by_kind()
    assert by_kind["tool_result"] > by_kind["user"]


def test_plain_text_prompt_and_no_tools(tmp_path: Path) -> None:
    counter = counters(tmp_path)[0]
    messages = transcript()
    result_ = xray("You are helpful.", [], messages, TokenEstimator(counter))
    assert result_.total == counter.count_context(
        LlmContext("You are helpful.", convert_to_llm(messages), [])
    )
    assert result_.parts[0].label == "system prompt: prompt"


def test_counted_only_shows_what_is_counted_and_the_precount_fills_the_rest(tmp_path: Path) -> None:
    counter = counters(tmp_path)[0]
    parts = system_prompt_parts(prompt_input(tmp_path))
    messages = transcript()
    full = xray(parts, TOOLS, messages, TokenEstimator(counter))

    estimator = TokenEstimator(counter)
    first = xray(parts, TOOLS, messages, estimator, counted_only=True)
    message_parts = [p for p in first.parts if p.group is not None]
    assert message_parts and all(p.counting and p.tokens == 0 for p in message_parts)
    assert first.counting == len(message_parts)
    assert not any(p.counting for p in first.parts if p.group is None)  # prompt and tools are counted
    assert (
        first.total
        == sum(p.tokens for p in first.parts)
        == sum(p.tokens for p in full.parts if p.group is None)
    )

    assert estimator.known(messages[0]) is None
    assert estimator.precount(messages, until=0.0) is False  # a deadline already past: one counted
    assert estimator.known(messages[0]) is not None and estimator.known(messages[1]) is None
    estimator.message(messages[3])  # one counted elsewhere (the governor, an earlier refresh)
    partial = xray(parts, TOOLS, messages, estimator, counted_only=True)
    assert partial.counting == len(message_parts) - 2
    assert [p.tokens for p in partial.parts if p.ref == "c1"] == [
        p.tokens for p in full.parts if p.ref == "c1"
    ]

    assert estimator.precount(messages) is True
    assert estimator.known(messages[1]) == estimator.message(messages[1]) > 0
    after = xray(parts, TOOLS, messages, estimator, counted_only=True)
    assert after == full and after.counting == 0
    assert "counting" not in after.to_json()["parts"][0]
    assert partial.to_json()["parts"][-1]["counting"] is True


def test_counting_ahead_in_short_passes_ends_on_a_transcript_past_the_cache_limit() -> None:
    """The window counts a long session in passes of half a second: each pass keeps what the earlier ones
    counted, even when the transcript holds more messages than the estimator usually keeps."""
    import time

    messages = [
        {"role": "user", "content": [{"type": "text", "text": f"note {i}"}], "timestamp": i}
        for i in range(120_000)
    ]
    estimator = TokenEstimator()  # chars/4: cheap, so each pass below covers only part of the list
    passes = 0
    while not estimator.precount(messages, until=time.monotonic() + 0.2):
        passes += 1
        assert passes < 200, "counting ahead never reached the end of the transcript"
    assert estimator.known(messages[0]) is not None and estimator.known(messages[-1]) is not None


def test_a_transcript_counted_in_slices_goes_on_where_each_slice_stopped(tmp_path: Path) -> None:
    """``count_from`` counts from the position it is given and says where the next slice starts: the
    slices together count every message once, and the figures are those of one count of the whole."""
    tokenizers = Tokenizers(tmp_path / "agent", env={})
    tokenizers.load_for("gpt-4o")
    counter = tokenizers.counter_for("gpt-4o")
    messages = [
        {"role": "user", "content": [{"type": "text", "text": f"note {i}: " + "word " * (i % 40)}]}
        for i in range(400)
    ]
    estimator = TokenEstimator(counter)
    assert estimator.count_from(messages, 100) == len(messages)  # from 100 on; the first hundred left alone
    assert estimator.known(messages[99]) is None and estimator.known(messages[100]) is not None

    estimator = TokenEstimator(counter)
    position, starts = 0, []
    while position < len(messages):
        starts.append(position)
        position = estimator.count_from(messages, position, until=0.0)  # a deadline past: one per slice
    assert starts == list(range(len(messages)))
    whole = TokenEstimator(counter)
    assert whole.precount(messages) is True
    assert [estimator.known(m) for m in messages] == [whole.known(m) for m in messages]
    assert estimator.count_from(messages, len(messages)) == len(messages)


def test_a_long_texts_label_is_the_whole_texts_words_cut_to_a_label() -> None:
    """A label made from a long text's head is the one its whole text makes: words joined by one space
    (any whitespace, leading and trailing dropped), cut at 80 characters with an ellipsis."""
    import random

    from piwork.core.context.xray import LABEL_CHARS, _short

    def whole(text: str) -> str:
        line = " ".join(text.split())
        return line if len(line) <= LABEL_CHARS else line[: LABEL_CHARS - 1] + "…"

    rng = random.Random(5)
    pieces = ["a", "word", "中文", "😀", " ", "\n", "\t", "\u3000", "\u2028", "  \n ", "x" * 90, " " * 400]
    texts = ["", " " * 1000, "y" * 1000, " " * 319 + "z" * 5 + " " * 600, "w " * 600]
    texts += ["".join(rng.choice(pieces) for _ in range(rng.randrange(1, 400))) for _ in range(3000)]
    for text in texts:
        assert _short(text) == whole(text), repr(text[:100])


def test_message_rows_made_once_serve_the_partial_and_the_complete_xray(tmp_path: Path) -> None:
    """The rows of a message list made before counting give the X-rays built without them, partial
    (while the list is counted) and complete, part for part."""
    from piwork.core.context import xray_message_rows

    counter = counters(tmp_path)[0]
    parts = system_prompt_parts(prompt_input(tmp_path))
    messages = transcript()
    ids = [f"e{i}" for i in range(len(messages))]
    rows = xray_message_rows(messages, ids)
    assert len(rows) == sum(
        1 for p in xray(parts, TOOLS, messages, TokenEstimator(counter)).parts if p.group is not None
    )

    estimator = TokenEstimator(counter)
    estimator.count_from(messages, 0, until=0.0)  # one counted
    assert xray(parts, TOOLS, messages, estimator, ids, counted_only=True, rows=rows) == xray(
        parts, TOOLS, messages, estimator, ids, counted_only=True
    )
    assert xray(parts, TOOLS, messages, estimator, ids, rows=rows) == xray(
        parts, TOOLS, messages, TokenEstimator(counter), ids
    )
