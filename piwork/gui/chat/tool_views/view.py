"""How the chat shows a tool call: the header's summary line, the body, the badges, the menu's actions.

:class:`ToolView` is the view every tool gets unless one is registered for it: the summary is the argument
the tool declares as its command, path or pattern (``piwork.core.tools.tool_facts``), else the first of the
usual argument names, else the arguments as JSON; the body is the arguments (on an open card) and the
start of the result; a cut result gets a badge that opens the full output, and a call that will never
get a result (its reply was stopped or failed, or the session holds none) a badge saying so. A tool that
needs more (a diff, an approval card) subclasses it and overrides only what differs. Views return plain
text and declared actions; the delegate lays them out and paints them.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

from piwork.gui.logs.sgr import strip_ansi

if TYPE_CHECKING:
    from piwork.core.tools import ToolFacts
    from piwork.gui.chat.tool_card import ToolCard

PREVIEW_LINES = 8  # result lines shown on a collapsed tool card
PREVIEW_CHARS = 4000
EXPANDED_LINES = 400
SUMMARY_KEYS = ("command", "path", "file_path", "pattern", "query", "url")
"""Arguments tried, in this order, after the ones the tool declares (tools that declare nothing)."""
# a call without a result, by why (``ToolCard.no_result``): its header's badge, and the line its body says
NO_RESULT_BADGES = {
    "stopped": "not run · reply stopped",
    "failed": "not run · reply failed",
    "missing": "no result recorded",
}
NO_RESULT_NOTES = {
    "stopped": "Not run — the reply was stopped before this call could run.",
    "failed": "Not run — the reply ended with an error before this call could run.",
    "missing": (
        "No result recorded — the session holds none for this call (the agent may have ended while it"
        " ran); the model is told it has none."
    ),
}


@functools.cache
def _tool_facts() -> Callable[[str], ToolFacts]:
    """The engine's declared facts of built-in tools, imported when a first card asks (after the window's
    first frame)."""
    from piwork.core.tools import tool_facts

    return tool_facts


class CardAction(StrEnum):
    """What clicking a part of a tool card asks the chat to do."""

    OPEN_LOG = "open-log"  # show the call's full output
    APPROVE = "approve"  # a call waiting for approval: run it
    DENY = "deny"  # refuse it, with a reason for the model
    ALWAYS_ALLOW = "always-allow"  # save a rule for the project and run it


@dataclass(frozen=True, slots=True)
class Badge:
    """A small framed label in a card's header; clicking it triggers ``action``. A ``primary`` badge is
    filled with the accent colour (the one a card asks for: Approve)."""

    text: str
    action: CardAction | None = None
    primary: bool = False


class ToolView:
    """The default way to show a call of any tool (see the module's description)."""

    def title(self, card: ToolCard, label: str = "", collapsed: bool = True) -> str:
        """The card's name, with ``label`` (say "user shell") and the arrow that says a click opens (▸) or
        closes (▾) it."""
        name = card.name + (f" ({label})" if label else "")
        if not card.result_text:
            return name
        return ("▸ " if collapsed else "▾ ") + name

    def main_argument(self, card: ToolCard) -> tuple[str, str]:
        """(name, value) of the argument people care about: the command, path or pattern the tool
        declares, else the first of the usual names; ("", "") when the call has none."""
        facts = _tool_facts()(card.name)
        declared = [facts.command_argument, facts.path_argument, facts.pattern_argument]
        for key in dict.fromkeys([*(k for k in declared if k is not None), *SUMMARY_KEYS]):
            value = card.args.get(key)
            if isinstance(value, str) and value:
                return key, value
        return "", ""

    def summary(self, card: ToolCard) -> str:
        """One line after the name: the argument people care about first, then the rest."""
        _key, value = self.main_argument(card)
        if value:
            return value.splitlines()[0] if value.strip() else value
        try:
            text = json.dumps(card.args, ensure_ascii=False)
        except (TypeError, ValueError):
            text = str(card.args)
        return text if text != "{}" else ""

    def body(self, card: ToolCard, expanded: bool) -> str:
        """The card's body text (monospace): the arguments on an open card, then the result's start."""
        parts = []
        if expanded and card.args:
            parts.append(json.dumps(card.args, indent=2, ensure_ascii=False))
        if card.result_text:
            parts.append(self.preview(card, expanded))
        elif no_result(card):
            parts.append(NO_RESULT_NOTES[no_result(card)])
        return "\n\n".join(parts)

    def preview(self, card: ToolCard, expanded: bool) -> str:
        """The start of the result, and how many lines are not shown."""
        text = strip_ansi(card.result_text[: PREVIEW_CHARS * (20 if expanded else 1)])
        head = (
            text.replace("\r\n", "\n")
            .removesuffix("\n")
            .split("\n")[: EXPANDED_LINES if expanded else PREVIEW_LINES]
        )
        lines = [
            line.rsplit("\r", 1)[-1] or line for line in head
        ]  # a redrawn (progress) line: its last state
        # hidden lines are counted in the whole result (as the HTML export counts them), not only in the
        # characters read for the preview
        from piwork.core.truncate import count_lines

        hidden = count_lines(card.result_text) - len(lines) if card.result_text else 0
        if hidden > 0:
            more = f"… {hidden:,} more line{'s' if hidden != 1 else ''}"
            where = "the full output is in the log" if expanded else "click the header to expand"
            lines.append(f"{more} ({where})")
        return "\n".join(lines)

    def badges(self, card: ToolCard) -> tuple[Badge, ...]:
        """The header's badges, right to left: a cut result says how much the model saw; a call without a
        result, that it will get none (and why)."""
        why = no_result(card)
        if why:
            return (Badge(NO_RESULT_BADGES[why]),)
        if not card.truncated:
            return ()
        return (Badge(cut_text(card), CardAction.OPEN_LOG),)

    def diff_body(self, card: ToolCard) -> bool:
        """Whether the body is a diff (``+NN``/``-NN`` rows), coloured by the chat."""
        return False

    def actions(self, card: ToolCard) -> tuple[tuple[str, CardAction], ...]:
        """The card's entries in the chat's context menu (label, action), after Copy and Expand."""
        if not card.full_output_path:
            return ()
        return (("Open full output log", CardAction.OPEN_LOG),)

    def copy_text(self, card: ToolCard) -> str:
        """What copying the card gives: the name and summary, then the whole result (or why there is none)."""
        head = f"{card.name} {self.summary(card)}".strip()
        why = no_result(card)
        return f"{head}\n{NO_RESULT_NOTES[why] if why else card.result_text}".rstrip()


def no_result(card: ToolCard) -> str:
    """Why the call will never get a result (a key of ``NO_RESULT_NOTES``), or "" when it has one or may
    still get one."""
    if card.status != "aborted" or card.result_text:
        return ""
    return card.no_result if card.no_result in NO_RESULT_NOTES else ""


def cut_text(card: ToolCard) -> str:
    """How much of the output the model saw, for the card's badge."""
    if card.model_lines is not None and card.total_lines is not None and card.total_lines > card.model_lines:
        return f"model saw {card.model_lines:,} of {card.total_lines:,} lines · open log"
    return "truncated · open log"
