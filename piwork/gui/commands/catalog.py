"""Every slash command the window runs, gathered from the command families."""

from __future__ import annotations

from piwork.gui.commands import context_family, file_family, model_family, session_family, window_family
from piwork.gui.commands.registry import CommandRegistry

BUILTIN = CommandRegistry(
    (
        *session_family.COMMANDS,
        *model_family.COMMANDS,
        *file_family.COMMANDS,
        *window_family.COMMANDS,
        *context_family.COMMANDS,
    )
)
