"""Each slash command is declared once: the completer, the palette, Help and the chat's routing read the
registry, and a command added to a registry runs with the declared context alone."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from piwork.gui.chat.chat_panel import ChatPanel
from piwork.gui.commands import BUILTIN, Command, CommandContext, CommandRegistry, SlashCommand
from piwork.gui.palette.sources import command_items
from piwork.gui.shortcuts_dialog import ShortcutsDialog


def test_a_name_is_declared_once() -> None:
    registry = CommandRegistry([Command("hello", "", "Say hello", lambda _ctx, _args: None)])
    with pytest.raises(ValueError, match="/hello is declared twice"):
        registry.add(Command("hello", "[who]", "Say hello again"))


def test_the_completer_the_palette_and_help_list_the_registry(qtbot: QtBot) -> None:
    panel = ChatPanel()
    qtbot.addWidget(panel)
    words = set(panel.composer.completion_words())
    runnable = {f"/{c.name}" for c in BUILTIN if c.run is not None}
    assert runnable <= words
    assert "/skill:" not in words  # offered only when skills are offered as commands
    palette = {item.title for item in command_items(BUILTIN, lambda _c: None, lambda _t: None, None)}
    assert palette == runnable
    dialog = ShortcutsDialog()
    qtbot.addWidget(dialog)
    typed = {dialog.table.item(r, 2).text().split()[0] for r in range(dialog.table.rowCount())}
    assert {f"/{c.name}" for c in BUILTIN} | {"!command", "!!command"} <= typed


def test_the_chat_routes_what_the_registry_runs(qtbot: QtBot) -> None:
    panel = ChatPanel()
    qtbot.addWidget(panel)
    for command in BUILTIN:
        if command.run is None:
            continue
        with qtbot.waitSignal(panel.commandSubmitted) as routed:
            panel.composer.set_text(f"/{command.name}")
            panel.composer.submit()
        assert routed.args[0].name == command.name
    with qtbot.waitSignal(panel.promptSubmitted):  # not a window command: the agent's (a template)
        panel.composer.set_text("/review the diff")
        panel.composer.submit()


class _Notices:
    def __init__(self) -> None:
        self.seen: list[tuple[str, str, bool]] = []

    def add_notice(self, title: str, text: str = "", hint: str = "", error: bool = False) -> object:
        self.seen.append((title, text, error))
        return None


class _Tasks:
    def __init__(self) -> None:
        self.started: list[asyncio.Task[Any]] = []

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(coro)
        self.started.append(task)
        return task


def test_a_handler_gets_the_declared_context(qtbot: QtBot, tmp_path: Path) -> None:
    """A command of one's own: it reads the composer's text and answers in the notices, nothing else."""
    panel = ChatPanel()
    qtbot.addWidget(panel)
    notices = _Notices()

    def echo(ctx: CommandContext, args: str) -> None:
        ctx.notice("echo", f"{args} | {ctx.composer.toPlainText()} | {ctx.runtime}")

    registry = CommandRegistry([Command("echo", "<words>", "Say the words back", echo)])
    ctx = CommandContext(
        notices=notices,
        tasks=_Tasks(),
        sessions=_NoSession(tmp_path),  # type: ignore[arg-type]  # no session open: none of it is asked
        model_choice=None,  # type: ignore[arg-type]  # nor is a model picked
        composer=panel.composer,
        window=None,  # type: ignore[arg-type]  # this handler never reaches the window
        context=None,  # type: ignore[arg-type]
    )
    panel.composer.set_text("draft")
    command = SlashCommand("echo", "hi there")
    assert registry.run(ctx, command.name, command.args)
    assert notices.seen == [("echo", "hi there | draft | None", False)]
    assert not registry.run(ctx, "missing", "")


class _NoSession:
    def __init__(self, folder: Path) -> None:
        self.cwd = str(folder)
        self.agent_dir = folder
        self.runtime = None
