"""Built-in tools (read, bash, grep, find, ls, edit, write), their contract and their registry.

Public API (what callers outside the engine import from this package): ``list_session_logs`` and
``LogInfo``, the full-output logs the tools kept for a session; ``read_file_arguments`` (with
``FileArguments`` and ``FileArgumentError``), files named with ``@`` turned into prompt text and images.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from piwork.core.lazy_exports import load_export

if TYPE_CHECKING:
    from piwork.core.tools.file_arguments import FileArgumentError, FileArguments, read_file_arguments
    from piwork.core.tools.logs import LogInfo, list_session_logs

__all__ = ["FileArgumentError", "FileArguments", "LogInfo", "list_session_logs", "read_file_arguments"]

# Each public name is loaded from its module on first use (see piwork.core.lazy_exports).
_EXPORTS: dict[str, tuple[str, str]] = {
    "FileArgumentError": ("file_arguments", "FileArgumentError"),
    "FileArguments": ("file_arguments", "FileArguments"),
    "read_file_arguments": ("file_arguments", "read_file_arguments"),
    "LogInfo": ("logs", "LogInfo"),
    "list_session_logs": ("logs", "list_session_logs"),
}


def __getattr__(name: str) -> object:
    return load_export(__name__, _EXPORTS, name)
