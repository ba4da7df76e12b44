"""Built-in tools (read, bash, grep, find, ls, edit, write), their contract and their registry.

Public API (what callers outside the engine import from this package): ``list_session_logs`` and
``LogInfo``, the full-output logs the tools kept for a session; ``read_file_arguments`` (with
``FileArguments`` and ``FileArgumentError``), files named with ``@`` turned into prompt text and images;
``tool_facts`` (a ``ToolFacts``), what a built-in tool declares about itself, with ``FileAction`` and
``FILE_ACTION_WORDS``, the ways a call touches a file.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from piwork.core.lazy_exports import load_export

if TYPE_CHECKING:
    from piwork.core.tools.base import FILE_ACTION_WORDS, FileAction, ToolFacts
    from piwork.core.tools.file_arguments import FileArgumentError, FileArguments, read_file_arguments
    from piwork.core.tools.logs import LogInfo, list_session_logs
    from piwork.core.tools.registry import tool_facts

__all__ = [
    "FILE_ACTION_WORDS",
    "FileAction",
    "FileArgumentError",
    "FileArguments",
    "LogInfo",
    "ToolFacts",
    "list_session_logs",
    "read_file_arguments",
    "tool_facts",
]

# Each public name is loaded from its module on first use (see piwork.core.lazy_exports).
_EXPORTS: dict[str, tuple[str, str]] = {
    "FileArgumentError": ("file_arguments", "FileArgumentError"),
    "FileArguments": ("file_arguments", "FileArguments"),
    "read_file_arguments": ("file_arguments", "read_file_arguments"),
    "LogInfo": ("logs", "LogInfo"),
    "list_session_logs": ("logs", "list_session_logs"),
    "FILE_ACTION_WORDS": ("base", "FILE_ACTION_WORDS"),
    "FileAction": ("base", "FileAction"),
    "ToolFacts": ("base", "ToolFacts"),
    "tool_facts": ("registry", "tool_facts"),
}


def __getattr__(name: str) -> object:
    return load_export(__name__, _EXPORTS, name)
