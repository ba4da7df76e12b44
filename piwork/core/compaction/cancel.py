"""Running a step until it finishes or the user cancels it (the GUI's cancel button)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class Cancelled(Exception):
    """Raised by ``until_cancelled`` when the cancel event fired first."""


async def until_cancelled(step: Coroutine[Any, Any, T], cancel: asyncio.Event | None) -> T:
    """Await ``step``; if ``cancel`` is set first, cancel it and raise ``Cancelled``."""
    if cancel is None:
        return await step
    if cancel.is_set():
        step.close()
        raise Cancelled()
    task = asyncio.ensure_future(step)
    waiter = asyncio.ensure_future(cancel.wait())
    try:
        await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        task.cancel()
        waiter.cancel()
        raise
    waiter.cancel()
    if task.done():
        return task.result()
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    raise Cancelled()
