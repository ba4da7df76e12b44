"""The model answering and how hard it thinks: /model, /thinking."""

from __future__ import annotations

from typing import TYPE_CHECKING

from piwork.core.vocabulary import THINKING_LEVELS
from piwork.gui.commands.registry import Command

if TYPE_CHECKING:
    from piwork.gui.commands.context import CommandContext


def model(ctx: CommandContext, args: str) -> None:
    wanted = args.strip()
    if not wanted:
        ctx.window.show_model_picker()
        return
    models = ctx.model_choice.models.models
    provider, _, model_id = wanted.rpartition("/")
    matches = [m for m in models if m.id == model_id and (not provider or m.provider == provider)] or [
        m for m in models if wanted.lower() in f"{m.provider}/{m.id}".lower()
    ]
    if len(matches) != 1:
        found = ", ".join(f"{m.provider}/{m.id}" for m in matches[:8])
        ctx.notice(
            "Model not changed",
            f"“{wanted}” names {len(matches)} models{': ' + found if found else ''}. "
            "Give provider/model, or use the picker (Ctrl+M).",
            error=True,
        )
        return
    ctx.model_choice.pick_model(matches[0].provider, matches[0].id)


def thinking(ctx: CommandContext, args: str) -> None:
    level = args.strip().lower()
    if not level:
        ctx.window.show_thinking_picker()
        return
    if level not in THINKING_LEVELS:
        ctx.notice("Thinking level not changed", f"Levels: {', '.join(THINKING_LEVELS)}.", error=True)
        return
    ctx.model_choice.pick_thinking(level)


COMMANDS = (
    Command("model", "[provider/model]", "Switch the model (opens the picker when none is given)", model),
    Command(
        "thinking", "[level]", "Set the thinking level: off, minimal, low, medium, high, xhigh, max", thinking
    ),
)
