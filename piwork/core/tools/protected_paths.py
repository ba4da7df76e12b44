"""Files the model's edit and write tools refuse: piwork's context index is written only by piwork.

The check compares real paths (symlinks and ``..`` resolved, the target's folder resolved even when
the file does not exist yet) and, when both exist, file identity, so no spelling of the path gets
past it.
"""

from __future__ import annotations

import os

from piwork.core.paths import INDEX_PATH
from piwork.core.tools.base import ToolError

INDEX_REFUSAL = (
    "{path} is piwork's context index: an advisory map that the edit and write tools do not change. "
    "Run /onboard run to regenerate it or /context rebuild to refresh it; /context index-status shows "
    "which entries are stale."
)


def _real(path: str) -> str:
    # realpath resolves every existing component, including the folder of a file not created yet
    return os.path.realpath(path)


def is_context_index(absolute: str, cwd: str) -> bool:
    """Whether ``absolute`` is (or points to) the context index of the project at ``cwd``."""
    index = os.path.join(os.path.abspath(cwd), INDEX_PATH)
    if _real(absolute) == _real(index):
        return True
    try:
        return os.path.samefile(absolute, index)  # hard links
    except OSError:
        return False


def refuse_protected(absolute: str, shown_path: str, cwd: str) -> None:
    """Raise the model-facing error when a mutation targets a protected file."""
    if is_context_index(absolute, cwd):
        raise ToolError(INDEX_REFUSAL.format(path=shown_path), {"protectedPath": "context-index"})
