"""Hook ordering rules and the cancel helper."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from piwork.core.compaction.cancel import Cancelled, until_cancelled
from piwork.core.compaction.hooks import BeforeTreeEvent, CompactionHooks, TreePreparation

pytestmark = pytest.mark.anyio


def _event() -> BeforeTreeEvent:
    return BeforeTreeEvent(TreePreparation("t", "o", None, [], True))


async def test_last_non_empty_result_wins_and_cancel_stops_at_once() -> None:
    errors: list[str] = []
    hooks = CompactionHooks(on_error=lambda name, error: errors.append(str(error)))
    calls: list[str] = []

    async def first(event: Any) -> dict[str, Any]:
        calls.append("first")
        return {"label": "one"}

    def second(event: Any) -> None:
        calls.append("second")

    def third(event: Any) -> str:
        calls.append("third")
        return "not a mapping"

    hooks.on_before_tree(first)
    hooks.on_before_tree(second)
    hooks.on_before_tree(third)
    assert await hooks.before_tree(_event()) == {"label": "one"}
    assert calls == ["first", "second", "third"] and "not a mapping" in errors[0]

    calls.clear()
    hooks.on_before_tree(lambda event: {"cancel": True})
    hooks.on_before_tree(lambda event: calls.append("never"))
    assert await hooks.before_tree(_event()) == {"cancel": True}
    assert "never" not in calls


async def test_until_cancelled() -> None:
    cancel = asyncio.Event()

    async def value() -> int:
        return 7

    assert await until_cancelled(value(), cancel) == 7
    assert await until_cancelled(value(), None) == 7

    stopped = asyncio.Event()

    async def forever() -> None:
        try:
            await asyncio.Event().wait()
        finally:
            stopped.set()

    asyncio.get_running_loop().call_soon(cancel.set)
    with pytest.raises(Cancelled):
        await until_cancelled(forever(), cancel)
    assert stopped.is_set()
    with pytest.raises(Cancelled):
        await until_cancelled(value(), cancel)  # already cancelled: the step never runs
