"""branch suite: collect_branch_entries, prepare_branch_entries."""

from __future__ import annotations

from typing import Any

from piwork.conformance.harness import CaseEnv
from piwork.core.compaction.branch_entries import collect_branch_entries, prepare_branch_entries
from piwork.core.compaction.file_ops import compute_file_lists
from piwork.core.session.jsvalues import js_get


def _collect(args: dict[str, Any], env: CaseEnv) -> Any:
    result = collect_branch_entries(args["entries"], args.get("oldLeafId"), args["targetId"])
    return {"ids": [js_get(e, "id") for e in result.entries], "commonAncestorId": result.common_ancestor_id}


def _prepare(args: dict[str, Any], env: CaseEnv) -> Any:
    prepared = prepare_branch_entries(args["entries"], args.get("tokenBudget") or 0)
    return {
        "messages": prepared.messages,
        "totalTokens": prepared.total_tokens,
        "fileOps": prepared.file_ops.to_json(),
        "fileLists": compute_file_lists(prepared.file_ops).to_details(),
    }


OPS = {"collect_branch_entries": _collect, "prepare_branch_entries": _prepare}
