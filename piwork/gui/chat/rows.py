"""What the chat shows, one row per visible piece: a user prompt, a block of assistant text, a thinking block,
a tool call card, a notice or an error. Rows are plain objects; ``revision`` changes whenever what is drawn
changes, so renderers can cache by it. Building rows from Pi-shaped messages lives here too (no Qt).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from piwork.gui.chat.answer_meta import AnswerHead, IncompleteMark, head_of, incomplete_mark
from piwork.gui.chat.tool_card import ToolCard
from piwork.gui.chat.tool_views import view_for

# The engine's reading of a skill invocation (its result: name, location, body, args, or None), imported
# with the first user message shown (the resources' modules load after the window's first frame) and kept
# for every later one.
_parse_skill: Callable[[str], Any] | None = None


def parse_skill_invocation(text: str) -> Any:
    global _parse_skill
    if _parse_skill is None:
        from piwork.core.resources import parse_skill_invocation as parse

        _parse_skill = parse
    return _parse_skill(text)


_keys = itertools.count(1)


class RowKind(StrEnum):
    USER = "user"
    TEXT = "text"
    THINKING = "thinking"
    TOOL = "tool"
    NOTICE = "notice"
    ERROR = "error"
    MORE = "more"  # "show earlier messages" at the top of a long conversation
    SKILL = "skill"  # a /skill:name invocation: the skill's text, collapsed (title: name, hint: file)


NO_IMAGES: tuple[
    tuple[str, str], ...
] = ()  # shared by every row without images (most rows: a long session has 100k)


@dataclass(eq=False, slots=True)
class ChatRow:
    kind: RowKind
    text: str = ""
    title: str = ""
    streaming: bool = False
    collapsed: bool = True
    hint: str = ""
    images: Sequence[tuple[str, str]] = NO_IMAGES  # (mimeType, base64 data)
    tool: ToolCard | None = None
    head: AnswerHead | None = None  # the first row of an answer: its model and time
    mark: IncompleteMark | None = None  # the last row of an answer that ended early
    key: int = field(default_factory=lambda: next(_keys))
    revision: int = 0

    def touch(self) -> None:
        self.revision += 1

    def plain_text(self) -> str:
        """What copying the row gives."""
        if self.tool is not None:
            return view_for(self.tool.name).copy_text(self.tool)
        if self.title and self.kind in (RowKind.NOTICE, RowKind.ERROR):
            return f"{self.title}\n{self.text}".rstrip()
        if self.kind is RowKind.SKILL:
            return f"Skill {self.title} ({self.hint})\n{self.text}".rstrip()
        return self.text


def body_shown(row: ChatRow) -> bool:
    """Whether the row shows a body under its header: closed thinking and skill cards, a closed long
    notice and a closed tool card without output show only their header."""
    if row.kind is RowKind.MORE:
        return False
    if row.kind in (RowKind.THINKING, RowKind.SKILL):
        return not row.collapsed
    if row.kind is RowKind.TOOL:
        return bool(row.tool and (row.tool.result_text or row.tool.approval or not row.collapsed))
    if row.kind is RowKind.NOTICE:
        return bool(row.text) and (not row.collapsed or len(row.text) <= 400)
    return True


def text_of(content: Any, separator: str = "\n") -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return separator.join(
        str(block.get("text", ""))
        for block in content
        if isinstance(block, dict) and block.get("type") == "text"
    )


def images_of(content: Any) -> Sequence[tuple[str, str]]:
    if not isinstance(content, list):
        return NO_IMAGES
    found = [
        (str(block.get("mimeType", "image/png")), str(block.get("data", "")))
        for block in content
        if isinstance(block, dict) and block.get("type") == "image" and block.get("data")
    ]
    return found or NO_IMAGES


# by the engine's kind of error (``ErrorKind``'s values)
ERROR_HINTS = {
    "auth": "Check the provider's API key in Settings → Providers (or its environment variable).",
    "quota": "The provider account is out of credit or quota; check billing with the provider.",
    "context_overflow": "The conversation no longer fits the model: run /compact, or start a new session.",
    "rate_limit": "The provider is rate-limiting; wait a little and send again.",
    "overloaded": "The provider is overloaded; wait a little and send again.",
    "server": "The provider had a server error; send again in a moment.",
    "invalid_request": "The provider refused the request; check the model's settings or pick another model.",
    "network": "Check the network connection and the provider's base URL, then send again.",
    "timeout": "The provider stopped answering; check the connection and send again.",
    "malformed_stream": "The reply stream broke off; send again.",
    "aborted": "Stopped. Send a message to continue from here.",
}


def error_hint(message: str) -> str:
    """What the person can do about a failed reply, from the engine's classification of the error text."""
    from piwork.core.llm import classify

    kind = "aborted" if message == "aborted" else classify(message).kind.value
    return ERROR_HINTS.get(kind, "Send again to retry, or pick another model.")


def tool_result_details(message: dict[str, Any]) -> tuple[bool, str | None]:
    """(truncated, full output path) from a toolResult's ``details``."""
    details = message.get("details")
    if not isinstance(details, dict):
        return False, None
    truncation = details.get("truncation")
    truncated = bool(isinstance(truncation, dict) and truncation.get("truncated"))
    path = details.get("fullOutputPath") or details.get("full_output_path")
    return truncated or bool(path), str(path) if path else None


def truncation_lines(details: Any) -> tuple[int | None, int | None]:
    """(lines the model saw, lines of the full output) from a result's ``details.truncation``."""
    truncation = details.get("truncation") if isinstance(details, dict) else None
    if not isinstance(truncation, dict) or not truncation.get("truncated"):
        return None, None
    shown, total = truncation.get("outputLines"), truncation.get("totalLines")
    if type(shown) is int and type(total) is int:  # bool is an int too, and means nothing here
        return shown, total
    return None, None


def apply_tool_result(card: ToolCard, message: dict[str, Any]) -> None:
    card.result_text = text_of(message.get("content"))
    if not card.result_text and images_of(message.get("content")):
        card.result_text = "[image]"
    card.status = "error" if message.get("isError") else "done"
    card.truncated, card.full_output_path = tool_result_details(message)
    card.model_lines, card.total_lines = truncation_lines(message.get("details"))


_FILE_LIST = re.compile(r"<(read-files|modified-files)>\n?(.*?)\n?</\1>", re.DOTALL)
_FILE_LIST_TITLES = {"read-files": "Files read", "modified-files": "Files modified"}


def readable_summary(summary: str) -> str:
    """A summary's file lists (``<read-files>`` / ``<modified-files>`` blocks, meant for the model) as
    Markdown, so they do not run into the text before them."""

    def section(match: re.Match[str]) -> str:
        paths = [line.strip() for line in match.group(2).splitlines() if line.strip()]
        listed = ", ".join(f"`{path}`" for path in paths) or "none"
        return f"\n\n**{_FILE_LIST_TITLES[match.group(1)]}:** {listed}\n"

    return _FILE_LIST.sub(section, summary)


def rows_for_message(message: dict[str, Any], tool_cards: dict[str, ToolCard]) -> list[ChatRow]:
    """Rows for one finished message. Tool results attach to the card of their call (in ``tool_cards``)."""
    role = message.get("role")
    if role == "user":
        return user_rows(message)
    if role == "assistant":
        return assistant_rows(message, tool_cards)
    if role == "toolResult":
        card = tool_cards.get(str(message.get("toolCallId")))
        if card is None:
            card = ToolCard(str(message.get("toolCallId", "")), str(message.get("toolName", "tool")))
            apply_tool_result(card, message)
            return [ChatRow(RowKind.TOOL, tool=card, images=images_of(message.get("content")))]
        apply_tool_result(card, message)
        return []
    if role == "bashExecution":
        card = ToolCard("", "bash", {"command": message.get("command", "")})
        finish_user_command(card, message)
        return [
            ChatRow(
                RowKind.TOOL, tool=card, title=user_command_title(bool(message.get("excludeFromContext")))
            )
        ]
    if role == "compactionSummary":
        tokens = message.get("tokensBefore")
        title = f"Conversation compacted (was {tokens:,} tokens)" if isinstance(tokens, int) else "Compacted"
        return [ChatRow(RowKind.NOTICE, readable_summary(str(message.get("summary", ""))), title=title)]
    if role == "branchSummary":
        summary = readable_summary(str(message.get("summary", "")))
        return [ChatRow(RowKind.NOTICE, summary, title="Summary of the branch left")]
    if role == "custom":
        if message.get("display") is False:
            return []
        custom_type = str(message.get("customType", ""))
        text = text_of(message.get("content"))
        from piwork.core.context import CUSTOM_TYPE_WORDS

        words = CUSTOM_TYPE_WORDS.get(custom_type)
        if words is None:
            return [ChatRow(RowKind.NOTICE, text, title=custom_type)]
        # piwork's own context is line-oriented plain text: keep each line (Markdown would join them).
        text = readable_summary(text).replace("\n", "  \n")
        return [ChatRow(RowKind.NOTICE, text, title=words[:1].upper() + words[1:])]
    return []


def user_command_title(excluded: bool) -> str:
    """``!cmd`` reaches the model with the next message; ``!!cmd`` never does."""
    return "user shell, not sent to the model" if excluded else "user shell"


def finish_user_command(card: ToolCard, message: dict[str, Any]) -> None:
    """A user command's card from its ``bashExecution`` message."""
    card.result_text = str(message.get("output", ""))
    card.status = "error" if message.get("cancelled") or message.get("exitCode") not in (0, None) else "done"
    card.truncated = bool(message.get("truncated")) or bool(message.get("fullOutputPath"))
    card.full_output_path = message.get("fullOutputPath")


def user_rows(message: dict[str, Any]) -> list[ChatRow]:
    """A user message; a ``/skill:`` invocation becomes a collapsed skill card plus what was typed after it."""
    text = text_of(message.get("content"))
    images = images_of(message.get("content"))
    invocation = parse_skill_invocation(text)
    if invocation is None:
        return [ChatRow(RowKind.USER, text, images=images)]
    skill = ChatRow(RowKind.SKILL, invocation.body, title=invocation.name, hint=invocation.location)
    if not invocation.args and not images:
        return [skill]
    return [skill, ChatRow(RowKind.USER, invocation.args, images=images)]


def assistant_rows(message: dict[str, Any], tool_cards: dict[str, ToolCard]) -> list[ChatRow]:
    rows: list[ChatRow] = []
    for block in message.get("content") or []:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text" and str(block.get("text", "")).strip():
            rows.append(ChatRow(RowKind.TEXT, str(block["text"])))
        elif kind == "thinking" and str(block.get("thinking", "")).strip():
            rows.append(ChatRow(RowKind.THINKING, str(block["thinking"])))
        elif kind == "toolCall":
            card = ToolCard(
                str(block.get("id", "")), str(block.get("name", "tool")), _dict(block.get("arguments"))
            )
            tool_cards[card.call_id] = card
            rows.append(ChatRow(RowKind.TOOL, tool=card))
    if rows:
        rows[0].head = head_of(message)
        rows[-1].mark = incomplete_mark(message)
    rows.extend(stop_rows(message, marked=bool(rows) and rows[-1].mark is not None))
    return rows


FAILED_TITLE = "The reply failed"
STOPPED_TITLE = "Stopped"
AGAIN_HINT = "Right-click here to Retry it, or to Edit and Resend your prompt."


def stop_rows(message: dict[str, Any], marked: bool = False) -> list[ChatRow]:
    """The card after a reply that did not end as the model meant it to. With ``marked`` (the answer
    carries its incomplete note) a stop or the output limit needs no card of its own; a failure keeps its
    card, which says why and is where retries show."""
    reason = message.get("stopReason")
    if reason == "error":
        text = str(message.get("errorMessage") or "The provider reported an error.")
        hint = f"{error_hint(text)} {AGAIN_HINT}"
        from piwork.core.llm import readable_error

        return [ChatRow(RowKind.ERROR, readable_error(text), title=FAILED_TITLE, hint=hint)]
    if marked and reason in ("aborted", "length"):
        return []
    if reason == "aborted":
        text = str(message.get("errorMessage") or "Stopped by you.")
        # stopping is the user's own choice: a neutral note, not an error
        hint = f"{error_hint('aborted')} {AGAIN_HINT}"
        return [ChatRow(RowKind.NOTICE, text, title=STOPPED_TITLE, hint=hint)]
    if reason == "length":
        return [
            ChatRow(
                RowKind.NOTICE,
                "The reply hit the output token limit and was cut short.",
                title="Reply truncated",
                hint="Ask the model to continue, or raise max tokens for this model.",
            )
        ]
    return []


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
