"""The ``edit`` tool: exact-text replacements in one file, with a diff for the UI."""

from __future__ import annotations

import asyncio
import json
import os
import stat
from typing import Any, ClassVar

from piwork.core.fs.errors import describe_os_error, error_code
from piwork.core.tools.base import Tool, ToolContext, ToolError, ToolFacts, ToolResult, UpdateCallback
from piwork.core.tools.diff import display_diff, unified_patch
from piwork.core.tools.edit_match import apply_edits, apply_to_original, normalize_to_lf
from piwork.core.tools.file_kinds import open_regular_for_reading, refuse_special
from piwork.core.tools.mutation import PathLocks, abort_checkpoint, finish_then_abort, write_into
from piwork.core.tools.paths import resolve_to_cwd
from piwork.core.tools.protected_paths import refuse_protected
from piwork.core.truncate import format_size

_EDIT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["oldText", "newText"],
    "properties": {
        "oldText": {
            "type": "string",
            "description": "Text to replace, exactly as in the file; unique in the file and not "
            "overlapping any other edit of this call",
        },
        "newText": {"type": "string", "description": "The text that replaces oldText"},
    },
}


def _is_single_edit(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(value.get("oldText"), str)
        and isinstance(value.get("newText"), str)
    )


MAX_EDIT_BYTES = 64 * 1024 * 1024
"""Larger files are refused: edit holds several copies of the text while matching."""


def check_edit_access(absolute: str, path: str) -> None:
    try:
        info = os.stat(absolute)
        if not os.access(absolute, os.R_OK | os.W_OK):
            raise PermissionError(13, "Permission denied", absolute)
    except OSError as err:
        raise ToolError(f"Could not edit file: {path}. Error code: {error_code(err)}.") from None
    refuse_special(info.st_mode, "edit", path)
    if stat.S_ISREG(info.st_mode) and info.st_size > MAX_EDIT_BYTES:
        raise ToolError(
            f"Cannot edit {path}: it is {format_size(info.st_size)}, more than the "
            f"{format_size(MAX_EDIT_BYTES)} edit limit. Use bash (for example sed -i) to change a file this large."
        )


def read_for_edit(absolute: str, path: str) -> str:
    fd = open_regular_for_reading(absolute, "edit", path)
    try:
        with os.fdopen(fd, "rb") as handle:
            data = handle.read(MAX_EDIT_BYTES + 1)
    except OSError as err:
        raise ToolError(describe_os_error(err, "read", absolute)) from None
    if len(data) > MAX_EDIT_BYTES:  # it grew since it was checked
        raise ToolError(
            f"Cannot edit {path}: it is larger than the {format_size(MAX_EDIT_BYTES)} edit limit."
        )
    return data.decode("utf-8", "replace")


class EditTool(Tool):
    name = "edit"
    facts = ToolFacts(file_action="edit", path_argument="path")
    description = (
        "Change a file by replacing exact text. Each edits[].oldText must appear exactly once in the "
        "original file and must not overlap another edit; all edits are matched against the original "
        "file. Combine changes to nearby lines into one edit, and keep oldText short but unique."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "required": ["path", "edits"],
        "properties": {
            "path": {"type": "string", "description": "File to edit (absolute, or relative to the cwd)"},
            "edits": {
                "type": "array",
                "items": _EDIT_SCHEMA,
                "description": "One or more disjoint replacements, each matched against the original file",
            },
        },
    }
    snippet = "Edit files by exact text replacement (several disjoint changes per call)"
    strict = True
    guidelines = (
        "Use edit for targeted changes; edits[].oldText must match the file exactly.",
        "For several changes in one file, send one edit call with several entries in edits[].",
        "Every edits[].oldText is matched against the original file, not after earlier edits; "
        "never send overlapping or nested edits, merge nearby changes instead.",
        "Keep each oldText as small as it can be while staying unique in the file.",
    )

    def __init__(self, locks: PathLocks | None = None) -> None:
        self.locks = locks or PathLocks()

    def prepare_arguments(self, arguments: Any) -> Any:
        """Accept ``edits`` as a JSON string or a single object, and legacy top-level oldText/newText."""
        if not isinstance(arguments, dict):
            return arguments
        args = dict(arguments)
        edits = args.get("edits")
        if isinstance(edits, str):
            try:
                parsed = json.loads(edits)
            except ValueError:
                parsed = None
            if isinstance(parsed, list):
                args["edits"] = parsed
            elif _is_single_edit(parsed):
                args["edits"] = [parsed]
        elif _is_single_edit(edits):
            args["edits"] = [edits]
        if not isinstance(args.get("oldText"), str) or not isinstance(args.get("newText"), str):
            return args
        merged = list(args["edits"]) if isinstance(args.get("edits"), list) else []
        merged.append({"oldText": args.pop("oldText"), "newText": args.pop("newText")})
        args["edits"] = merged
        return args

    async def execute(
        self, call_id: str, args: dict[str, Any], ctx: ToolContext, on_update: UpdateCallback | None = None
    ) -> ToolResult:
        path: str = args["path"]
        edits: list[dict[str, str]] = args["edits"]
        if not edits:
            raise ToolError("Edit tool input is invalid. edits must contain at least one replacement.")
        absolute = resolve_to_cwd(path, ctx.cwd)
        refuse_protected(absolute, path, ctx.cwd)
        async with self.locks.hold(absolute):
            await abort_checkpoint()
            check_edit_access(absolute, path)
            raw = await finish_then_abort(asyncio.to_thread(read_for_edit, absolute, path))
            bom = "\ufeff" if raw.startswith("\ufeff") else ""
            text = raw[len(bom) :]
            base = normalize_to_lf(text)
            new, replacements = apply_edits(base, edits, path)
            await abort_checkpoint()
            # spliced into the original text, so every untouched line keeps its own line ending
            final = new if text == base else apply_to_original(text, replacements)
            data = (bom + final).encode("utf-8", "replace")
            try:
                # in place, as write does: a symlink keeps pointing at its (edited) target, hard links
                # keep sharing the content, and no temporary file is needed in the folder
                await finish_then_abort(asyncio.to_thread(write_into, absolute, data))
            except OSError as err:
                raise ToolError(describe_os_error(err, "open", absolute)) from None
        shown = display_diff(base, new)
        details = {
            "diff": shown.diff,
            "patch": unified_patch(path, base, new),
            "firstChangedLine": shown.first_changed_line,
        }
        return ToolResult.text(f"Successfully replaced {len(edits)} block(s) in {path}.", details)
