"""Built-in tools (read, bash, grep, find, ls, edit, write), their contract and their registry.

Public API (what callers outside the engine import from this package): ``list_session_logs`` and
``LogInfo``, the full-output logs the tools kept for a session; ``read_file_arguments`` (with
``FileArguments`` and ``FileArgumentError``), files named with ``@`` turned into prompt text and images;
``tool_facts`` (a ``ToolFacts``), what a built-in tool declares about itself, with ``FileAction`` and
``FILE_ACTION_WORDS``, the ways a call touches a file; ``ChangePreview`` and ``preview_change``, what an edit or
write call would change, computed with the tools' own matching and nothing written.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from piwork.core.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from piwork.core.tools.base import FILE_ACTION_WORDS, FileAction, ToolFacts
    from piwork.core.tools.change_preview import ChangePreview, preview_change
    from piwork.core.tools.file_arguments import FileArgumentError, FileArguments, read_file_arguments
    from piwork.core.tools.logs import LogInfo, list_session_logs
    from piwork.core.tools.registry import tool_facts

__all__ = [
    "FILE_ACTION_WORDS",
    "ChangePreview",
    "FileAction",
    "FileArgumentError",
    "FileArguments",
    "LogInfo",
    "ToolFacts",
    "list_session_logs",
    "preview_change",
    "read_file_arguments",
    "tool_facts",
]

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "FILE_ACTION_WORDS": "piwork.core.tools.base",
            "FileAction": "piwork.core.tools.base",
            "ToolFacts": "piwork.core.tools.base",
            "ChangePreview": "piwork.core.tools.change_preview",
            "preview_change": "piwork.core.tools.change_preview",
            "FileArgumentError": "piwork.core.tools.file_arguments",
            "FileArguments": "piwork.core.tools.file_arguments",
            "read_file_arguments": "piwork.core.tools.file_arguments",
            "LogInfo": "piwork.core.tools.logs",
            "list_session_logs": "piwork.core.tools.logs",
            "tool_facts": "piwork.core.tools.registry",
        },
    )
