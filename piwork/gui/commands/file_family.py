"""Session files and logs: /export, /import, /logs. The file work runs off the GUI thread."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import TYPE_CHECKING

from piwork.core.errors import PiworkError
from piwork.gui.commands.registry import Command
from piwork.gui.dialogs import ask_open_file, ask_save_file

if TYPE_CHECKING:
    from piwork.gui.commands.context import CommandContext

HTML_FILTER = "HTML page, every branch (*.html)"
JSONL_FILTER = "Session file, active branch only (*.jsonl)"
LOGS_LISTED = 20


def export(ctx: CommandContext, args: str) -> None:
    runtime = ctx.runtime
    source = runtime.store.path if runtime is not None and runtime.store.flushed else None
    if source is None or not Path(source).is_file():
        ctx.notice("Nothing to export yet", "The session is saved after the first reply.", error=True)
        return
    target = args.strip()
    if target:
        ctx.tasks.spawn(export_to(ctx, Path(source), Path(target).expanduser()))
    else:
        ctx.tasks.spawn(_export_asking(ctx, Path(source)))


def export_name(session_name: str | None, source: Path) -> str:
    """A file name a person recognises: the session's name (or its project folder's) and its date, not
    the session file's uuid."""
    stamp = source.name[:10] if re.match(r"\d{4}-\d{2}-\d{2}", source.name) else ""
    words = re.sub(r"[^\w.-]+", "-", session_name or "").strip("-._")[:60]
    stem = words or "session"
    return f"{stem}-{stamp}.html" if stamp else f"{stem}.html"


async def _export_asking(ctx: CommandContext, source: Path) -> Path | None:
    runtime = ctx.runtime
    folder = Path(runtime.store.cwd) if runtime is not None else Path.home()  # the project, not home
    name = runtime.store.tree.name if runtime is not None else None
    answer = await ask_save_file(
        ctx.window.parent,
        "Export Session",
        str(folder / export_name(name or folder.name, source)),
        f"{HTML_FILTER};;{JSONL_FILTER}",
    )
    if answer is None or not answer[0]:
        return None
    target, chosen = answer
    if chosen == JSONL_FILTER and not target.endswith(".jsonl"):
        target += ".jsonl"
    return await export_to(ctx, source, Path(target).expanduser())


async def export_to(ctx: CommandContext, source: Path, target: Path) -> Path | None:
    from piwork.core.export import export_branch_jsonl, export_html  # the engine's, loaded with the session

    session = ctx.session
    try:
        if target.suffix == ".jsonl":
            leaf = str(session.tree.leaf_id) if session is not None and session.tree.leaf_id else None
            written = await asyncio.to_thread(export_branch_jsonl, source, target, leaf)
            what = "The active branch was saved as a new session file"
        else:
            prompt = session.system_prompt() if session is not None else None
            tools = [{"name": n} for n in session.tool_names()] if session is not None else []
            written = await asyncio.to_thread(
                lambda: export_html(source, target, system_prompt=prompt, tools=tools)
            )
            what = "The whole session was saved as one HTML page (it needs no network to view)"
    except (PiworkError, OSError) as err:
        ctx.notice("Export failed", str(err), error=True)
        return None
    ctx.notice("Exported", f"{what}:\n{written}")
    return written


def import_file(ctx: CommandContext, args: str) -> None:
    source = args.strip()
    if source:
        ctx.tasks.spawn(import_from(ctx, Path(source).expanduser()))
    else:
        ctx.tasks.spawn(_import_asking(ctx))


async def _import_asking(ctx: CommandContext) -> Path | None:
    source = await ask_open_file(
        ctx.window.parent, "Import Session", str(Path.home()), "Sessions (*.jsonl);;All files (*)"
    )
    return await import_from(ctx, Path(source).expanduser()) if source else None


async def import_from(ctx: CommandContext, source: Path) -> Path | None:
    from piwork.core.export import import_session
    from piwork.core.session import default_session_dir

    runtime = ctx.runtime
    store = runtime.store if runtime is not None else None
    folder = store.session_dir if store is not None and store.session_dir is not None else None
    folder = folder or default_session_dir(ctx.sessions.cwd, ctx.sessions.agent_dir)
    try:
        copy = await asyncio.to_thread(import_session, source, folder)
    except (PiworkError, OSError) as err:
        ctx.notice("Import failed", str(err), error=True)
        return None
    await ctx.sessions.open_session(str(copy))
    ctx.notice("Imported", f"A copy of {source} is now open (the original is unchanged):\n{copy}")
    return copy


def logs(ctx: CommandContext, _args: str) -> None:
    ctx.tasks.spawn(list_logs(ctx))


async def list_logs(ctx: CommandContext) -> None:
    """The session's full-output logs (newest last, read in a worker), and the log viewer on the newest."""
    from piwork.core.tools import list_session_logs

    session = ctx.session
    folder = session.log_dir if session is not None else None
    found = await asyncio.to_thread(list_session_logs, folder) if folder is not None else []
    if not found:
        ctx.notice(
            "/logs", "No full-output logs yet: a command whose output was cut keeps its whole output in one."
        )
        return
    lines = [f"{len(found)} full-output log{'s' if len(found) != 1 else ''} in {folder}:"]
    for info in found[-LOGS_LISTED:]:
        command = info.metadata.get("command")
        what = f" — {' '.join(command.split())[:80]}" if isinstance(command, str) and command else ""
        lines.append(f"- {info.path.name} ({info.size:,} bytes){what}")
    if len(found) > LOGS_LISTED:
        lines.insert(1, f"(the last {LOGS_LISTED})")
    ctx.notice("/logs", "\n".join(lines))
    ctx.window.open_log(str(found[-1].path))


COMMANDS = (
    Command(
        "export",
        "[file.html|file.jsonl]",
        "Save the session as an HTML page, or its branch as a session file",
        export,
    ),
    Command(
        "import", "[file.jsonl]", "Copy a session file into this project's sessions and open it", import_file
    ),
    Command("logs", "", "List this session's full-output logs and open the newest in the log viewer", logs),
)
