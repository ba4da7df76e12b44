"""Pi-compatible JSONL sessions: format and migration, reading, the entry tree, context, files.

Modules: ``format`` (names, serialization, parsing), ``migrate`` (v1→v2→v3), ``reader`` (a file
into records and diagnostics), ``line_index`` (message lines indexed from their bytes),
``records`` (the light per-entry index), ``other_writers`` (a Pi or another piwork writing a file),
``appended`` (the lines appended since a file was last read), ``body_source`` (entry bodies read back by offset, in
windows), ``file_bodies`` (the body loader a session's tree is built with), ``tree`` (navigation,
labels, appends, context), ``context`` (Pi's context rules over plain entries), ``store`` (files, locks, durable appends), ``branching`` (clone, fork),
``listing`` (the session browser).

Public API (what callers outside the engine import from this package):
- files: ``open_session`` -> ``Session``, ``default_session_dir``, ``clone_session``,
  ``fork_session``, ``create_branched_session``, ``closed_in_worker`` (a session let go with the disk
  waited on in a worker);
- other writers of a file: ``FileChange`` (the file as read after it changed; ``Session.follow``,
  ``Session.take_over``), ``OtherWriter``, ``appending_writer``, ``lock_held_by``, ``locks_visible``;
- the tree: ``SessionTree``, ``TreeEvent``, ``EntryRecord``;
- the browser and search: ``list_sessions``, ``list_all_sessions``, ``read_header``,
  ``SessionInfo``; ``search_sessions``, ``files_to_search``, ``SearchQuery``, ``SearchHit``,
  ``SessionHits``, ``SESSION_NAME`` (the kind of a hit on the session's name);
- the tree graph: ``GraphRows``, ``Fold``, ``FOLD_AT``, ``GraphLayout``, ``NOTHING_SHOWN``,
  ``Splice``, ``Refold``, ``RowLinks``, ``SummaryLinks``, ``NO_LINKS``;
- branch activity and comparison: ``BranchActivity``, ``FileSummary``, ``FileTouch``,
  ``compare_branches``, ``BranchComparison``, ``conversation_leaf``, ``path_activity``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from piwork.core.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from piwork.core.session.branch_activity import BranchActivity, FileSummary, FileTouch
    from piwork.core.session.branch_compare import (
        BranchComparison,
        compare_branches,
        conversation_leaf,
        path_activity,
    )
    from piwork.core.session.branching import clone_session, create_branched_session, fork_session
    from piwork.core.session.format import default_session_dir
    from piwork.core.session.graph_layout import NOTHING_SHOWN, GraphLayout, Splice
    from piwork.core.session.graph_links import NO_LINKS, RowLinks, SummaryLinks
    from piwork.core.session.graph_rows import FOLD_AT, Fold, GraphRows, Refold
    from piwork.core.session.listing import SessionInfo, list_all_sessions, list_sessions, read_header
    from piwork.core.session.other_writers import OtherWriter, appending_writer, lock_held_by, locks_visible
    from piwork.core.session.records import EntryRecord
    from piwork.core.session.search import (
        SESSION_NAME,
        SearchHit,
        SearchQuery,
        SessionHits,
        files_to_search,
        search_sessions,
    )
    from piwork.core.session.store import FileChange, Session, closed_in_worker, open_session
    from piwork.core.session.tree import SessionTree, TreeEvent

__all__ = [
    "FOLD_AT",
    "NOTHING_SHOWN",
    "NO_LINKS",
    "SESSION_NAME",
    "BranchActivity",
    "BranchComparison",
    "EntryRecord",
    "FileChange",
    "FileSummary",
    "FileTouch",
    "Fold",
    "GraphLayout",
    "GraphRows",
    "OtherWriter",
    "Refold",
    "RowLinks",
    "SearchHit",
    "SearchQuery",
    "Session",
    "SessionHits",
    "SessionInfo",
    "SessionTree",
    "Splice",
    "SummaryLinks",
    "TreeEvent",
    "appending_writer",
    "clone_session",
    "closed_in_worker",
    "compare_branches",
    "conversation_leaf",
    "create_branched_session",
    "default_session_dir",
    "files_to_search",
    "fork_session",
    "list_all_sessions",
    "list_sessions",
    "lock_held_by",
    "locks_visible",
    "open_session",
    "path_activity",
    "read_header",
    "search_sessions",
]

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "BranchActivity": "piwork.core.session.branch_activity",
            "FileSummary": "piwork.core.session.branch_activity",
            "FileTouch": "piwork.core.session.branch_activity",
            "BranchComparison": "piwork.core.session.branch_compare",
            "compare_branches": "piwork.core.session.branch_compare",
            "conversation_leaf": "piwork.core.session.branch_compare",
            "path_activity": "piwork.core.session.branch_compare",
            "clone_session": "piwork.core.session.branching",
            "create_branched_session": "piwork.core.session.branching",
            "fork_session": "piwork.core.session.branching",
            "default_session_dir": "piwork.core.session.format",
            "NOTHING_SHOWN": "piwork.core.session.graph_layout",
            "GraphLayout": "piwork.core.session.graph_layout",
            "Splice": "piwork.core.session.graph_layout",
            "NO_LINKS": "piwork.core.session.graph_links",
            "RowLinks": "piwork.core.session.graph_links",
            "SummaryLinks": "piwork.core.session.graph_links",
            "FOLD_AT": "piwork.core.session.graph_rows",
            "Fold": "piwork.core.session.graph_rows",
            "GraphRows": "piwork.core.session.graph_rows",
            "Refold": "piwork.core.session.graph_rows",
            "SessionInfo": "piwork.core.session.listing",
            "list_all_sessions": "piwork.core.session.listing",
            "list_sessions": "piwork.core.session.listing",
            "read_header": "piwork.core.session.listing",
            "OtherWriter": "piwork.core.session.other_writers",
            "appending_writer": "piwork.core.session.other_writers",
            "lock_held_by": "piwork.core.session.other_writers",
            "locks_visible": "piwork.core.session.other_writers",
            "EntryRecord": "piwork.core.session.records",
            "SESSION_NAME": "piwork.core.session.search",
            "SearchHit": "piwork.core.session.search",
            "SearchQuery": "piwork.core.session.search",
            "SessionHits": "piwork.core.session.search",
            "files_to_search": "piwork.core.session.search",
            "search_sessions": "piwork.core.session.search",
            "FileChange": "piwork.core.session.store",
            "Session": "piwork.core.session.store",
            "closed_in_worker": "piwork.core.session.store",
            "open_session": "piwork.core.session.store",
            "SessionTree": "piwork.core.session.tree",
            "TreeEvent": "piwork.core.session.tree",
        },
    )
