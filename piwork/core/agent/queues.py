"""Steering and follow-up queues: messages typed while the agent works, drained at Pi's drain points."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from piwork.core.vocabulary import QueueMode  # the ``steeringMode`` / ``followUpMode`` settings


class MessageQueue:
    """FIFO of pending user messages; ``drain`` hands out one message or all of them, per ``mode``."""

    def __init__(self, mode: QueueMode) -> None:
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


def _text_of(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    blocks = content if isinstance(content, list) else []
    return "".join(b.get("text", "") for b in blocks if isinstance(b, dict) and b.get("type") == "text")


class PromptQueues:
    """The steering and follow-up queues plus the texts the UI shows for them.

    ``on_change(steering_texts, follow_up_texts)`` runs on every change; a queued text leaves the list
    when its message starts (``delivered``).
    """

    def __init__(
        self,
        steering_mode: QueueMode,
        follow_up_mode: QueueMode,
        on_change: Callable[[list[str], list[str]], None],
    ) -> None:
        self.steering = MessageQueue(steering_mode)
        self.follow_up = MessageQueue(follow_up_mode)
        self._steering_texts: list[str] = []
        self._follow_up_texts: list[str] = []
        self._on_change = on_change

    @property
    def texts(self) -> tuple[list[str], list[str]]:
        return list(self._steering_texts), list(self._follow_up_texts)

    def __bool__(self) -> bool:
        return bool(self.steering) or bool(self.follow_up)

    def add(self, text: str, images: Sequence[dict[str, Any]], now_ms: int, *, follow_up: bool) -> None:
        content: list[dict[str, Any]] = [{"type": "text", "text": text}, *images]
        message = {"role": "user", "content": content, "timestamp": now_ms}
        if follow_up:
            self.follow_up.enqueue(message)
            self._follow_up_texts.append(text)
        else:
            self.steering.enqueue(message)
            self._steering_texts.append(text)
        self._changed()

    def delivered(self, message: dict[str, Any]) -> None:
        text = _text_of(message)
        for texts in (self._steering_texts, self._follow_up_texts):
            if text in texts:
                texts.remove(text)
                self._changed()
                return

    def clear(self) -> tuple[list[str], list[str]]:
        texts = self.texts
        self.steering.clear()
        self.follow_up.clear()
        self._steering_texts.clear()
        self._follow_up_texts.clear()
        self._changed()
        return texts

    def _changed(self) -> None:
        self._on_change(list(self._steering_texts), list(self._follow_up_texts))
