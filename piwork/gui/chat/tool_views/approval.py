"""The approval card: a bash, edit or write call waiting for the user's answer.

While a call waits (``ToolCard.approval`` set), its card shows what would happen: a command with the folder
it runs in, or the diff an edit or write would make (computed by the engine before anything is written), and
three badges: Approve, Deny… (a reason for the model) and Always allow… (a rule for the project). Once
answered, the card is the default view again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from piwork.core.paths import named_path
from piwork.gui.chat.tool_views.view import Badge, CardAction, ToolView

if TYPE_CHECKING:
    from piwork.gui.chat.tool_card import ToolCard

DIFF_LINES = 400  # lines of a would-be diff shown on the card
WAITING = "Waiting for your approval"


class ApprovalView(ToolView):
    def body(self, card: ToolCard, expanded: bool) -> str:
        request = card.approval
        if request is None:
            return super().body(card, expanded)
        if request.kind == "command":
            return f"{WAITING} to run\n$ {request.command}\nin {named_path(request.cwd)}"
        change = request.change
        if change is None:
            return WAITING
        where = named_path(change.absolute, request.cwd)
        if change.error is not None:
            return (
                f"{WAITING}: {request.tool} {where}\nIt would fail without changing anything: {change.error}"
            )
        verb = "create" if change.created else request.tool
        lines = change.diff.split("\n") if change.diff else ["(no change)"]
        shown = lines[:DIFF_LINES]
        if len(lines) > DIFF_LINES:
            shown.append(f"… {len(lines) - DIFF_LINES:,} more lines")
        return f"{WAITING} to {verb} {where}\n" + "\n".join(shown)

    def diff_body(self, card: ToolCard) -> bool:
        return card.approval is not None and card.approval.kind == "file"

    def badges(self, card: ToolCard) -> tuple[Badge, ...]:
        if card.approval is None:
            return super().badges(card)
        return (
            Badge("Approve", CardAction.APPROVE, primary=True),
            Badge("Deny…", CardAction.DENY),
            Badge("Always allow…", CardAction.ALWAYS_ALLOW),
        )

    def actions(self, card: ToolCard) -> tuple[tuple[str, CardAction], ...]:
        if card.approval is None:
            return super().actions(card)
        return (
            ("Approve", CardAction.APPROVE),
            ("Deny…", CardAction.DENY),
            ("Always allow…", CardAction.ALWAYS_ALLOW),
        )
