"""This session: /new, /compact, /name, /tree, /session, /fork, /clone, /copy, /reload, /resume, /quit."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from PySide6.QtWidgets import QApplication

from piwork.core.errors import PiworkError
from piwork.gui.commands.registry import Command
from piwork.gui.dialogs import ask_item, ask_text

if TYPE_CHECKING:
    from piwork.core.agent import AgentSession
    from piwork.core.session import Session, SessionTree
    from piwork.gui.commands.context import CommandContext


def new_session(ctx: CommandContext, _args: str) -> None:
    ctx.tasks.spawn(ctx.sessions.open_session(None))


def compact(ctx: CommandContext, args: str) -> None:
    session = ctx.session
    if session is not None:
        ctx.tasks.spawn(_compact(ctx, session, args or None))


async def _compact(ctx: CommandContext, session: AgentSession, focus: str | None) -> None:
    """Its outcome (including "nothing to compact") is already on the compaction card in the chat, so the
    same reason is not reported a second time as an error."""
    await ctx.sessions.keys_known(session)
    try:
        await session.compact(focus)
    except PiworkError as err:
        if str(err) != session.checkpoints.last_error:
            raise


def name_session(ctx: CommandContext, name: str) -> None:
    session = ctx.session
    if session is None:
        return
    if not name.strip():
        ctx.tasks.spawn(_ask_name(ctx, session))
        return
    _set_name(ctx, session, name)


async def _ask_name(ctx: CommandContext, session: AgentSession) -> None:
    name = await ask_text(ctx.window.parent, "Name Session", "Session name:")
    if name is not None and session is ctx.session:
        _set_name(ctx, session, name)


def _set_name(ctx: CommandContext, session: AgentSession, name: str) -> None:
    session.tree.set_name(name)
    shown = " ".join(name.split())
    ctx.window.set_session_title(shown or None)
    if shown:
        ctx.notice("Session named", f"This session is now called “{shown}”.")
    else:
        ctx.notice("Session name cleared", "The window shows the folder again.")


def show_tree(ctx: CommandContext, _args: str) -> None:
    if ctx.session is not None:
        ctx.window.show_tree()


def session_info(ctx: CommandContext, _args: str) -> None:
    runtime = ctx.runtime
    if runtime is None:
        return
    session, store = runtime.session, runtime.store
    stats = session.session_stats()
    tokens = stats.tokens
    lines = [
        f"File: {store.path if store.path is not None and store.flushed else '(not saved yet)'}",
        f"Id: {store.session_id}",
        f"Name: {session.tree.name or '—'}",
        f"Entries: {len(session.tree)} · on the active branch: {len(session.tree.path())}",
        f"Tokens: {int(tokens.get('input', 0))} in · {int(tokens.get('output', 0))} out · "
        f"{int(tokens.get('cacheRead', 0))} cache read · {int(tokens.get('cacheWrite', 0))} cache write",
        f"Cost: ${stats.cost.get('total', 0.0):.4f}",
    ]
    ctx.notice("Session", "\n".join(lines))


def copy_last_reply(ctx: CommandContext, _args: str) -> None:
    from piwork.core.messages import message_text  # the engine's, loaded with the session

    session = ctx.session
    replies = [m for m in (session.messages if session else []) if m.get("role") == "assistant"]
    text = next((t for t in (message_text(m) for m in reversed(replies)) if t.strip()), "")
    if not text:
        ctx.notice("Nothing copied", "There is no reply with text yet.", error=True)
        return
    QApplication.clipboard().setText(text)
    ctx.window.show_status("Last reply copied to the clipboard", 5000)


def clone(ctx: CommandContext, _args: str) -> None:
    runtime = ctx.runtime
    if runtime is not None:
        ctx.tasks.spawn(_clone(ctx, runtime.store))


async def _clone(ctx: CommandContext, store: Session) -> None:
    from piwork.core.session import clone_session  # the engine's, loaded with the session

    try:  # every body on the branch is read, the new file written and fsynced: in a worker
        created = await asyncio.to_thread(clone_session, store)
    except PiworkError as err:
        ctx.notice("Not cloned", str(err), error=True)
        return
    ctx.sessions.open_branched(created, "")


def fork(ctx: CommandContext, _args: str) -> None:
    runtime = ctx.runtime
    if runtime is not None:
        ctx.tasks.spawn(_fork(ctx, runtime.store))


def _fork_choices(tree: SessionTree) -> list[tuple[str, str]]:
    """The user messages of the active branch, newest first, as (entry id, one line of their text)
    (blocking: reads each one's body)."""
    from piwork.core.messages import message_text

    choices: list[tuple[str, str]] = []
    for record in reversed(tree.path()):
        body = tree.body(record) if record.type == "message" and record.role == "user" else None
        message = body.get("message") if isinstance(body, dict) else None
        if isinstance(message, dict) and isinstance(record.id, str):
            text = " ".join(message_text(message, " ").split())
            choices.append((record.id, text if len(text) < 90 else text[:89] + "…"))
    return choices


async def _fork(ctx: CommandContext, store: Session) -> None:
    from piwork.core.session import fork_session

    choices = await asyncio.to_thread(_fork_choices, store.tree)
    if not choices:
        ctx.notice("Nothing to fork from", "There is no message of yours on this branch yet.", error=True)
        return
    labels = [f"{n + 1}. {text}" for n, (_id, text) in enumerate(choices)]
    picked = await ask_item(
        ctx.window.parent, "Fork", "Start a new session just before this message:", labels
    )
    if picked is None:
        return
    try:  # like a clone, in a worker
        result = await asyncio.to_thread(fork_session, store, choices[picked][0])
    except PiworkError as err:
        ctx.notice("Not forked", str(err), error=True)
        return
    ctx.sessions.open_branched(result.session, result.editor_text)


COMMANDS = (
    Command(
        "compact",
        "[focus]",
        "Summarise older messages now, optionally focusing the summary on something",
        compact,
    ),
    Command("tree", "", "Show the session tree to branch from an earlier point", show_tree),
    Command("name", "[name]", "Name this session (asks when no name is given)", name_session),
    Command("new", "", "Start a new session in this project", new_session),
    Command("session", "", "Show this session's file, id, messages, tokens and cost", session_info),
    Command("fork", "", "Start a new session from before one of your earlier messages", fork),
    Command("clone", "", "Copy the active branch into a new session and continue there", clone),
    Command("copy", "", "Copy the last reply to the clipboard", copy_last_reply),
    Command(
        "reload",
        "",
        "Re-read skills, prompt templates, context files and settings",
        lambda ctx, _args: ctx.sessions.reload(),
    ),
    Command(
        "resume", "", "Browse and open another session", lambda ctx, _args: ctx.window.show_sessions_browser()
    ),
    Command("quit", "", "Close piwork", lambda ctx, _args: ctx.window.close()),
)
