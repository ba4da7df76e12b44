"""A whole conversation turned into chat rows, without Qt: built in a worker thread when a session opens.

Building the rows of a session of thousands of messages takes tens of milliseconds; the window builds them
with :func:`prepare_conversation` off the GUI thread, and the presenter only hands them to the chat model.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from piwork.gui.chat.rows import ChatRow, RowKind, images_of, rows_for_message, text_of
from piwork.gui.chat.tool_card import ToolCard, end_without_result

if TYPE_CHECKING:
    from piwork.core.session import SessionTree

# messages whose rows a long branch shows first (the chat lays out its last 200 rows; the earlier rows follow
# from a worker, behind its "show earlier" row)
FIRST_TAIL = 400


@dataclass
class Conversation:
    messages: list[dict[str, Any]]  # what the rows were built from
    rows: list[ChatRow] = field(default_factory=list)
    cards: dict[str, ToolCard] = field(default_factory=dict)  # tool call id -> its card
    card_rows: dict[str, ChatRow] = field(default_factory=dict)  # tool call id -> the card's row
    # first row of each message (keyed by the message object's id; the message is kept so the id cannot be
    # reused): the Context panel's X-ray jumps through it
    message_rows: dict[int, tuple[dict[str, Any], int]] = field(default_factory=dict)
    # the rows are those of ``messages[earlier:]`` only: the earlier messages' rows are still to be built
    # (``prepare_earlier``), behind the chat's "show earlier" row meanwhile
    earlier: int = 0
    unanswered: frozenset[str] = frozenset()  # tool results among the rows whose call is not (their ids)
    whole: bool = False  # the rows of the whole branch, built again (see ``prepare_earlier``)
    # the calls the messages end waiting on (no result yet, nothing but results after their reply; ids)
    waiting: frozenset[str] = frozenset()
    # they may still be running (another program writes the session): their cards stay pending
    may_still_run: bool = False
    # the rows' positions in the chat's model when they go before the rows shown (``prepended_positions``:
    # made with the rows, in the worker, for ``ChatModel.prepend_rows``)
    positions: dict[int, int] | None = None

    def current_for(self, messages: list[dict[str, Any]]) -> bool:
        """Built from these very message objects (the session's list is handed out as a copy)."""
        return len(self.messages) == len(messages) and all(map(operator.is_, self.messages, messages))


class Stopped(Exception):
    """Building rows was given up (their chat moved on, or the window closes)."""


def prepare_conversation(
    messages: list[dict[str, Any]],
    rows_after: Callable[[dict[str, Any]], list[ChatRow]] | None = None,
    stopped: Callable[[], bool] | None = None,
    may_still_run: bool = False,
) -> Conversation:
    """The rows of ``messages`` (oldest first); ``rows_after`` gives rows of the window's own to put
    after a message's; ``stopped``, asked every few hundred messages, gives up (``Stopped``) once true.
    A call left without a result shows as never getting one (:func:`settle_calls`); with
    ``may_still_run`` (another program writes the session) the calls the messages end waiting on stay
    pending. Pure Python: safe in any thread."""
    conversation = Conversation(list(messages), may_still_run=may_still_run)
    cards, card_rows = conversation.cards, conversation.card_rows
    calls: list[tuple[ToolCard, Any]] = []  # each call's card and its reply's stop reason, in order
    last_reply = 0  # where the calls of the last reply start in ``calls``
    open_end = False  # nothing but tool results (or prompt state) came after the last reply
    for number, message in enumerate(messages):
        if stopped is not None and number % 512 == 0 and stopped():
            raise Stopped
        new_rows = rows_for_message(message, cards)
        role = message.get("role")
        if role == "assistant":
            last_reply, open_end = len(calls), True
            calls.extend((row.tool, message.get("stopReason")) for row in new_rows if row.tool is not None)
        elif role not in ("toolResult", "system"):
            open_end = False
        for row in new_rows:
            if row.tool is not None and row.tool.call_id:
                card_rows[row.tool.call_id] = row
        conversation.rows.extend(new_rows)
        if rows_after is not None:
            conversation.rows.extend(rows_after(message))
        first = new_rows
        if message.get("role") == "toolResult":
            card_row = card_rows.get(str(message.get("toolCallId")))
            first = [card_row] if card_row is not None else new_rows
            images = images_of(message.get("content"))  # a screenshot, a read image file: shown on its card
            if card_row is not None and images:
                card_row.images = images
        if first:
            conversation.message_rows[id(message)] = (message, first[0].key)
    settle_calls(conversation, calls, last_reply if open_end else len(calls))
    return conversation


def settle_calls(conversation: Conversation, calls: list[tuple[ToolCard, Any]], open_from: int) -> None:
    """The cards of ``calls`` (card, its reply's stop reason) that got no result: a stopped or failed
    reply's calls never ran (no request ever sends such a reply, as in Pi); any other call without a
    result has none recorded (the model is told so: the engine's normalisation gives it a "no result"
    error). The calls from ``open_from`` on are those the messages end waiting on: noted
    (``waiting``), and left pending when the session's writer may still be running them."""
    waiting = []
    for number, (card, reason) in enumerate(calls):
        if card.status != "pending":  # its result came
            continue
        if reason not in ("aborted", "error") and number >= open_from:
            waiting.append(card.call_id)
            if conversation.may_still_run:
                continue
        end_without_result(card, reason)
    conversation.waiting = frozenset(waiting)


LEFT_OUT_TITLE = "⊘ Left out of the model's context"
REPLACED_TITLE = "✎ Replaced for the model: it sees this instead"
EDIT_HINT = "The message above is kept as written. Restore (in its menu or the tree's) undoes the edit."


def edit_mark_row(edit: Mapping[str, Any]) -> ChatRow:
    """The card under a message that a context edit changes: left out, or what the model sees."""
    replacement = edit.get("replacement")
    if not isinstance(replacement, Mapping):
        return ChatRow(RowKind.NOTICE, "", title=LEFT_OUT_TITLE, hint=EDIT_HINT, collapsed=False)
    return ChatRow(
        RowKind.NOTICE,
        text_of(replacement.get("content")),
        title=REPLACED_TITLE,
        hint=EDIT_HINT,
        collapsed=False,
    )


def prepare_transcript(
    messages: list[dict[str, Any]],
    edited: Mapping[int, Any],
    model_view: list[dict[str, Any]],
    may_still_run: bool = False,
) -> Conversation:
    """The rows of a branch's messages as written (``messages``; ``edited``: the context edit in force on
    each message it changes, by ``id()``), each edited entry followed by a card saying what the model sees
    instead. Built for ``model_view``, the session's own list of what the model sees: its messages lead to
    the rows of the messages they come from (the X-ray jumps through them). ``may_still_run`` as for
    :func:`prepare_conversation`. Pure Python: any thread."""
    last_of_entry = {
        id(m): edited[id(m)]
        for n, m in enumerate(messages)
        if id(m) in edited
        and (n + 1 == len(messages) or edited.get(id(messages[n + 1])) is not edited[id(m)])
    }

    def marks(message: dict[str, Any]) -> list[ChatRow]:
        edit = last_of_entry.get(id(message))
        return [edit_mark_row(edit)] if edit is not None else []

    conversation = prepare_conversation(
        messages, marks if last_of_entry else None, may_still_run=may_still_run
    )
    if edited:
        _key_rows_by(conversation, messages, edited, model_view)
    conversation.messages = list(model_view)
    return conversation


def _key_rows_by(
    conversation: Conversation,
    messages: list[dict[str, Any]],
    edited: Mapping[int, Any],
    model_view: list[dict[str, Any]],
) -> None:
    """Key the first rows by the model's messages: the transcript without what is left out, in order."""
    kept = [m for m in messages if not _leaves_out(edited.get(id(m)))]
    if len(kept) != len(model_view):
        return  # not the same branch: the rows stay keyed by the messages they show
    rows = conversation.message_rows
    for original, shown in zip(kept, model_view, strict=True):
        found = rows.pop(id(original), None)
        if found is not None:
            rows[id(shown)] = (shown, found[1])


def _leaves_out(edit: Any) -> bool:
    return isinstance(edit, Mapping) and edit.get("replacement", ...) is None


class _SessionLike(Protocol):
    @property
    def messages(self) -> list[dict[str, Any]]: ...

    @property
    def tree(self) -> SessionTree: ...

    @property
    def read_only_reason(self) -> str | None: ...


def prepare_session_conversation(session: _SessionLike, tail: int | None = None) -> Conversation:
    """The rows of an open session's branch: its messages as written, with what context edits change
    marked (:func:`prepare_transcript`); without edits, the model's list itself. Reads entry bodies when
    there are edits: run it in a worker. ``tail``: build only the rows of about the last ``tail`` messages
    (from a prompt on, so every tool card has its result) when the branch is longer; the rest follow with
    :func:`prepare_earlier`. A session another program writes (read-only) may be running the calls its
    branch ends with: they stay pending."""
    model_view = session.messages
    tree = session.tree
    may_still_run = session.read_only_reason is not None
    if not any(record.type == "context_edit" for record in tree.path()):
        if tail is not None:
            return prepare_tail(model_view, tail, may_still_run)
        return prepare_conversation(model_view, may_still_run=may_still_run)
    transcript = tree.build_context(keep_originals=True)
    return prepare_transcript(transcript.messages, transcript.edited, model_view, may_still_run)


def prepare_tail(messages: list[dict[str, Any]], tail: int, may_still_run: bool = False) -> Conversation:
    """The rows of the last messages of ``messages``, from the last prompt at least ``tail`` messages before
    the end on (all of them when there is none, or when a tool result there answers a call before it);
    ``may_still_run`` as for :func:`prepare_conversation`."""
    start = next((i for i in range(len(messages) - tail, 0, -1) if messages[i].get("role") == "user"), 0)
    if start == 0:
        return prepare_conversation(messages, may_still_run=may_still_run)
    conversation = prepare_preview(messages[start:], may_still_run)
    conversation.messages = list(messages)
    conversation.earlier = start
    return conversation


def prepare_preview(messages: list[dict[str, Any]], may_still_run: bool = False) -> Conversation:
    """The rows of the last messages of a branch (``messages``, from a prompt on), its tool results
    without their call among them noted (``unanswered``); ``may_still_run`` as for
    :func:`prepare_conversation`. Any thread."""
    conversation = prepare_conversation(messages, may_still_run=may_still_run)
    conversation.unanswered = frozenset(
        str(message.get("toolCallId"))
        for message in messages
        if message.get("role") == "toolResult" and str(message.get("toolCallId")) not in conversation.cards
    )
    return conversation


def adopt_preview(preview: Conversation, messages: list[dict[str, Any]]) -> Conversation | None:
    """``preview`` (rows of the last messages, shown while the session opened) as the rows of the branch
    ``messages`` ends with, when its last messages are those very ones (equal); the earlier messages'
    rows still to be built (:func:`prepare_earlier`). None when they are not, or when they end waiting on
    a call: whether it may still be running is the opened session's to say. Any thread."""
    count = len(preview.messages)
    tail = messages[len(messages) - count :]
    if not count or len(tail) != count or tail != preview.messages or preview.waiting:
        return None
    adopted = Conversation(
        list(messages),
        preview.rows,
        preview.cards,
        preview.card_rows,
        earlier=len(messages) - count,
        unanswered=preview.unanswered,
        may_still_run=preview.may_still_run,
    )
    for shown, message in zip(preview.messages, tail, strict=True):
        found = preview.message_rows.get(id(shown))
        if found is not None:
            adopted.message_rows[id(message)] = (message, found[1])
    return adopted


def prepare_earlier(conversation: Conversation, stopped: Callable[[], bool] | None = None) -> Conversation:
    """The rows of the messages ``conversation`` was built without (its ``earlier`` ones); the rows of the
    whole branch instead (``whole`` set) when one of them makes a call whose result the last messages hold
    (its card is up there: the last rows were built without it). Any thread; ``stopped`` as for
    :func:`prepare_conversation`."""
    earlier = prepare_conversation(conversation.messages[: conversation.earlier], stopped=stopped)
    if conversation.unanswered.isdisjoint(earlier.cards):
        return earlier
    whole = prepare_conversation(
        conversation.messages, stopped=stopped, may_still_run=conversation.may_still_run
    )
    whole.whole = True
    return whole
