"""A whole conversation turned into chat rows, without Qt: built in a worker thread when a session opens.

Building the rows of a session of thousands of messages takes tens of milliseconds; the window builds them
with :func:`prepare_conversation` off the GUI thread, and the presenter only hands them to the chat model.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from piwork.gui.chat.rows import ChatRow, images_of, rows_for_message
from piwork.gui.chat.tool_card import ToolCard


@dataclass
class Conversation:
    messages: list[dict[str, Any]]  # what the rows were built from
    rows: list[ChatRow] = field(default_factory=list)
    cards: dict[str, ToolCard] = field(default_factory=dict)  # tool call id -> its card
    card_rows: dict[str, ChatRow] = field(default_factory=dict)  # tool call id -> the card's row
    # first row of each message (keyed by the message object's id; the message is kept so the id cannot be
    # reused): the Context panel's X-ray jumps through it
    message_rows: dict[int, tuple[dict[str, Any], int]] = field(default_factory=dict)

    def current_for(self, messages: list[dict[str, Any]]) -> bool:
        """Built from these very message objects (the session's list is handed out as a copy)."""
        return len(self.messages) == len(messages) and all(
            a is b for a, b in zip(self.messages, messages, strict=True)
        )


def prepare_conversation(messages: list[dict[str, Any]]) -> Conversation:
    """The rows of ``messages`` (oldest first). Pure Python: safe in any thread."""
    conversation = Conversation(list(messages))
    cards, card_rows = conversation.cards, conversation.card_rows
    for message in messages:
        new_rows = rows_for_message(message, cards)
        for row in new_rows:
            if row.tool is not None and row.tool.call_id:
                card_rows[row.tool.call_id] = row
        conversation.rows.extend(new_rows)
        first = new_rows
        if message.get("role") == "toolResult":
            card_row = card_rows.get(str(message.get("toolCallId")))
            first = [card_row] if card_row is not None else new_rows
            images = images_of(message.get("content"))  # a screenshot, a read image file: shown on its card
            if card_row is not None and images:
                card_row.images = images
        if first:
            conversation.message_rows[id(message)] = (message, first[0].key)
    return conversation
