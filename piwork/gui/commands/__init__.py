"""Slash commands: each declared once (name, arguments hint, description, handler) in a command family,
gathered in one registry that the composer's completer, the palette and Help read. Handlers receive a
``CommandContext``, never the controller. The window reaches commands only through this package."""

from piwork.gui.commands.catalog import BUILTIN
from piwork.gui.commands.context import (
    BackgroundTasks,
    CommandContext,
    ComposerText,
    ContextWork,
    ModelPicks,
    Notices,
    SearchQuery,
    SessionLifecycle,
    WindowSurface,
)
from piwork.gui.commands.parsing import SlashCommand, parse_slash
from piwork.gui.commands.registry import Command, CommandRegistry, Handler

__all__ = [
    "BUILTIN",
    "BackgroundTasks",
    "Command",
    "CommandContext",
    "CommandRegistry",
    "ComposerText",
    "ContextWork",
    "Handler",
    "ModelPicks",
    "Notices",
    "SearchQuery",
    "SessionLifecycle",
    "SlashCommand",
    "WindowSurface",
    "parse_slash",
]
