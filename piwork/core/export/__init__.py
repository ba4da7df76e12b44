"""Exporting and importing sessions: a self-contained HTML page of the whole tree, the active branch as
a new session file, and copying a session file into the sessions folder.

Public API: ``export_html``, ``export_branch_jsonl``, ``import_session``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from piwork.core.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from piwork.core.export.branch_file import export_branch_jsonl
    from piwork.core.export.html_export import export_html
    from piwork.core.export.session_import import import_session

__all__ = ["export_branch_jsonl", "export_html", "import_session"]

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "export_branch_jsonl": "piwork.core.export.branch_file",
            "export_html": "piwork.core.export.html_export",
            "import_session": "piwork.core.export.session_import",
        },
    )
