"""Token estimates of agent messages and whole requests, cached per message object.

The governor runs before every provider call over a transcript that only grows, so each message is
counted once: the cache is keyed by the message object (messages are never mutated after they end) and
keeps a reference to it, so an id cannot be reused while its count is cached. Counts are exactly those of
:meth:`TokenCounter.count_context` over the converted request, so every figure here adds up to it.

With a real tokenizer a long transcript costs about a microsecond per token the first time, so a host
counts it ahead, off its GUI thread (:meth:`TokenEstimator.precount`, when a session opens and as messages
arrive); views then find the counts known (:meth:`TokenEstimator.known`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence

from piwork.core.llm.tokens import TokenCounter, TokenizerInfo
from piwork.core.llm.types import ToolSpec
from piwork.core.messages import LLM_ROLES, Message, convert_message

CHARS4 = TokenCounter(None, TokenizerInfo(None, True))


def tool_schemas(tools: Sequence[ToolSpec]) -> list[str]:
    """Each tool's schema as it appears in :func:`tools_json`."""
    return [
        json.dumps(
            {"name": t.name, "description": t.description, "parameters": t.parameters}, ensure_ascii=False
        )
        for t in tools
    ]


def tools_json(tools: Sequence[ToolSpec]) -> str:
    """The tool schemas as the request counts them (the same JSON ``count_context`` encodes)."""
    return "[" + ", ".join(tool_schemas(tools)) + "]"


class TokenEstimator:
    def __init__(self, counter: TokenCounter | None = None) -> None:
        self.counter = counter or CHARS4
        self._messages: dict[int, tuple[Message, int]] = {}
        self._text: tuple[str, int] = ("", 0)
        self._tools: tuple[tuple[ToolSpec, ...], int] = ((), 0)
        self._slices: dict[tuple[str, tuple[int, ...]], list[int]] = {}
        self._limit = 50_000  # cached message counts; raised to hold any transcript counted ahead

    @property
    def tokenizer(self) -> str:
        """The tokenizer label (``o200k_base``, ``≈ cl100k_base``, ``≈ chars/4``)."""
        return self.counter.info.label

    @property
    def record_tokenizer(self) -> str:
        """The tokenizer in the manifest's form (``o200k_base``, ``cl100k_base≈``, ``chars/4``)."""
        return self.counter.info.record_name

    def message(self, message: Message) -> int:
        """Tokens of one agent message as the provider receives it (0 when it is not sent)."""
        cached = self._messages.get(id(message))
        if cached is not None and cached[0] is message:
            return cached[1]
        return self._count(message)

    def _count(self, message: Message) -> int:
        # an LLM message is sent as it is (convert_message would return it unchanged)
        converted = message if message.get("role") in LLM_ROLES else convert_message(message)
        tokens = 0 if converted is None else self.counter.count_message(converted)
        if (
            len(self._messages) > self._limit
        ):  # counts of replaced lists pile up: start over, not grow forever
            self._messages.clear()
        self._messages[id(message)] = (message, tokens)
        return tokens

    def known(self, message: Message) -> int | None:
        """The message's count if it was counted already (never counts: cheap on any thread)."""
        cached = self._messages.get(id(message))
        return cached[1] if cached is not None and cached[0] is message else None

    def precount(self, messages: Sequence[Message], until: float | None = None) -> bool:
        """Count the messages not counted yet, in order (blocking: run it off the GUI thread).

        ``until`` (a ``time.monotonic()`` deadline, checked after each message counted) stops early, once
        at least one message is counted, so calls repeated until it returns True always end; returns
        whether every message is counted. Long texts' counts are saved for the next run when it ends.
        A caller counting a long transcript in slices goes on with :meth:`count_from` instead, which does
        not look at the messages an earlier slice counted again."""
        return self.count_from(messages, 0, until) == len(messages)

    def count_from(self, messages: Sequence[Message], start: int = 0, until: float | None = None) -> int:
        """Count ``messages[start:]`` not counted yet, in order, as :meth:`precount` does; returns where
        the next slice starts: ``len(messages)`` once every message from ``start`` on is counted.

        Passing the returned position back as ``start`` counts a transcript in slices in one pass over it
        (from 0 each time, a transcript of n messages cut in k slices would be looked through k times)."""
        self._limit = max(self._limit, 2 * len(messages))  # a pass never drops what an earlier one counted
        cache, count = self._messages, self._count
        counted = False
        end = len(messages)
        position = start
        for position in range(start, end):  # the known ones skipped inline: a long session has millions
            message = messages[position]
            cached = cache.get(id(message))
            if cached is not None and cached[0] is message:
                continue
            if counted and until is not None and time.monotonic() > until:
                self.counter.flush()
                return position
            count(message)
            counted = True
        self.counter.flush()
        return max(start, end)

    def messages(self, messages: Sequence[Message]) -> int:
        return sum(self.message(m) for m in messages)

    def slices(self, whole: str, ends: Sequence[int]) -> list[int]:
        """Tokens of each slice of ``whole`` ending at ``ends`` (see ``TokenCounter.count_slices``); the
        system prompt and the tool schemas come back unchanged on every request, so the last few are kept."""
        key = (whole, tuple(ends))
        found = self._slices.get(key)
        if found is None:
            found = self.counter.count_slices(whole, ends)
            if len(self._slices) >= 4:
                self._slices.clear()
            self._slices[key] = found
        return list(found)

    def system_prompt(self, text: str) -> int:
        if text != self._text[0]:
            self._text = (text, self.counter.count(text))
        return self._text[1]

    def tools(self, tools: Sequence[ToolSpec]) -> int:
        key = tuple(tools)
        if key != self._tools[0]:
            self._tools = (key, self.counter.count(tools_json(tools)) if tools else 0)
        return self._tools[1]

    def request(self, system_prompt: str, tools: Sequence[ToolSpec], messages: Sequence[Message]) -> int:
        """Tokens of the whole request: system prompt, tool schemas and the messages."""
        return self.system_prompt(system_prompt) + self.tools(tools) + self.messages(messages)
