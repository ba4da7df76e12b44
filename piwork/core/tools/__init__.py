"""Built-in tools (read, bash, grep, find, ls, edit, write), their contract and their registry.

Public API (what callers outside the engine import from this package): ``list_session_logs`` and
``LogInfo``, the full-output logs the tools kept for a session; ``read_file_arguments`` (with
``FileArguments`` and ``FileArgumentError``), files named with ``@`` turned into prompt text and images;
``tool_facts`` (a ``ToolFacts``), what a built-in tool declares about itself, with ``FileAction`` and
``FILE_ACTION_WORDS``, the ways a call touches a file; ``ChangePreview`` and ``preview_change``, what an edit or
write call would change, computed with the tools' own matching and nothing written.
"""

from __future__ import annotations

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
