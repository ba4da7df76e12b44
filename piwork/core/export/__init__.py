"""Exporting and importing sessions: a self-contained HTML page of the whole tree, the active branch as
a new session file, and copying a session file into the sessions folder.

Public API: ``export_html``, ``export_branch_jsonl``, ``import_session``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from piwork.core.lazy_exports import load_export

if TYPE_CHECKING:
    from piwork.core.export.branch_file import export_branch_jsonl
    from piwork.core.export.html_export import export_html
    from piwork.core.export.session_import import import_session

__all__ = ["export_branch_jsonl", "export_html", "import_session"]

# Each public name is loaded from its module on first use (see piwork.core.lazy_exports).
_EXPORTS: dict[str, tuple[str, str]] = {
    "export_branch_jsonl": ("branch_file", "export_branch_jsonl"),
    "export_html": ("html_export", "export_html"),
    "import_session": ("session_import", "import_session"),
}


def __getattr__(name: str) -> object:
    return load_export(__name__, _EXPORTS, name)
