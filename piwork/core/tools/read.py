"""The ``read`` tool: a text file's lines from ``offset`` within the output limits, or an image."""

from __future__ import annotations

import asyncio
import os
import shlex
import threading
from typing import Any, ClassVar

from piwork.core.fs.errors import describe_os_error
from piwork.core.tools.base import Tool, ToolContext, ToolError, ToolFacts, ToolResult, UpdateCallback
from piwork.core.tools.file_kinds import open_regular_for_reading
from piwork.core.tools.image_fit import INLINE_TYPES, ImageNotConvertible, fit_image
from piwork.core.tools.images import SNIFF_BYTES, detect_image_mime
from piwork.core.tools.line_window import LineWindow, scan_lines
from piwork.core.tools.paths import resolve_read_path
from piwork.core.tools.protected_paths import is_context_index
from piwork.core.truncate import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, format_size

BINARY_SNIFF_BYTES = 8192
INDEX_UNAVAILABLE = (
    "[piwork: .pi/context-index.json is an advisory map; its summary is not available here "
    "(/context index-status shows it).]"
)
MAX_IMAGE_FILE_BYTES = 64 * 1024 * 1024  # larger files are not decoded (memory), only reported
NO_VISION_NOTE = "[Current model does not support images. The image will be omitted from this request.]"
TOO_LARGE_NOTE = "[Image omitted: could not be resized below the inline image size limit.]"
UNSUPPORTED_NOTE = "[Image omitted: could not be converted to a supported inline image format.]"


def _check_count(name: str, value: Any, minimum: int) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not float(value).is_integer():
        raise ToolError(f"Invalid {name}: must be a whole number")
    if value < minimum:
        raise ToolError(f"Invalid {name}: must be {minimum} or more")
    return int(value)


def _read_at_most(fd: int, count: int) -> bytes:
    return os.pread(fd, count, 0)


class ReadTool(Tool):
    name = "read"
    facts = ToolFacts(read_only=True, file_action="read", elidable=True, path_argument="path")
    description = (
        "Read a file. Text files come back as lines; images (jpg, png, gif, webp) come back as image "
        f"attachments. Text output stops after {DEFAULT_MAX_LINES} lines or {DEFAULT_MAX_BYTES // 1024}KB, "
        "whichever comes first, and then says which offset continues the file. Use offset and limit to "
        "read a large file in parts."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "required": ["path"],
        "properties": {
            "path": {"type": "string", "description": "File to read (absolute, or relative to the cwd)"},
            "offset": {"type": "number", "description": "First line to read, counting from 1"},
            "limit": {"type": "number", "description": "How many lines to read at most"},
        },
    }
    snippet = "Read text files and images"
    strict = True
    guidelines = ("Prefer read over cat, head or sed for looking at files.",)

    async def execute(
        self, call_id: str, args: dict[str, Any], ctx: ToolContext, on_update: UpdateCallback | None = None
    ) -> ToolResult:
        stop = threading.Event()  # the scan runs in a thread: tell it to end when the call is aborted
        try:
            return await asyncio.to_thread(self._read, args, ctx, stop)
        except asyncio.CancelledError:
            stop.set()
            raise ToolError("Operation aborted", aborted=True) from None

    def _read(self, args: dict[str, Any], ctx: ToolContext, stop: threading.Event) -> ToolResult:
        path: str = args["path"]
        offset = _check_count("offset", args.get("offset"), 0)
        limit = _check_count("limit", args.get("limit"), 1)
        absolute = resolve_read_path(path, ctx.cwd)
        if is_context_index(absolute, ctx.cwd):
            answer = ctx.context_index(ctx.cwd) if ctx.context_index is not None else INDEX_UNAVAILABLE
            return ToolResult.text(answer, {"contextIndex": True})
        fd = open_regular_for_reading(absolute, "read", path, syscall="access")
        try:
            return self._read_open(fd, path, offset, limit, ctx, stop)
        except OSError as err:
            raise ToolError(describe_os_error(err, "read", absolute)) from None
        finally:
            os.close(fd)

    def _read_open(
        self,
        fd: int,
        path: str,
        offset: int | None,
        limit: int | None,
        ctx: ToolContext,
        stop: threading.Event,
    ) -> ToolResult:
        head = _read_at_most(fd, max(SNIFF_BYTES, BINARY_SNIFF_BYTES))
        mime = detect_image_mime(head[:SNIFF_BYTES])
        if mime is not None:
            size = os.fstat(fd).st_size
            if size > MAX_IMAGE_FILE_BYTES:
                note = "" if ctx.model_supports_images else f"\n{NO_VISION_NOTE}"
                return ToolResult.text(f"Read image file [{mime}]\n{TOO_LARGE_NOTE}{note}")
            return self._image(_read_at_most(fd, size), mime, ctx)
        if b"\0" in head[:BINARY_SNIFF_BYTES]:
            raise ToolError(
                f"Cannot read {path}: it is a binary file, not text or a supported image "
                "(jpg, png, gif, webp). Use bash (for example `file` or `xxd | head`) to inspect it."
            )
        start = max(0, offset - 1) if offset else 0
        window = scan_lines(fd, start, limit, stop)
        return self._text(window, path, offset, limit)

    def _image(self, data: bytes, mime: str, ctx: ToolContext) -> ToolResult:
        note = "" if ctx.model_supports_images else f"\n{NO_VISION_NOTE}"
        try:
            fitted = fit_image(data, mime)
        except ImageNotConvertible:
            # an inline type that does not decode cannot be fitted; another type cannot be converted
            omitted = TOO_LARGE_NOTE if mime in INLINE_TYPES else UNSUPPORTED_NOTE
            return ToolResult.text(f"Read image file [{mime}]\n{omitted}{note}")
        if fitted is None:
            return ToolResult.text(f"Read image file [{mime}]\n{TOO_LARGE_NOTE}{note}")
        hints = "".join(f"\n{hint}" for hint in fitted.hints())
        return ToolResult(
            [
                {"type": "text", "text": f"Read image file [{fitted.mime}]{hints}{note}"},
                {"type": "image", "data": fitted.data, "mimeType": fitted.mime},
            ]
        )

    def _text(self, window: LineWindow, path: str, offset: int | None, limit: int | None) -> ToolResult:
        total = window.total_file_lines  # a trailing newline counts as one more (empty) line, as Pi counts
        start = max(0, offset - 1) if offset else 0
        if start >= total:
            raise ToolError(f"Offset {offset} is beyond end of file ({total} lines total)")
        end = min(start + limit, total) if limit is not None else total
        truncation = window.truncation
        first = start + 1
        if truncation.first_line_exceeds_limit:
            size = format_size(window.first_line_bytes)
            quoted = shlex.quote(path)
            message = (
                f"[Line {first} is {size}, exceeds {format_size(DEFAULT_MAX_BYTES)} limit. "
                f"Use bash: sed -n '{first}p' {quoted} | head -c {DEFAULT_MAX_BYTES}]"
            )
            return ToolResult.text(message, {"truncation": truncation.to_json()})
        if truncation.truncated:
            last = first + truncation.output_lines - 1
            limit_note = (
                "" if truncation.truncated_by == "lines" else f" ({format_size(DEFAULT_MAX_BYTES)} limit)"
            )
            notice = f"\n\n[Showing lines {first}-{last} of {total}{limit_note}. Use offset={last + 1} to continue.]"
            return ToolResult.text(truncation.content + notice, {"truncation": truncation.to_json()})
        if limit is not None and end < total:
            notice = f"\n\n[{total - end} more lines in file. Use offset={end + 1} to continue.]"
            return ToolResult.text(truncation.content + notice)
        return ToolResult.text(truncation.content)
