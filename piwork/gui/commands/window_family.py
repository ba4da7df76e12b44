"""The window's own dialogs from the composer: /hotkeys, /search, /trust, /settings."""

from __future__ import annotations

from typing import TYPE_CHECKING

from piwork.gui.commands.registry import Command

if TYPE_CHECKING:
    from piwork.gui.commands.context import CommandContext


def search(ctx: CommandContext, args: str) -> None:
    dialog = ctx.window.show_search()
    if args.strip():
        dialog.set_query(args.strip())


COMMANDS = (
    Command("hotkeys", "", "List the keyboard shortcuts", lambda ctx, _args: ctx.window.show_shortcuts()),
    Command("search", "[words]", "Search every session of the project", search),
    Command(
        "trust",
        "",
        "Decide whether this project's resources may load",
        lambda ctx, _args: ctx.window.show_trust(),
    ),
    Command(
        "settings", "", "Providers, default model, compaction", lambda ctx, _args: ctx.window.show_settings()
    ),
)
