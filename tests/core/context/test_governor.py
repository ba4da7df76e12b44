"""The governor's decision procedure on hand-built transcripts (chars/4 estimates, so sizes are exact)."""

from __future__ import annotations

import json
from typing import Any

from piwork.core.context.budget import GovernorSettings
from piwork.core.context.estimate import CHARS4
from piwork.core.context.governor import Governor, RequestShape
from piwork.core.context.records import ElidedItem
from piwork.core.llm.types import CostTier, Model, ModelCost
from piwork.core.messages import convert_to_llm
from tests.core.context.transcripts import assistant, call, custom, result, user

MODEL = Model("m", "m", "anthropic-messages", "p", "http://127.0.0.1:9", context_window=200_000)
SHAPE = RequestShape(MODEL, "")
LOW_PRESSURE = GovernorSettings(pressure_mark=20_000)


def body(tag: str, tokens: int) -> str:
    """Text of exactly ``tokens`` chars/4 tokens, unique per ``tag``."""
    return (tag + ":" + "x" * (4 * tokens))[: 4 * tokens]


def tool_round(
    call_id: str, tool: str, tokens: int, *, text: str | None = None, error: bool = False, **args: Any
) -> list[dict]:
    return [
        assistant(call(call_id, tool, **args)),
        result(call_id, tool, text if text is not None else body(call_id, tokens), is_error=error),
    ]


def tail(n: int = 6) -> list[dict]:
    """``n`` small groups (the protected tail)."""
    out: list[dict] = []
    for i in range(n // 2):
        out += [user(f"question {i}"), assistant(text=f"answer {i}")]
    return out


def tokens(messages: list[dict]) -> int:
    return sum(CHARS4.count_message(m) for m in convert_to_llm(messages))


def sent_json(messages: list[dict]) -> list[str]:
    return [json.dumps(m, sort_keys=True) for m in convert_to_llm(messages)]


def test_disabled_sends_the_list_unchanged() -> None:
    messages = [user("go"), *tool_round("c1", "read", 30_000, path="a.py"), *tail()]
    governor = Governor(GovernorSettings(enabled=False, pressure_mark=20_000))
    outcome = governor.decide(messages, SHAPE)
    assert outcome.messages is messages and outcome.decision is None


def test_no_trigger_sends_the_previous_state_and_logs_nothing() -> None:
    messages = [user("go"), *tool_round("c1", "read", 5_000, path="a.py"), *tail()]
    governor = Governor()
    outcome = governor.decide(messages, SHAPE)
    assert outcome.messages is messages
    assert outcome.decision is None and governor.log == []
    assert outcome.transcript_tokens == outcome.sent_tokens == tokens(messages)


def test_fail_closed_on_a_transcript_orphan_and_sticky_state_is_cleared() -> None:
    messages = [
        user("go"),
        *tool_round("c1", "read", 30_000, path="a.py"),
        *tool_round("c2", "read", 1000, path="a.py"),
        *tail(),
    ]
    governor = Governor(LOW_PRESSURE)
    first = governor.decide(messages, SHAPE)
    assert first.decision is not None and first.decision.decision == "projected"
    assert governor.sticky_ids == ("c1",)  # under the target after the oldest: the recent read stays
    governor.mark_saved()
    broken = [*messages, result("zz", "read", "stray")]
    outcome = governor.decide(broken, SHAPE)
    assert outcome.messages is broken
    assert outcome.decision is not None
    assert (outcome.decision.decision, outcome.decision.detail) == (
        "fail-closed",
        "transcript orphan: tool result without its call (zz)",
    )
    assert governor.sticky_ids == ()
    assert governor.state_to_save() == {"version": 1, "toolCallIds": []}


def test_fail_closed_on_a_broken_candidate_sends_the_previous_state() -> None:
    messages = [
        user("go"),
        *tool_round("c1", "read", 30_000, path="a.py"),
        *tool_round("c2", "read", 1000, path="a.py"),
        *tail(),
    ]

    def drops_the_id(message: dict, text: str) -> dict:
        copy = {k: v for k, v in message.items() if k != "toolCallId"}
        copy["content"] = [{"type": "text", "text": text}]
        return copy

    governor = Governor(LOW_PRESSURE, elide=drops_the_id)
    outcome = governor.decide(messages, SHAPE)
    assert outcome.messages is messages
    assert outcome.decision is not None
    assert (outcome.decision.decision, outcome.decision.detail) == ("fail-closed", "candidate")
    assert governor.sticky_ids == ()


def test_a_phase_boundary_forms_the_working_set_anew_even_when_the_saving_is_small() -> None:
    scouting = [
        user("scout"),
        *[m for i in range(3) for m in tool_round(f"s{i}", "read", 1_500, path=f"s{i}.py")],
    ]
    governor = Governor()
    first = governor.decide(list(scouting), SHAPE)
    assert first.decision is None  # 4.5K tokens on a 200K window: no trigger
    planning = [*scouting, custom("piwork.contextBundle", "phase: plan"), user("plan it"), *tail()]
    outcome = governor.decide(list(planning), SHAPE)
    decision = outcome.decision
    assert decision is not None and decision.triggers == ("boundary",)
    # 4,500 tokens saved, under the 8,000 a projection needs elsewhere: the phase change re-forms anyway
    assert (decision.decision, decision.detail, decision.required) == (
        "projected",
        "formed anew at the boundary",
        8_000,
    )
    assert [(i.tool_call_id, i.reason) for i in decision.elided] == [
        (f"s{i}", "earlier-phase") for i in range(3)
    ]
    assert decision.savings == tokens(planning) - tokens(outcome.messages) > 4_000
    assert governor.sticky_ids == ("s0", "s1", "s2")
    # the next call is no boundary: the same stubs, the request only grows
    grown = [*planning, *tool_round("p1", "read", 1_500, path="p1.py"), *tail()]
    again = governor.decide(list(grown), SHAPE)
    assert again.decision is None
    assert sent_json(again.messages)[: len(outcome.messages)] == sent_json(outcome.messages)


def test_a_boundary_with_nothing_of_an_earlier_phase_still_needs_the_saving() -> None:
    # a task's first call: its start is a boundary, but only results of this phase are there (a repeat of
    # one of them is eligible): below the threshold nothing is projected
    messages = [
        custom("piwork.contextBundle", "task"),
        user("go"),
        *tool_round("a", "read", 1_500, path="a.py"),
        *tool_round("b", "read", 1_500, path="a.py"),
        *tail(),
    ]
    outcome = Governor().decide(messages, SHAPE)
    decision = outcome.decision
    assert decision is not None and "boundary" in decision.triggers
    assert (decision.decision, decision.detail) == ("no-op", "below threshold")
    assert outcome.messages is messages


def test_every_reason_code_and_the_keep_rules() -> None:
    verify = "pytest -q"
    messages = [
        user("task one"),
        *tool_round("old", "grep", 3_000, pattern="TODO", path="src"),  # before the boundary
        custom("piwork.contextBundle", "task two"),
        user("task two"),
        *tool_round("r1", "read", 3_000, path="a.py"),  # read again later -> superseded
        *tool_round("r2", "read", 3_000, path="b.py"),  # edited later -> superseded
        *tool_round("e1", "edit", 3_000, path="b.py", oldText="x", newText="y"),  # edit results are kept
        *tool_round("g1", "bash", 3_000, text=body("same", 3_000), command="cat c.txt"),  # repeated
        *tool_round("t1", "bash", 3_000, error=True, command="make test"),  # resolved-log
        *tool_round("t2", "bash", 3_000, command="make test"),  # latest run of a runner, aged
        *tool_round("v1", "bash", 3_000, error=True, command=verify),  # verifier: older run, resolved
        *tool_round("v2", "bash", 3_000, command=verify),  # most recent verifier run: kept
        *tool_round("u1", "bash", 3_000, error=True, command="ls missing"),  # unresolved error: kept
        *tool_round("s1", "read", 100, path="small.py"),  # under MIN_ELIDE_TOKENS: kept
        *tool_round("l1", "ls", 3_000, path="."),  # aged
        *tool_round("w1", "write", 3_000, path="new.py", content="..."),  # write results are kept
        *tool_round("r3", "read", 3_000, path="a.py"),
        *tool_round("g2", "bash", 3_000, text=body("same", 3_000), command="cat d.txt"),
        *tail(),
    ]
    governor = Governor(LOW_PRESSURE, verifiers=lambda: [verify])
    outcome = governor.decide(messages, SHAPE)
    decision = outcome.decision
    assert decision is not None and decision.decision == "projected"
    assert decision.triggers == ("pressure", "boundary", "toolRounds", "repeat")
    assert [(i.tool_call_id, i.reason) for i in decision.elided] == [
        ("old", "earlier-phase"),
        ("r1", "superseded"),
        ("r2", "superseded"),
        ("g1", "repeated"),
        ("t1", "resolved-log"),
        ("t2", "aged"),
        ("v1", "resolved-log"),
        ("l1", "aged"),
        ("r3", "aged"),
        ("g2", "aged"),
    ]
    assert decision.elided[0] == ElidedItem("old", "grep", "TODO in src", 3_000, "earlier-phase")
    assert decision.elided[3] == ElidedItem("g1", "bash", "cat c.txt", 3_000, "repeated")
    assert decision.occupancy_before == tokens(messages)
    assert decision.occupancy_after == tokens(outcome.messages)
    assert decision.savings == decision.occupancy_before - decision.occupancy_after
    assert (decision.occupancy_before, decision.required) == (42_231, 8_000)
    kept = {"e1", "v2", "u1", "s1", "w1"}
    for original, sent in zip(messages, outcome.messages, strict=True):
        if original.get("toolCallId") in kept or original.get("role") != "toolResult":
            assert sent is original
        else:
            assert sent is not original
            assert (sent["toolCallId"], sent["toolName"], sent["isError"]) == (
                original["toolCallId"],
                original["toolName"],
                original["isError"],
            )
            assert len(sent["content"]) == 1 and sent["content"][0]["type"] == "text"


def test_stub_text() -> None:
    text = "line\n" * 2_999 + "end"
    messages = [user("go"), *tool_round("c1", "read", 0, text=text, path="src/app.py"), *tail()]
    messages[2]["content"].append({"type": "image", "data": "AAAA", "mimeType": "image/png"})
    outcome = Governor(GovernorSettings(pressure_mark=1_000, min_savings=0)).decide(messages, SHAPE)
    stub = outcome.messages[2]["content"][0]["text"]
    assert stub == (
        "[piwork elided this tool result from the working set to keep the context small: read src/app.py]\n"
        "Original output: 3000 lines, 14998 bytes, ≈4950 tokens, 1 image dropped.\n"
        "Reason: aged (the context is under pressure and this result is older than the recent turns).\n"
        "To see it again, read the file again (it may have changed since). "
        "The session file keeps the full original."
    )


def test_protected_tail_is_byte_identical() -> None:
    rounds = [m for i in range(8) for m in tool_round(f"c{i}", "read", 5_000, path=f"f{i}.py")]
    messages = [user("go"), *rounds]
    before = sent_json(messages)
    governor = Governor(LOW_PRESSURE)
    outcome = governor.decide(messages, SHAPE)
    assert outcome.decision is not None and outcome.decision.decision == "projected"
    after = sent_json(outcome.messages)
    # the last 6 groups are the last 6 rounds (assistant + result each): 12 messages
    assert after[-12:] == before[-12:]
    assert all(a is b for a, b in zip(outcome.messages[-12:], messages[-12:], strict=True))
    assert [i.tool_call_id for i in outcome.decision.elided] == ["c0", "c1"]


def test_below_threshold_is_a_no_op() -> None:
    messages = [
        user("go"),
        *tool_round("c1", "read", 7_000, path="a.py"),
        *tool_round("c2", "read", 30_000, path="b.py"),  # first of the protected groups
        *tail(4),
        user("and?"),
    ]
    governor = Governor(LOW_PRESSURE)
    outcome = governor.decide(messages, SHAPE)
    assert outcome.messages is messages
    decision = outcome.decision
    assert decision is not None
    assert (decision.decision, decision.detail, decision.required) == ("no-op", "below threshold", 8_000)
    assert 0 < decision.savings < 8_000
    assert governor.sticky_ids == ()


def test_required_follows_the_occupancy() -> None:
    for occupancy, required in ((40_000, 8_000), (100_000, 15_000), (180_000, 20_000)):
        filler = (
            occupancy
            - 30_000
            - tokens([user("go"), *tail()])
            - 2 * tokens([assistant(call("x", "read", path="a.py"))])
        )
        messages = [
            user("go"),
            *tool_round("c1", "read", 30_000, path="a.py"),
            *tool_round("c2", "read", filler, path="b.py"),
            *tail(),
        ]
        messages[2]["content"][0]["text"] = body("c1", 30_000)
        outcome = Governor(GovernorSettings(pressure_mark=1_000, prompt_ceiling=190_000)).decide(
            messages, SHAPE
        )
        assert outcome.decision is not None
        assert outcome.decision.occupancy_before == occupancy
        assert outcome.decision.required == required


def test_sticky_elisions_keep_later_requests_append_only() -> None:
    messages = [user("go")]
    for i in range(6):
        messages += tool_round(f"c{i}", "read", 6_000, path=f"f{i}.py")
    messages += tail()
    governor = Governor(LOW_PRESSURE)
    first = governor.decide(list(messages), SHAPE)
    assert first.decision is not None and first.decision.decision == "projected"
    requests = [sent_json(first.messages)]
    for step in range(2):
        messages += [user(f"more {step}"), assistant(text=f"ok {step}")]
        outcome = governor.decide(list(messages), SHAPE)
        requests.append(sent_json(outcome.messages))
        assert outcome.decision is None or outcome.decision.decision == "no-op"
    assert requests[1][: len(requests[0])] == requests[0]
    assert requests[2][: len(requests[1])] == requests[1]


def test_state_entry_round_trip_restores_the_elisions() -> None:
    messages = [
        user("go"),
        *tool_round("c1", "read", 30_000, path="a.py"),
        *tool_round("c2", "read", 1000, path="a.py"),
        *tail(),
    ]
    governor = Governor(LOW_PRESSURE)
    projected = governor.decide(messages, SHAPE)
    data = governor.state_to_save()
    assert data == {"version": 1, "toolCallIds": ["c1"]}
    governor.mark_saved()
    assert governor.state_to_save() is None
    reopened = Governor()  # default marks: no trigger on this small transcript
    reopened.restore(json.loads(json.dumps(data)))
    outcome = reopened.decide(messages, SHAPE)
    assert outcome.decision is None
    assert sent_json(outcome.messages) == sent_json(projected.messages)


def test_forced_mode_accepts_a_small_saving_at_the_ceiling() -> None:
    small = GovernorSettings(prompt_ceiling=50_000)
    messages = [
        user("go"),
        *tool_round("c1", "read", 2_000, path="a.py"),
        *tool_round("big", "bash", 49_000, command="echo hi"),
        *tail(),
    ]
    outcome = Governor(small).decide(messages, SHAPE)
    decision = outcome.decision
    assert decision is not None
    assert decision.triggers == ("pressure", "ceiling")
    assert decision.required == 8_000 and 0 < decision.savings < 8_000
    assert decision.decision == "forced"
    assert [i.tool_call_id for i in decision.elided] == ["c1"]


def test_over_ceiling_and_context_limit() -> None:
    messages = [user("go"), *tool_round("big", "bash", 120_000, command="echo hi"), *tail()]
    outcome = Governor(GovernorSettings(prompt_ceiling=100_000)).decide(messages, SHAPE)
    assert outcome.decision is not None
    assert (outcome.decision.decision, outcome.withhold) == ("over-ceiling", False)
    priced = Model(
        "m",
        "m",
        "anthropic-messages",
        "p",
        "http://127.0.0.1:9",
        context_window=400_000,
        cost=ModelCost(tiers=(CostTier(110_000, 1, 1, 1, 1),)),
    )
    limited = Governor(GovernorSettings(prompt_ceiling=100_000)).decide(messages, RequestShape(priced, ""))
    assert limited.decision is not None
    assert (limited.decision.decision, limited.withhold) == ("context-limit", True)
    allowed = Governor(GovernorSettings(prompt_ceiling=100_000, allow_pricing_zone=True))
    sent = allowed.decide(messages, RequestShape(priced, ""))
    assert sent.decision is not None and (sent.decision.decision, sent.withhold) == ("over-ceiling", False)


def test_repeat_trigger_fires_once_for_new_repeated_output() -> None:
    messages = [user("go"), *tool_round("a", "read", 500, text=body("same", 500), path="x.py"), *tail()]
    governor = Governor()
    assert governor.decide(messages, SHAPE).decision is None
    messages += tool_round("b", "grep", 500, text=body("same", 500), pattern="q")
    outcome = governor.decide(messages, SHAPE)
    assert outcome.decision is not None and outcome.decision.triggers == ("repeat",)
    assert governor.decide(messages, SHAPE).decision is None


def test_a_decision_prepared_by_a_preview_is_the_decision_made_cold() -> None:
    """The count-ahead step previews a list the governor has not scanned, in a worker; the decision on the
    event loop after it is exactly the one a governor makes without that step."""
    messages = [user("go"), *[m for i in range(80) for m in tool_round(f"c{i}", "read", 600, path=f"{i}.py")]]
    messages += tail()
    cold, warm = Governor(LOW_PRESSURE), Governor(LOW_PRESSURE)
    assert not warm.prepared(messages)
    preview = warm.preview(messages, SHAPE)
    assert warm.prepared(messages) and not warm.prepared([*messages, *tail(200)])
    assert warm.sticky_ids == () and warm.log == []  # the preview kept no decision
    a, b = cold.decide(list(messages), SHAPE), warm.decide(list(messages), SHAPE)
    assert a.decision is not None and b.decision is not None and a.decision.decision == "projected"
    assert (b.decision.triggers, b.decision.elided, b.decision.savings, b.sent_tokens) == (
        a.decision.triggers,
        a.decision.elided,
        a.decision.savings,
        a.sent_tokens,
    )
    assert sent_json(b.messages) == sent_json(a.messages)
    assert [m is n for m, n in zip(b.messages, preview.messages, strict=True)].count(False) == 0  # its copies
    assert cold.sticky_ids == warm.sticky_ids
