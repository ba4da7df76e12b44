"""Agent messages beyond the three LLM roles, and their conversion into LLM messages.

Messages are Pi's JSON objects (plain dicts). Besides ``user``, ``assistant`` and ``toolResult`` the
agent keeps ``bashExecution`` (a ``!`` command the user ran), ``custom`` (extension messages),
``branchSummary`` and ``compactionSummary``; ``convert_to_llm`` turns those into user messages
with the exact wrapper texts the session format specifies, so requests look the same whichever
program wrote the session.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from piwork.core.jscompat import js_number_str
from piwork.core.truncate import count_lines

Message = dict[str, Any]

LLM_ROLES = frozenset({"user", "assistant", "toolResult"})

COMPACTION_SUMMARY_PREFIX = (
    "The conversation history before this point was compacted into the following summary:\n\n<summary>\n"
)
COMPACTION_SUMMARY_SUFFIX = "\n</summary>"
BRANCH_SUMMARY_PREFIX = (
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"
)
BRANCH_SUMMARY_SUFFIX = "</summary>"


_ABSENT = object()


def _text_of(value: Any) -> str:
    """How a JavaScript template literal prints a JSON value."""
    if isinstance(value, str):
        return value
    if value is _ABSENT:
        return "undefined"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return js_number_str(value)
    if isinstance(value, list):
        return ",".join("" if v is None else _text_of(v) for v in value)
    return "[object Object]"


def bash_execution_to_text(message: Message) -> str:
    """The user-turn text that stands for a ``!`` command and its output."""
    parts = [f"Ran `{_text_of(message.get('command', _ABSENT))}`\n"]
    output = message.get("output")
    if output:
        parts.append(f"```\n{_text_of(output)}\n```")
    else:
        parts.append("(no output)")
    exit_code = message.get("exitCode")
    if message.get("cancelled"):
        parts.append("\n\n(command cancelled)")
    elif exit_code is not None and exit_code != 0:
        parts.append(f"\n\nCommand exited with code {_text_of(exit_code)}")
    full_output_path = message.get("fullOutputPath")
    if message.get("truncated") and full_output_path:
        parts.append(f"\n\n[Output truncated. Full output: {_text_of(full_output_path)}]")
    return "".join(parts)


def _user_text(text: str, source: Message) -> Message:
    result: Message = {"role": "user", "content": [{"type": "text", "text": text}]}
    if "timestamp" in source:
        result["timestamp"] = source["timestamp"]
    return result


def convert_message(message: Message) -> Message | None:
    """One agent message as an LLM message, or ``None`` when it does not go to the model."""
    role = message.get("role")
    if role in LLM_ROLES:
        return message
    if role == "bashExecution":
        if message.get("excludeFromContext"):
            return None
        return _user_text(bash_execution_to_text(message), message)
    if role == "custom":
        content = message.get("content")
        result: Message = {"role": "user"}
        if isinstance(content, str):
            result["content"] = [{"type": "text", "text": content}]
        elif "content" in message:
            result["content"] = content
        if "timestamp" in message:
            result["timestamp"] = message["timestamp"]
        return result
    if role == "branchSummary":
        summary = _text_of(message.get("summary", _ABSENT))
        return _user_text(BRANCH_SUMMARY_PREFIX + summary + BRANCH_SUMMARY_SUFFIX, message)
    if role == "compactionSummary":
        summary = _text_of(message.get("summary", _ABSENT))
        return _user_text(COMPACTION_SUMMARY_PREFIX + summary + COMPACTION_SUMMARY_SUFFIX, message)
    return None


def convert_to_llm(messages: Iterable[Message]) -> list[Message]:
    """Agent messages → the user/assistant/toolResult messages a provider receives."""
    out: list[Message] = []
    for message in messages:
        converted = convert_message(message)
        if converted is not None:
            out.append(converted)
    return out


def output_line_count(message: Message) -> int:
    """How many lines a tool result's text (its text blocks, one after another on lines of their own) or
    a shell run's output has, counted as the tools count them (a final newline ends the last line): the
    one figure the chat's tool cards and the HTML export both give."""
    if message.get("role") == "bashExecution":
        output = message.get("output")
        return count_lines(output) if isinstance(output, str) else 0
    return count_lines(message_text(message, "\n"))


def message_text(message: Message, separator: str = "") -> str:
    """The text blocks of a message's content joined (string content as is)."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return separator.join(
        block["text"]
        for block in content
        if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str)
    )
