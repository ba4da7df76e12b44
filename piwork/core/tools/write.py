"""The ``write`` tool: create a file or write into the one that is there (parents created)."""

from __future__ import annotations

import asyncio
import os
import re
import threading
from typing import Any, ClassVar

from piwork.core.fs.errors import describe_os_error
from piwork.core.tools.base import Tool, ToolContext, ToolError, ToolFacts, ToolResult, UpdateCallback
from piwork.core.tools.mutation import NoReader, PathLocks, abort_checkpoint, finish_then_abort, write_into
from piwork.core.tools.paths import resolve_to_cwd
from piwork.core.tools.protected_paths import refuse_protected

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


class WriteTool(Tool):
    name = "write"
    facts = ToolFacts(file_action="write", path_argument="path")
    description = (
        "Write a file with the given content, replacing it if it exists and creating it (and any "
        "missing parent folders) if it does not."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "required": ["path", "content"],
        "properties": {
            "path": {"type": "string", "description": "File to write (absolute, or relative to the cwd)"},
            "content": {"type": "string", "description": "The complete new content of the file"},
        },
    }
    snippet = "Create files or replace their whole content"
    strict = True
    guidelines = ("Use write for new files or full rewrites; use edit for changes to existing files.",)

    def __init__(self, locks: PathLocks | None = None) -> None:
        self.locks = locks or PathLocks()

    async def execute(
        self, call_id: str, args: dict[str, Any], ctx: ToolContext, on_update: UpdateCallback | None = None
    ) -> ToolResult:
        path: str = args["path"]
        absolute = resolve_to_cwd(path, ctx.cwd)
        refuse_protected(absolute, path, ctx.cwd)
        data = _LONE_SURROGATE.sub("\ufffd", args["content"]).encode("utf-8")
        async with self.locks.hold(absolute):
            await abort_checkpoint()
            try:
                await finish_then_abort(
                    asyncio.to_thread(os.makedirs, os.path.dirname(absolute), exist_ok=True)
                )
            except OSError as err:
                raise ToolError(describe_os_error(err, "mkdir", err.filename or absolute)) from None
            await abort_checkpoint()
            try:
                stop = threading.Event()
                created = await finish_then_abort(
                    asyncio.to_thread(write_into, absolute, data, stop), stop.set
                )
            except NoReader:
                raise ToolError(f"ENXIO: no process reads from the FIFO, open '{absolute}'") from None
            except OSError as err:
                raise ToolError(describe_os_error(err, "open", absolute)) from None
            await abort_checkpoint()
        return ToolResult.text(f"Successfully wrote to {path}", {"bytes": len(data), "created": created})
