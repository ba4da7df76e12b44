from __future__ import annotations

from pathlib import Path

import pytest

from piwork.core.compaction.compact import CompactionError
from piwork.core.compaction.settings import CompactionSettings
from piwork.core.context.durable import deterministic_summary, governor_compaction
from piwork.core.errors import PiworkError
from piwork.core.session.store import in_memory_session
from tests.core.context.transcripts import assistant, call, result, user

pytestmark = pytest.mark.anyio

CONTRACT = {
    "title": "Fix totals",
    "goal": "Make the invoice total include tax",
    "acceptance": ["total includes VAT", "tests pass"],
    "verify": "pytest -q",
    "mode": "source-write",
    "phase": "implement",
}


def coding_task() -> list[dict]:
    return [
        user("Fix the invoice total; it ignores tax. " + "Details. " * 80),
        assistant(call("r1", "read", path="src/invoice.py")),
        result("r1", "read", "def total(items):\n    return sum(items)\n"),
        assistant(call("v1", "bash", command="pytest -q")),
        result("v1", "bash", "\n".join(f"line {n}" for n in range(60)) + "\n1 failed", is_error=True),
        assistant(
            call("e1", "edit", path="src/invoice.py", oldText="sum(items)", newText="sum(items) * 1.2")
        ),
        result("e1", "edit", "Edited src/invoice.py"),
        assistant(call("x1", "bash", command="ls nowhere")),
        result("x1", "bash", "ls: cannot access 'nowhere': No such file or directory", is_error=True),
        assistant(call("v2", "bash", command="pytest -q")),
        result("v2", "bash", "2 passed"),
        assistant(text="Total now includes VAT. Next: add a test for zero items."),
    ]


def test_deterministic_summary_contents() -> None:
    summary = deterministic_summary(
        coding_task(), CONTRACT, ["pytest -q"], previous_summary="Earlier: set up the repo."
    )
    request = "Fix the invoice total; it ignores tax. " + "Details. " * 80
    assert summary == (
        "## Earlier summary\nEarlier: set up the repo.\n\n"
        "## Task\nTitle: Fix totals\nGoal: Make the invoice total include tax\nMode: source-write\n"
        "Phase: implement\nAcceptance:\n- total includes VAT\n- tests pass\nVerify: pytest -q\n\n"
        f"## User requests\n- {request.strip()[:499]}…\n\n"
        "## Decisions and answers\n- Total now includes VAT. Next: add a test for zero items.\n\n"
        "## Verifier results (latest run)\n- `pytest -q`: passed\n\n"
        "## Commands run\n- `ls nowhere`: failed\n- `pytest -q`: passed\n\n"
        "## Unresolved errors\n### bash ls nowhere\n```\nls: cannot access 'nowhere': No such file or directory\n```\n\n"
        "## Next steps (from the last reply)\nTotal now includes VAT. Next: add a test for zero items."
    )


def test_unresolved_error_tail_is_40_lines() -> None:
    messages = coding_task()[:5]
    summary = deterministic_summary(messages, None, [])
    block = summary.split("## Unresolved errors\n", 1)[1]
    lines = block.split("```\n", 1)[1].split("\n```", 1)[0].split("\n")
    assert len(lines) == 40 and lines[-1] == "1 failed" and lines[0] == "line 21"
    assert "## Task" not in summary and "## Verifier results" not in summary


async def test_governor_compaction_writes_a_deterministic_entry_without_usage(tmp_path: Path) -> None:
    store = in_memory_session(str(tmp_path))
    tree = store.tree
    tree.append_custom_entry("piwork.taskContract", CONTRACT)
    for message in coding_task():
        tree.append_message(message)
    tree.append_message(user("and the rounding? " + "r" * 90_000))
    tree.append_message(assistant(text="Rounded."))
    result = await governor_compaction(
        tree, CompactionSettings(keep_recent_tokens=20_000), None, ["pytest -q"]
    )
    entry = tree.entry(result.entry_id)
    assert entry["type"] == "compaction" and "usage" not in entry
    assert entry["summary"].startswith("## Task\nTitle: Fix totals")
    assert entry["details"] == {"readFiles": [], "modifiedFiles": ["src/invoice.py"]}
    assert entry["summary"].endswith("<modified-files>\nsrc/invoice.py\n</modified-files>")
    with pytest.raises(CompactionError):
        await governor_compaction(tree, CompactionSettings(), None, [])


async def test_a_discussion_without_a_summariser_cannot_be_compacted(tmp_path: Path) -> None:
    tree = in_memory_session(str(tmp_path)).tree
    for n in range(4):
        tree.append_message(user(f"question {n}: " + "m" * 40_000))
        tree.append_message(assistant(text=f"answer {n}"))
    with pytest.raises(PiworkError, match="No model selected"):
        await governor_compaction(tree, CompactionSettings(keep_recent_tokens=10_000), None, [])
