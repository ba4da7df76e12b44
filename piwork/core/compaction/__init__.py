"""Compaction and branch summaries: keeping long sessions inside the model's context window.

Pure planning (no I/O): ``tokens`` (estimates, thresholds), ``cut_point``, ``prepare``,
``file_ops``, ``serialize``, ``branch_entries``, ``triggers`` (checkpoint decisions).
Model calls: ``summarize`` and ``prompts``. Engine entry points over a ``SessionTree``:
``compact.compact_session`` / ``compact.run_compaction`` and ``navigate.navigate_tree``.
Extension points: ``hooks``.

Public API (what callers outside the engine import from this package):
- ``CompactionSettings``, ``BranchSummarySettings``: the ``compaction`` / ``branchSummary`` settings;
- ``navigate_tree`` (moving the leaf, with an optional branch summary), ``NavigationResult``,
  ``BranchSummaryProgress``, ``branch_summary_budget``, ``collect_from_tree``,
  ``prepare_branch_entries``, ``Summarizer`` (the model call that writes summaries);
- ``estimate_context_tokens``: the context size estimate compaction decides on; ``estimate_tokens``
  for one message.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from piwork.core.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from piwork.core.compaction.branch_entries import prepare_branch_entries
    from piwork.core.compaction.navigate import (
        BranchSummaryProgress,
        NavigationResult,
        branch_summary_budget,
        collect_from_tree,
        navigate_tree,
    )
    from piwork.core.compaction.settings import BranchSummarySettings, CompactionSettings
    from piwork.core.compaction.summarize import Summarizer
    from piwork.core.compaction.tokens import estimate_context_tokens, estimate_tokens

__all__ = [
    "BranchSummaryProgress",
    "BranchSummarySettings",
    "CompactionSettings",
    "NavigationResult",
    "Summarizer",
    "branch_summary_budget",
    "collect_from_tree",
    "estimate_context_tokens",
    "estimate_tokens",
    "navigate_tree",
    "prepare_branch_entries",
]

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "prepare_branch_entries": "piwork.core.compaction.branch_entries",
            "BranchSummaryProgress": "piwork.core.compaction.navigate",
            "NavigationResult": "piwork.core.compaction.navigate",
            "branch_summary_budget": "piwork.core.compaction.navigate",
            "collect_from_tree": "piwork.core.compaction.navigate",
            "navigate_tree": "piwork.core.compaction.navigate",
            "BranchSummarySettings": "piwork.core.compaction.settings",
            "CompactionSettings": "piwork.core.compaction.settings",
            "Summarizer": "piwork.core.compaction.summarize",
            "estimate_context_tokens": "piwork.core.compaction.tokens",
            "estimate_tokens": "piwork.core.compaction.tokens",
        },
    )
