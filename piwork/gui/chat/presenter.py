"""Turns the engine's agent events into chat rows, batching streamed deltas.

The engine calls :meth:`ChatPresenter.handle` for every event (on the GUI thread: the agent runs on the qasync
loop). Text and thinking deltas are collected and applied at most every ``FLUSH_MS`` milliseconds by appending
to the streaming row; everything else updates the one row it concerns.
"""

from __future__ import annotations

import re
import time
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QTimer, Signal

from piwork.gui.chat.answer_meta import head_of, incomplete_mark
from piwork.gui.chat.conversation import Conversation, prepare_conversation
from piwork.gui.chat.retry_card import RetryCard
from piwork.gui.chat.rows import (
    ChatRow,
    RowKind,
    apply_tool_result,
    assistant_rows,
    finish_user_command,
    images_of,
    readable_summary,
    rows_for_message,
    stop_rows,
    text_of,
    tool_result_details,
    truncation_lines,
    user_command_title,
)
from piwork.gui.chat.tool_card import ToolCard, end_without_result

if TYPE_CHECKING:
    from piwork.core.agent import (
        AgentEnd,
        AgentEvent,
        AgentSettled,
        AgentStart,
        AutoRetryEnd,
        AutoRetryStart,
        CompactionEnd,
        CompactionStart,
        ErrorNotice,
        MessageEnd,
        MessageStart,
        MessageUpdate,
        ModelChanged,
        QueueUpdate,
        ThinkingLevelChanged,
        ToolExecutionEnd,
        ToolExecutionStart,
        ToolExecutionUpdate,
        TreeNavigated,
        TurnStart,
        UserCommandEnd,
        UserCommandStart,
        UserCommandUpdate,
    )
    from piwork.core.approvals import ApprovalRequest
    from piwork.gui.chat.chat_model import ChatModel

SHELL_SHOWN_CHARS = 100_000  # of a running user command's output (what the engine keeps, too)
_NOTHING_TO_COMPACT = re.compile(r"Nothing to compact|Already compacted", re.IGNORECASE)
# Titles, in words, of the engine's non-fatal notices by where they come from.
_NOTICE_TITLES = {
    "retry": "Not retried",
    "session": "Session file",
    "session file": "Not saved to the session file",
    "skill": "Skill or template not expanded",
    "agent": "Something needs attention",
}
FLUSH_MS = 50
TICK_MS = 500
WAIT_TICK_MS = 1000
WAIT_AFTER_S = 2.0  # silence from the model longer than this shows "waiting for the model… N s"


class ChatPresenter(QObject):
    busyChanged = Signal(bool)
    userCommandRunning = Signal(bool)  # a ``!cmd`` of the user's is running (Esc stops it)
    assistantFinished = Signal(dict)  # the final assistant message (usage, cost, model)
    queueChanged = Signal(list, list)  # steering texts, follow-up texts
    modelChanged = Signal(str, str)  # provider, model id
    thinkingLevelChanged = Signal(str)
    treeNavigated = Signal()
    compactionFinished = Signal()
    tick = Signal()  # running tools: durations need repainting
    waitingChanged = Signal(str)  # "waiting for the model… 12 s" while the model is silent; "" hides it
    flushed = Signal()

    def __init__(self, model: ChatModel, flush_ms: int = FLUSH_MS, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.model = model
        self.busy = False
        self._cards: dict[str, ToolCard] = {}
        self._card_rows: dict[str, ChatRow] = {}
        self._stream_rows: dict[int, ChatRow] = {}
        self._pending: dict[int, tuple[ChatRow, list[str]]] = {}
        self._dirty: dict[int, ChatRow] = {}
        self._retry: RetryCard | None = None
        self._last_error_row: ChatRow | None = None  # the error row of the latest failed reply
        self._last_activity = time.monotonic()  # last sign of life from the model (or start of a request)
        self._receiving = False  # the model has sent part of the current reply
        self._waiting_text = ""
        self._wait_timer = QTimer(self)
        self._wait_timer.setInterval(WAIT_TICK_MS)
        self._wait_timer.timeout.connect(self._on_wait_tick)
        self._compaction_row: ChatRow | None = None
        # first row of each finished message (keyed by the message object's id; the message is kept so the
        # id cannot be reused): the Context panel's X-ray jumps through it
        self._message_rows: dict[int, tuple[dict[str, Any], int]] = {}
        self._shown: Conversation | None = None  # the rows last shown whole (``show_messages``)
        self._pending_user: tuple[dict[str, Any], list[ChatRow]] | None = None
        self._user_commands: dict[int, ChatRow] = {}  # running ``!cmd`` cards by run
        self._user_command_rows: dict[int, tuple[dict[str, Any], ChatRow]] = {}  # ended, until recorded
        self._flush_timer = QTimer(self)
        self._flush_timer.setSingleShot(True)
        self._flush_timer.setInterval(flush_ms)
        self._flush_timer.timeout.connect(self.flush)
        self._tick_timer = QTimer(self)
        self._tick_timer.setInterval(TICK_MS)
        self._tick_timer.timeout.connect(self._on_tick)

    # ---- whole conversation ------------------------------------------------------------------

    def show_messages(self, messages: list[dict[str, Any]], prepared: Conversation | None = None) -> None:
        """Replace the conversation with ``messages`` (a session's context, oldest first); ``prepared``,
        their rows built ahead in a worker (:func:`prepare_conversation`), is used when it is still theirs."""
        self.flush()
        self._stream_rows.clear()
        if prepared is None or not prepared.current_for(messages):
            prepared = prepare_conversation(messages)
        if self._showing_rows_of(prepared):  # e.g. the preview a session opened with: the rows stay
            self._cards, self._card_rows = prepared.cards, prepared.card_rows
            self._message_rows = prepared.message_rows
            self._shown = prepared
            return
        self._cards = prepared.cards
        self._card_rows = prepared.card_rows
        self._message_rows = prepared.message_rows
        self.model.reset_rows(prepared.rows)
        self._shown = prepared

    def _showing_rows_of(self, prepared: Conversation) -> bool:
        """The chat shows exactly ``prepared``'s rows already (the same objects, nothing added since)."""
        shown, rows, model = self._shown, prepared.rows, self.model
        return (
            shown is not None
            and shown.rows is rows
            and bool(rows)
            and model.total_rows() == len(rows)
            and model.row_at_position(0) is rows[0]
            and model.row_at_position(len(rows) - 1) is rows[-1]
        )

    def show_earlier_rows(self, prepared: Conversation, earlier: Conversation) -> bool:
        """Add the rows of the messages ``prepared`` was built without (``earlier``, built in a worker)
        above the rows shown, behind "show earlier", when the chat still shows ``prepared``'s rows;
        False when it does not (they were replaced since) or they could not go there."""
        first = prepared.rows[0] if prepared.rows else None
        if self._shown is not prepared or not prepared.earlier or self.model.row_at_position(0) is not first:
            return False
        if earlier.whole:  # a tool card of the last rows is further up: the whole branch, built again
            self.show_messages(prepared.messages, earlier)
            return True
        if not self.model.prepend_rows(earlier.rows, earlier.positions):
            return False
        prepared.earlier = 0
        # the shown rows' entries go after (or over) the earlier ones, as ``{**earlier, **shown}`` would put them,
        # added to the earlier dicts (built in the worker, a long branch's worth) instead of copying those here
        earlier.cards.update(self._cards)
        earlier.card_rows.update(self._card_rows)
        earlier.message_rows.update(self._message_rows)
        self._cards, self._card_rows, self._message_rows = (
            earlier.cards,
            earlier.card_rows,
            earlier.message_rows,
        )
        prepared.cards, prepared.card_rows, prepared.message_rows = (
            self._cards,
            self._card_rows,
            self._message_rows,
        )
        return True

    def _remember(self, message: dict[str, Any], rows: list[ChatRow]) -> None:
        if message.get("role") == "toolResult":
            card_row = self._card_rows.get(str(message.get("toolCallId")))
            rows = [card_row] if card_row is not None else rows
        if rows:
            self._message_rows[id(message)] = (message, rows[0].key)

    def message_rows(self) -> list[tuple[dict[str, Any], int]]:
        """Each shown message with the key of its first row, oldest first."""
        return list(self._message_rows.values())

    def row_key_for_message(self, message: dict[str, Any]) -> int | None:
        """Key of the first chat row showing ``message`` (a tool result: its call's card), if shown."""
        found = self._message_rows.get(id(message))
        return found[1] if found is not None and found[0] is message else None

    def message_of_row(self, key: int) -> dict[str, Any] | None:
        """The message a chat row shows part of: the nearest message starting at or above the row (a
        tool card: its result's message)."""
        firsts = {row_key: message for message, row_key in self._message_rows.values()}
        rows = self.model.all_rows()
        at = next((i for i, row in enumerate(rows) if row.key == key), None)
        while at is not None and at >= 0:
            message = firsts.get(rows[at].key)
            if message is not None:
                return message
            if rows[at].kind in (RowKind.NOTICE, RowKind.ERROR, RowKind.MORE):
                return None  # a card of the window's own, not part of a message
            at -= 1
        return None

    def add_notice(self, title: str, text: str = "", hint: str = "", error: bool = False) -> ChatRow:
        row = ChatRow(
            RowKind.ERROR if error else RowKind.NOTICE, text, title=title, hint=hint, collapsed=False
        )
        self.model.append_rows([row])
        return row

    # ---- events ------------------------------------------------------------------------------

    def handle(self, event: AgentEvent) -> None:
        on = _EVENT_HANDLERS or _event_handlers()
        name = on.get(type(event))
        if name is not None:  # the governor's and telemetry's events are shown by the context views
            getattr(self, name)(event)

    def _on_agent_start(self, _event: AgentStart) -> None:
        self._set_busy(True)
        self._alive()
        self._wait_timer.start()

    def _on_agent_settled(self, _event: AgentSettled) -> None:
        self.flush()
        self._set_busy(False)
        self._wait_timer.stop()
        self._set_waiting("")

    def _on_turn_start(self, _event: TurnStart) -> None:
        self._alive()

    def _on_agent_end(self, event: AgentEnd) -> None:
        self.flush()

    def _on_message_start(self, event: MessageStart) -> None:
        message = event.message
        if message.get("role") == "user":
            user_rows = rows_for_message(message, self._cards)
            self._append(user_rows)
            self._pending_user = (message, user_rows)
        elif message.get("role") == "assistant":
            self._stream_rows = {}
            self._receiving = False
            self._alive()
            if self._retry is not None:
                self._retry.sending()
                self._changed(self._retry.row)

    def _on_message_update(self, event: MessageUpdate) -> None:
        self._receiving = True
        self._alive()
        provider_event = event.provider_event
        kind = provider_event.type
        index: int = getattr(provider_event, "content_index", -1)  # start, done and error have none
        row: ChatRow | None
        if provider_event.type == "text_start" or provider_event.type == "thinking_start":
            row_kind = RowKind.TEXT if kind == "text_start" else RowKind.THINKING
            new_row = ChatRow(row_kind, streaming=True)
            self._head_answer(new_row, event.message)
            self._stream_rows[index] = new_row
            self._append([new_row])
        elif provider_event.type == "text_delta" or provider_event.type == "thinking_delta":
            row = self._stream_rows.get(index)
            if row is not None:
                self._queue_delta(row, provider_event.delta)
        elif provider_event.type == "text_end" or provider_event.type == "thinking_end":
            row = self._stream_rows.get(index)
            if row is not None:
                self._finish_stream_row(row, provider_event.content)
        elif kind == "toolcall_start":
            block = _block(event.message, index)
            card = ToolCard(str(block.get("id", "")), str(block.get("name", "tool")), status="preparing")
            card_row = ChatRow(RowKind.TOOL, tool=card, streaming=True)
            self._head_answer(card_row, event.message)
            self._stream_rows[index] = card_row
            self._register_card(card, card_row)
            self._append([card_row])
        elif kind == "toolcall_delta":
            row = self._stream_rows.get(index)
            if row is not None and row.tool is not None:
                arguments = _block(event.message, index).get("arguments")
                if isinstance(arguments, dict):
                    row.tool.args = dict(arguments)
                self._mark_dirty(row)
        elif provider_event.type == "toolcall_end":
            row = self._stream_rows.get(index)
            call = provider_event.tool_call or {}
            if row is not None and row.tool is not None:
                row.tool.args = dict(call.get("arguments") or row.tool.args)
                if row.tool.call_id != call.get("id", row.tool.call_id):
                    self._cards.pop(row.tool.call_id, None)
                    row.tool.call_id = str(call.get("id"))
                    self._register_card(row.tool, row)
                row.tool.status = "pending"
                row.streaming = False
                self._changed(row)

    def _on_message_end(self, event: MessageEnd) -> None:
        message = event.message
        role = message.get("role")
        self.flush()
        if role == "assistant":
            self._receiving = False
            self._alive()
            if self._stream_rows:
                first = self._stream_rows[min(self._stream_rows)]
                self._finish_streamed_message(message)
                self._remember(message, [first])
            else:
                new_rows = self._take_failure(assistant_rows(message, self._cards), message)
                for new_row in new_rows:
                    if new_row.tool is not None:
                        self._card_rows[new_row.tool.call_id] = new_row
                        if message.get("stopReason") in ("error", "aborted"):  # its calls never run
                            end_without_result(new_row.tool, message.get("stopReason"))
                self._append(new_rows)
                self._remember(message, new_rows)
            self._stream_rows = {}
            self.assistantFinished.emit(message)
        elif role == "toolResult":
            call_id = str(message.get("toolCallId"))
            card = self._cards.get(call_id)
            if card is not None:
                apply_tool_result(card, message)
                self._attach_result_images(message)
                card_row = self._card_rows.get(call_id)
                if card_row is not None:
                    self._changed(card_row)
                self._remember(message, [])
            else:
                new_rows = rows_for_message(message, self._cards)
                self._append(new_rows)
                self._remember(message, new_rows)
        elif role == "bashExecution" and id(message) in self._user_command_rows:
            shown = self._user_command_rows.pop(id(message))  # streamed into its card as it ran
            self._remember(message, [shown[1]])
        elif role == "user":
            pending = self._pending_user
            if pending is not None and pending[0] is message:
                self._remember(message, pending[1])
            self._pending_user = None
        else:
            new_rows = rows_for_message(message, self._cards)
            self._append(new_rows)
            self._remember(message, new_rows)

    def _finish_streamed_message(self, message: dict[str, Any]) -> None:
        content = message.get("content") or []
        for index, row in self._stream_rows.items():
            block = content[index] if 0 <= index < len(content) and isinstance(content[index], dict) else {}
            if row.kind is RowKind.TEXT and row.streaming:
                self._finish_stream_row(row, str(block.get("text", row.text)))
            elif row.kind is RowKind.THINKING and row.streaming:
                self._finish_stream_row(row, str(block.get("thinking", row.text)))
            elif row.tool is not None and row.streaming:
                row.streaming = False
                if message.get("stopReason") in ("error", "aborted"):  # its calls never run
                    end_without_result(row.tool, message.get("stopReason"))
                self._changed(row)
        marked = self._mark_incomplete(message)
        self._append(self._take_failure(stop_rows(message, marked), message))

    def _head_answer(self, row: ChatRow, message: dict[str, Any]) -> None:
        """The first row streamed of an answer is headed with its model and time."""
        if not self._stream_rows:
            row.head = head_of(message)

    def _mark_incomplete(self, message: dict[str, Any]) -> bool:
        """Put the incomplete note on the last streamed row of an answer that ended early, when something
        of it was shown; True when it did."""
        mark = incomplete_mark(message)
        shown = [row for row in self._stream_rows.values() if row.text.strip() or row.tool is not None]
        if mark is None or not shown:
            return False
        last = shown[-1]  # rows are kept in the order of the message's content
        last.mark = mark
        self._changed(last)
        return True

    # ---- the user's own commands -----------------------------------------------------------------

    def _on_user_command_start(self, event: UserCommandStart) -> None:
        card = ToolCard("", "bash", {"command": event.command}, status="running")
        card.started_at = time.monotonic()
        row = ChatRow(RowKind.TOOL, tool=card, title=user_command_title(event.exclude_from_context))
        self._user_commands[event.run_id] = row
        self._append([row])
        if not self._tick_timer.isActive():
            self._tick_timer.start()
        self.userCommandRunning.emit(True)

    def _on_user_command_update(self, event: UserCommandUpdate) -> None:
        row = self._user_commands.get(event.run_id)
        if row is None or row.tool is None:
            return
        text = row.tool.result_text + event.delta
        row.tool.result_text = text[-SHELL_SHOWN_CHARS:]  # the tail, as the engine keeps it
        self._mark_dirty(row)

    def _on_user_command_end(self, event: UserCommandEnd) -> None:
        row = self._user_commands.pop(event.run_id, None)
        if row is None or row.tool is None:
            return
        self.flush()
        row.tool.finished_at = time.monotonic()
        finish_user_command(row.tool, event.message)
        self._user_command_rows[id(event.message)] = (event.message, row)
        self._changed(row)
        self.userCommandRunning.emit(bool(self._user_commands))

    def _on_tool_execution_start(self, event: ToolExecutionStart) -> None:
        card = self._cards.get(event.tool_call_id)
        if card is None:
            card = ToolCard(event.tool_call_id, event.tool_name, dict(event.args or {}))
            row = ChatRow(RowKind.TOOL, tool=card)
            self._register_card(card, row)
            self._append([row])
        card.status = "running"
        card.started_at = time.monotonic()
        self._changed(self._card_rows[event.tool_call_id])
        if not self._tick_timer.isActive():
            self._tick_timer.start()

    def _on_tool_execution_update(self, event: ToolExecutionUpdate) -> None:
        card = self._cards.get(event.tool_call_id)
        partial = event.partial_result
        if card is None or not isinstance(partial, dict):
            return
        card.result_text = text_of(partial.get("content"))
        self._mark_dirty(self._card_rows[event.tool_call_id])

    def _on_tool_execution_end(self, event: ToolExecutionEnd) -> None:
        self._alive()
        card = self._cards.get(event.tool_call_id)
        if card is None:
            return
        card.finished_at = time.monotonic()
        card.status = "error" if event.is_error else "done"
        result = event.result if isinstance(event.result, dict) else {}
        card.result_text = text_of(result.get("content")) or card.result_text
        card.truncated, card.full_output_path = tool_result_details(result)
        card.model_lines, card.total_lines = truncation_lines(result.get("details"))
        self._changed(self._card_rows[event.tool_call_id])
        if not any(c.status == "running" for c in self._cards.values()):
            self._tick_timer.stop()

    def show_approval(self, call_id: str, request: ApprovalRequest | None) -> bool:
        """Show the call's card as waiting for approval (``request``), or as it was (None); False when the
        chat has no card for the call."""
        self.flush()
        card = self._cards.get(call_id)
        if card is None:
            return False
        card.approval = request
        self._changed(self._card_rows[call_id])
        return True

    def _on_queue_update(self, event: QueueUpdate) -> None:
        self.queueChanged.emit(list(event.steering), list(event.follow_up))

    def _on_compaction_start(self, event: CompactionStart) -> None:
        reasons = {
            "manual": "as you asked",
            "threshold": "the context is nearly full",
            "overflow": "the model ran out of room",
            "governor": "the working set reached its limit",
        }
        text = f"Summarising older messages ({reasons.get(event.reason, event.reason)})…"
        self._compaction_row = self.add_notice("Compacting conversation", text)

    def _on_compaction_end(self, event: CompactionEnd) -> None:
        row = self._compaction_row or self.add_notice("Compaction")
        self._compaction_row = None
        if event.error_message and _NOTHING_TO_COMPACT.search(event.error_message):
            # not a failure: there is simply nothing (more) to summarise yet
            row.kind = RowKind.NOTICE
            row.title = "Nothing to compact"
            already = "Already compacted" in event.error_message
            row.text = (
                "The conversation was compacted already and nothing new has been said since."
                if already
                else "The conversation is still short enough to keep whole; there is nothing to summarise yet."
            )
            row.hint = ""
        elif event.error_message:
            row.kind = RowKind.ERROR
            row.title = "Compaction failed"
            from piwork.core.llm import readable_error

            row.text = readable_error(event.error_message)
            row.hint = "You can keep working; run /compact again later or start a new session."
        elif event.aborted:
            row.title = "Compaction cancelled"
            row.text = "The conversation was left as it was."
        else:
            result = event.result or {}
            tokens = result.get("tokensBefore")
            row.title = "Conversation compacted" + (
                f" (was {tokens:,} tokens)" if isinstance(tokens, int) else ""
            )
            row.text = readable_summary(str(result.get("summary", "")))
            row.collapsed = True
        self._changed(row)
        self.compactionFinished.emit()

    def _take_failure(self, rows: list[ChatRow], message: dict[str, Any]) -> list[ChatRow]:
        """A failed reply shows one card: during a retry sequence its error goes on the retry card."""
        if message.get("stopReason") != "error":
            return rows
        errors = [row for row in rows if row.kind is RowKind.ERROR]
        if self._retry is not None:
            self._retry.failed_again(len(self._retry.history) + 1, str(message.get("errorMessage") or ""))
            self._changed(self._retry.row)
            return [row for row in rows if row.kind is not RowKind.ERROR]
        if errors:
            self._last_error_row = errors[-1]
        return rows

    def _on_auto_retry_start(self, event: AutoRetryStart) -> None:
        now = time.monotonic()
        if self._retry is None:
            row = self._last_error_row
            if row is None:  # a summary request being retried: no failed reply row to take over
                row = self.add_notice("Retrying", error=True)
            self._retry = RetryCard.from_failure_row(row)
        self._retry.waiting(event.attempt, event.max_attempts, event.delay_ms, event.error_message, now)
        self._last_activity = self._retry.deadline or now
        self._set_waiting("")
        self._changed(self._retry.row)

    def _on_auto_retry_end(self, event: AutoRetryEnd) -> None:
        card = self._retry or RetryCard(self.add_notice("Retry", error=True))
        self._retry = None
        self._last_error_row = None
        card.finished(event.success, event.attempt, event.final_error)
        self._changed(card.row)

    # ---- waiting for the model ---------------------------------------------------------------

    def _alive(self) -> None:
        self._last_activity = time.monotonic()
        if self._waiting_text:
            self._set_waiting("")

    def _set_waiting(self, text: str) -> None:
        if text != self._waiting_text:
            self._waiting_text = text
            self.waitingChanged.emit(text)

    def _on_wait_tick(self) -> None:
        now = time.monotonic()
        retry = self._retry
        if retry is not None and retry.deadline is not None:
            retry.tick(now)  # the card counts the wait down
            self._changed(retry.row)
            if now < retry.deadline:
                return
        if any(card.status == "running" for card in self._cards.values()):
            self._set_waiting("")  # a tool is working, not the model
            return
        silent = now - self._last_activity
        if silent < WAIT_AFTER_S:
            return
        seconds = int(silent)
        if self._receiving:
            self._set_waiting(f"The model has sent nothing for {seconds} s — still waiting (Esc stops)")
        else:
            self._set_waiting(f"Waiting for the model… {seconds} s (Esc stops)")

    def _on_error(self, event: ErrorNotice) -> None:
        source = str(event.source)
        title = _NOTICE_TITLES.get(source, "Something needs attention")
        self.add_notice(title, event.message, error=source == "session file")

    def _on_model_changed(self, event: ModelChanged) -> None:
        self.modelChanged.emit(event.provider, event.model_id)

    def _on_thinking_level_changed(self, event: ThinkingLevelChanged) -> None:
        self.thinkingLevelChanged.emit(event.level)

    def _on_session_tree(self, _event: TreeNavigated) -> None:
        self.treeNavigated.emit()

    # ---- batching ----------------------------------------------------------------------------

    def _queue_delta(self, row: ChatRow, delta: str) -> None:
        entry = self._pending.get(row.key)
        if entry is None:
            self._pending[row.key] = (row, [delta])
        else:
            entry[1].append(delta)
        self._start_flush_timer()

    def _mark_dirty(self, row: ChatRow) -> None:
        self._dirty[row.key] = row
        self._start_flush_timer()

    def _start_flush_timer(self) -> None:
        if not self._flush_timer.isActive():  # never postpone a flush that is already due
            self._flush_timer.start()

    def flush(self) -> None:
        self._flush_timer.stop()
        pending, self._pending = self._pending, {}
        dirty, self._dirty = self._dirty, {}
        for row, parts in pending.values():
            row.text += "".join(parts)
            dirty[row.key] = row
        for row in dirty.values():
            self._changed(row)
        if dirty:
            self.flushed.emit()

    def _finish_stream_row(self, row: ChatRow, final_text: str) -> None:
        entry = self._pending.pop(row.key, None)
        if entry is not None:
            row.text += "".join(entry[1])
        row.text = final_text or row.text
        row.streaming = False
        self._changed(row)

    # ---- helpers -----------------------------------------------------------------------------

    def _attach_result_images(self, message: dict[str, Any]) -> None:
        """Images a tool returned (a screenshot, a read image file) show on its card."""
        if message.get("role") != "toolResult":
            return
        row = self._card_rows.get(str(message.get("toolCallId")))
        images = images_of(message.get("content"))
        if row is not None and images:
            row.images = images

    def _register_card(self, card: ToolCard, row: ChatRow) -> None:
        self._cards[card.call_id] = card
        self._card_rows[card.call_id] = row

    def _append(self, rows: list[ChatRow]) -> None:
        self.model.append_rows(rows)

    def _changed(self, row: ChatRow) -> None:
        row.touch()
        self.model.notify_changed(row)

    def _set_busy(self, busy: bool) -> None:
        if busy != self.busy:
            self.busy = busy
            self.busyChanged.emit(busy)

    def _on_tick(self) -> None:
        self.tick.emit()


def _block(message: dict[str, Any], index: int) -> dict[str, Any]:
    content = message.get("content") or []
    if 0 <= index < len(content) and isinstance(content[index], dict):
        block: dict[str, Any] = content[index]
        return block
    return {}


# What ``ChatPresenter.handle`` calls for each kind of event, made with the first event (the engine's event
# types load after the window's first frame).
_EVENT_HANDLERS: dict[type[Any], str] = {}


def _event_handlers() -> dict[type[Any], str]:
    from piwork.core import agent

    _EVENT_HANDLERS.update(
        {
            agent.AgentStart: "_on_agent_start",
            agent.AgentSettled: "_on_agent_settled",
            agent.TurnStart: "_on_turn_start",
            agent.AgentEnd: "_on_agent_end",
            agent.MessageStart: "_on_message_start",
            agent.MessageUpdate: "_on_message_update",
            agent.MessageEnd: "_on_message_end",
            agent.ToolExecutionStart: "_on_tool_execution_start",
            agent.ToolExecutionUpdate: "_on_tool_execution_update",
            agent.ToolExecutionEnd: "_on_tool_execution_end",
            agent.QueueUpdate: "_on_queue_update",
            agent.CompactionStart: "_on_compaction_start",
            agent.CompactionEnd: "_on_compaction_end",
            agent.AutoRetryStart: "_on_auto_retry_start",
            agent.AutoRetryEnd: "_on_auto_retry_end",
            agent.ErrorNotice: "_on_error",
            agent.ModelChanged: "_on_model_changed",
            agent.ThinkingLevelChanged: "_on_thinking_level_changed",
            agent.TreeNavigated: "_on_session_tree",
            agent.UserCommandStart: "_on_user_command_start",
            agent.UserCommandUpdate: "_on_user_command_update",
            agent.UserCommandEnd: "_on_user_command_end",
        }
    )
    return _EVENT_HANDLERS
