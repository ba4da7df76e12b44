"""Exporting and importing sessions: a self-contained HTML page of the whole tree, the active branch as
a new session file, and copying a session file into the sessions folder.

Public API: ``export_html``, ``export_branch_jsonl``, ``import_session``.
"""

from __future__ import annotations

from piwork.core.export.branch_file import export_branch_jsonl
from piwork.core.export.html_export import export_html
from piwork.core.export.session_import import import_session

__all__ = ["export_branch_jsonl", "export_html", "import_session"]
