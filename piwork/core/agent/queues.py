"""Steering and follow-up queues: messages typed while the agent works, drained at Pi's drain points."""

from __future__ import annotations

from typing import Any, Literal

QueueMode = Literal["one-at-a-time", "all"]
QUEUE_MODES: tuple[QueueMode, ...] = ("one-at-a-time", "all")


def parse_queue_mode(value: object, default: QueueMode = "one-at-a-time") -> QueueMode:
    for mode in QUEUE_MODES:
        if value == mode:
            return mode
    return default


class MessageQueue:
    """FIFO of pending user messages; ``drain`` hands out one message or all of them, per ``mode``."""

    def __init__(self, mode: QueueMode = "one-at-a-time") -> None:
        self.mode: QueueMode = mode
        self._items: list[dict[str, Any]] = []

    def enqueue(self, message: dict[str, Any]) -> None:
        self._items.append(message)

    def drain(self) -> list[dict[str, Any]]:
        if not self._items:
            return []
        if self.mode == "all":
            drained, self._items = self._items, []
            return drained
        return [self._items.pop(0)]

    def clear(self) -> list[dict[str, Any]]:
        cleared, self._items = self._items, []
        return cleared

    def __len__(self) -> int:
        return len(self._items)

    def __bool__(self) -> bool:
        return bool(self._items)

    @property
    def items(self) -> list[dict[str, Any]]:
        return list(self._items)
