"""Graded elision, read ranges, masked failures and the occupancy the triggers read, on hand-built
transcripts (chars/4 estimates, so sizes are exact; each model names its window)."""

from __future__ import annotations

from typing import Any

import pytest

from piwork.core.context.budget import GovernorSettings, effective_marks
from piwork.core.context.durable import deterministic_summary
from piwork.core.context.elision import classify, failure_seen
from piwork.core.context.governor import Governor, RequestShape
from piwork.core.llm.types import Model
from tests.core.context.test_governor import body, tail, tokens, tool_round
from tests.core.context.transcripts import assistant, call, result, user

WINDOW_200K = Model("m", "m", "anthropic-messages", "p", "http://127.0.0.1:9", context_window=200_000)
SHAPE = RequestShape(WINDOW_200K, "")
PRESSURE_20K = GovernorSettings(pressure_mark=20_000)  # target 10,000


def reads(n: int, size: int, prefix: str = "c") -> list[dict[str, Any]]:
    return [m for i in range(n) for m in tool_round(f"{prefix}{i}", "read", size, path=f"{prefix}{i}.py")]


def elided(outcome: Any) -> list[tuple[str, str]]:
    assert outcome.decision is not None
    return [(i.tool_call_id, i.reason) for i in outcome.decision.elided]


def with_usage(message: dict[str, Any], count: int) -> dict[str, Any]:
    message["usage"] = {"input": count, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": count}
    return message


# ---- graded elision ------------------------------------------------------------------------------------


def test_the_oldest_go_first_and_only_until_the_request_is_under_the_target() -> None:
    messages = [user("go"), *reads(8, 4_000), *tail()]  # the tail's 6 groups protect no read
    outcome = Governor(PRESSURE_20K).decide(messages, SHAPE)
    decision = outcome.decision
    assert decision is not None and decision.decision == "projected"
    assert (outcome.marks.target, tokens(messages), decision.required) == (10_000, 32_064, 8_000)
    # each stub saves 3,913 tokens: after six the request is under 10,000, so c6 and c7 stay whole
    assert elided(outcome) == [(f"c{i}", "aged") for i in range(6)]
    assert (decision.occupancy_after, decision.savings) == (8_586, 23_478)
    assert decision.occupancy_after < 10_000 <= decision.occupancy_after + decision.elided[-1].tokens
    sent = [m for m in outcome.messages if m.get("role") == "toolResult"]
    assert ["piwork elided" in m["content"][0]["text"] for m in sent] == [True] * 6 + [False] * 2


def test_recent_reads_survive_a_projection() -> None:
    messages = [user("go"), *reads(10, 2_500), *tail()]
    outcome = Governor(PRESSURE_20K).decide(messages, SHAPE)
    assert elided(outcome) == [(f"c{i}", "aged") for i in range(7)]
    assert outcome.decision is not None and outcome.decision.occupancy_after == 8_185
    whole = [
        m["toolCallId"]
        for m in outcome.messages
        if m.get("role") == "toolResult" and "piwork elided" not in m["content"][0]["text"]
    ]
    assert whole == ["c7", "c8", "c9"]


def test_under_the_pressure_mark_nothing_is_aged() -> None:
    messages = [user("go"), *reads(6, 3_000), *tail()]
    assert tokens(messages) == 18_052
    outcome = Governor(PRESSURE_20K).decide(messages, SHAPE)
    assert outcome.decision is None and outcome.messages is messages


# ---- read ranges ----------------------------------------------------------------------------------------


def test_a_read_of_another_range_does_not_supersede_and_the_stub_names_it() -> None:
    messages = [
        user("go"),
        *tool_round("a", "read", 3_000, path="big.py", offset=1, limit=200),
        *tool_round("b", "read", 3_000, path="big.py", offset=201, limit=200),
        *tool_round("c", "read", 3_000, path="big.py", offset=201, limit=200),  # the same range again
        *tool_round("d", "read", 3_000, path="other.py"),
        *tail(),
    ]
    # no pressure, so reasons alone elide; any saving is worth it here
    governor = Governor(GovernorSettings(pressure_mark=100_000, min_savings=0, savings_ratio=0.01))
    rounds = [
        m for i in range(12) for m in (assistant(call(f"x{i}", "ls", path=".")), result(f"x{i}", "ls", "."))
    ]
    outcome = governor.decide([*messages[:-6], *rounds, *messages[-6:]], SHAPE)
    assert outcome.decision is not None and "toolRounds" in outcome.decision.triggers
    assert elided(outcome) == [("b", "superseded")]  # "a" is lines 1-200 (the start), not superseded
    stub = next(m for m in outcome.messages if m.get("toolCallId") == "b")["content"][0]["text"]
    assert stub.startswith(
        "[piwork elided this tool result from the working set to keep the context small: "
        "read big.py offset=201 limit=200]\n"
    )


def test_a_later_whole_read_supersedes_a_range() -> None:
    messages = [
        user("go"),
        *tool_round("part", "read", 3_000, path="big.py", offset=400, limit=100),
        *tool_round("whole", "read", 3_000, path="big.py"),
        *tail(),
        *tail(),
    ]
    governor = Governor(GovernorSettings(pressure_mark=5_000, min_savings=0))
    assert elided(governor.decide(messages, SHAPE)) == [("part", "superseded"), ("whole", "aged")]


# ---- failures a pipe or || true masks ------------------------------------------------------------------------


PYTEST_FAIL = (
    "collected 3 items\n\ntests/test_a.py F..\n\nFAILED tests/test_a.py::test_x - assert 1 == 2\n"
    + body("f", 2_000)
)
PYTEST_PASS = "collected 3 items\n\ntests/test_a.py ...\n\n====== 3 passed in 0.12s ======\n" + body(
    "p", 2_000
)


def test_a_masked_failure_stays_until_the_same_command_passes() -> None:
    command = "cd app && uv run pytest -q 2>&1 | tail -40 || true"
    messages = [
        user("go"),
        *tool_round("t1", "bash", 0, text=PYTEST_FAIL, command=command),
        *reads(4, 5_000),
        *tail(),
    ]
    governor = Governor(PRESSURE_20K)
    first = governor.decide(messages, SHAPE)
    # unresolved (the shell exited 0, the output says FAILED): kept like an isError result
    assert elided(first) == [(f"c{i}", "aged") for i in range(3)]

    later = [*messages, *tool_round("t2", "bash", 0, text=PYTEST_PASS, command=command), *tail(), *tail()]
    second = Governor(PRESSURE_20K).decide(later, SHAPE)
    assert ("t1", "resolved-log") in elided(second)


@pytest.mark.parametrize(
    "text",
    [
        "FAILED tests/a.py::test_b - KeyError",
        "====== 1 failed, 2 passed in 0.3s ======",
        "Traceback (most recent call last):\n  File x\nValueError: no",
        "src/main.c:12:5: error: expected ';'",
        "error[E0425]: cannot find value `x`",
        "src/app.ts(3,7): error TS2322: Type 'string' is not assignable",
        "Found 2 errors in 1 file (checked 9 source files)",
        "Error: Cannot find module 'x'",
        "make: *** [Makefile:3: test] Error 1",
        "--- FAIL: TestParse (0.00s)",
        "npm ERR! Test failed.",
        "process finished, exit code 2",
    ],
)
def test_failure_lines_are_recognised(text: str) -> None:
    assert failure_seen(text)


@pytest.mark.parametrize(
    "text",
    ["====== 3 passed in 0.1s ======", "Success: no issues found in 4 source files", "All checks passed!"],
)
def test_passing_output_is_not_a_failure(text: str) -> None:
    assert not failure_seen(text)


@pytest.mark.parametrize(
    ("command", "kind"),
    [
        ("cd x && pytest", "log"),
        ("uv run pytest -q", "log"),
        ("python -m pytest tests", "log"),
        ("npm run test", "log"),
        ("pnpm run test", "log"),
        ("yarn run test", "log"),
        ("cargo test", "log"),
        ("go test ./...", "log"),
        ("ruff check .", "log"),
        ("mypy piwork", "log"),
        ("tsc --noEmit", "log"),
        ("git --no-pager diff", "read"),
        ("nl -ba src/app.py", "read"),
        ("pytest -q | tail -5", "log"),
        ("echo done", None),
        ("python tool.py", None),
    ],
)
def test_recognised_commands(command: str, kind: str | None) -> None:
    assert classify("bash", {"command": command}) == kind


def test_the_deterministic_summary_lists_a_masked_failure_and_every_command() -> None:
    command = "pytest -q || true"
    messages = [
        user("fix it"),
        assistant(call("t1", "bash", command=command)),
        result("t1", "bash", "FAILED tests/test_a.py::test_x - assert 1 == 2\n1 failed"),
        assistant(call("t2", "bash", command="ruff check .")),
        result("t2", "bash", "All checks passed!"),
        assistant(text="Still failing; next I look at test_x."),
    ]
    summary = deterministic_summary(messages, None, ())
    assert "## Commands run\n- `pytest -q || true`: failed\n- `ruff check .`: passed" in summary
    assert "## Unresolved errors\n### bash pytest -q || true\n```\nFAILED tests/test_a.py::test_x" in summary


# ---- occupancy: the provider's count plus the estimate of what came after --------------------------------------


def test_before_any_usage_the_estimate_alone() -> None:
    messages = [user("go"), *reads(2, 1_000), *tail()]
    outcome = Governor().decide(messages, SHAPE)
    assert (outcome.source, outcome.occupancy) == ("estimate", tokens(messages))


def test_the_provider_count_plus_what_came_after_triggers_pressure() -> None:
    model = Model("m", "m", "anthropic-messages", "p", "http://127.0.0.1:9", context_window=65_536)
    shape = RequestShape(model, "")
    marks = effective_marks(model)
    assert (marks.pressure, marks.target) == (34_406, 17_203)
    messages = [user("go"), *reads(6, 4_000), *tail()]
    governor = Governor()
    first = governor.decide(list(messages), shape)  # 24K by estimate: under the pressure mark
    assert first.decision is None and first.source == "estimate"
    # the provider counted that request 40% higher (another tokenizer): 34,000 with the reply
    reply = with_usage(assistant(text="noted"), round(1.4 * first.sent_tokens))
    grown = [*messages, reply, *tool_round("n", "read", 1_000, path="new.py")]
    outcome = governor.decide(grown, shape)
    estimate_after = tokens(grown) - tokens(messages) - tokens([reply])
    assert outcome.source == "provider"
    occupancy_before = round(1.4 * first.sent_tokens) + estimate_after
    assert outcome.decision is not None and outcome.decision.triggers[0] == "pressure"
    # the estimate alone (about 25K) would not have reached the mark
    assert tokens(grown) < marks.pressure <= occupancy_before
    assert outcome.occupancy == occupancy_before - outcome.decision.savings


def test_a_provider_count_below_the_estimate_is_believed_as_compaction_believes_it() -> None:
    # the provider counted the request far lower than chars/4 does: the triggers read its count (plus
    # the estimate of what came after), as host compaction does, never the estimate alone
    messages = [user("go"), *reads(2, 4_000), with_usage(assistant(text="ok"), 120), *tail()]
    outcome = Governor().decide(messages, SHAPE)
    after = messages[len(messages) - len(tail()) :]
    assert (outcome.source, outcome.occupancy) == ("provider", 120 + tokens(after))
    assert outcome.occupancy < tokens(messages) // 2


def test_preview_decides_without_keeping_anything() -> None:
    messages = [user("go"), *reads(8, 4_000), *tail()]
    governor = Governor(PRESSURE_20K)
    preview = governor.preview(messages, SHAPE)
    assert preview.decision is None  # nothing logged
    assert governor.sticky_ids == () and governor.log == [] and governor.calls == 0
    decided = governor.decide(messages, SHAPE)
    assert decided.occupancy == preview.occupancy and decided.decision is not None
    assert [m is n for m, n in zip(decided.messages, preview.messages, strict=True)].count(False) == 0


# ---- a tool call a crash left without its result ------------------------------------------------------------


def test_a_crash_made_orphan_is_repaired_as_the_converter_would_and_the_governor_keeps_working() -> None:
    crashed = assistant(call("lost", "bash", command="pytest -q"))
    messages = [user("go"), crashed, user("piwork was restarted; go on"), *reads(8, 4_000), *tail()]
    governor = Governor(PRESSURE_20K)
    first = governor.decide(list(messages), SHAPE)
    assert first.decision is not None and first.decision.decision == "projected"
    repaired = first.messages[2]
    assert first.messages[1] is crashed and repaired["toolCallId"] == "lost"
    assert (repaired["role"], repaired["isError"], repaired["content"][0]["text"]) == (
        "toolResult",
        True,
        "No result was recorded for this tool call.",
    )
    assert len(first.messages) == len(messages) + 1
    # later requests: the same repair object, the prefix unchanged (append-only), the governor still on
    grown = [*messages, user("more"), assistant(text="sure")]
    second = governor.decide(grown, SHAPE)
    assert second.messages[2] is repaired
    assert second.messages[: len(first.messages)] == first.messages
    assert second.decision is None or second.decision.decision != "fail-closed"


def test_a_result_without_its_call_still_fails_closed() -> None:
    messages = [user("go"), result("stray", "read", "x"), *reads(8, 4_000), *tail()]
    outcome = Governor(PRESSURE_20K).decide(messages, SHAPE)
    assert outcome.decision is not None and outcome.decision.decision == "fail-closed"
    assert outcome.messages is messages
