"""compaction suite: token estimates, thresholds, cut points, preparation, file ops, serialization."""

from __future__ import annotations

from typing import Any

from piwork.conformance.harness import CaseEnv
from piwork.core.compaction.cut_point import find_cut_point, find_turn_start_index
from piwork.core.compaction.file_ops import compute_file_lists, extract_file_ops, format_file_lists
from piwork.core.compaction.prepare import prepare_compaction
from piwork.core.compaction.serialize import serialize_conversation
from piwork.core.compaction.settings import CompactionSettings
from piwork.core.compaction.tokens import estimate_context_tokens, estimate_tokens, should_compact
from piwork.core.jscompat import js_truthy
from piwork.core.messages import convert_to_llm
from piwork.core.usage import calculate_context_tokens


def _estimate_tokens(args: dict[str, Any], env: CaseEnv) -> Any:
    return {"tokens": estimate_tokens(args["message"])}


def _estimate_context_tokens(args: dict[str, Any], env: CaseEnv) -> Any:
    return estimate_context_tokens(args["messages"]).to_json()


def _calculate_context_tokens(args: dict[str, Any], env: CaseEnv) -> Any:
    return {"tokens": calculate_context_tokens(args["usage"])}


def _should_compact(args: dict[str, Any], env: CaseEnv) -> Any:
    raw = args["settings"]
    settings = CompactionSettings(enabled=js_truthy(raw.get("enabled")), reserve_tokens=raw["reserveTokens"])
    return {"result": should_compact(args["contextTokens"], args["contextWindow"], settings)}


def _strict(args: dict[str, Any]) -> bool:
    """The mode a case runs in: the reference's (golden cases) unless it asks for piwork's shipped one."""
    mode = str(args.get("mode", "reference"))
    if mode not in ("reference", "shipped"):
        raise ValueError(f"unknown mode {mode!r} (reference or shipped)")
    return mode == "reference"


def _find_turn_start_index(args: dict[str, Any], env: CaseEnv) -> Any:
    return {"index": find_turn_start_index(args["entries"], args["entryIndex"], args["startIndex"])}


def _find_cut_point(args: dict[str, Any], env: CaseEnv) -> Any:
    entries = args["entries"]
    cut = find_cut_point(
        entries, args["startIndex"], args["endIndex"], args["keepRecentTokens"], strict_pi=_strict(args)
    )
    return cut.to_json()


def _prepare_compaction(args: dict[str, Any], env: CaseEnv) -> Any:
    raw = args["settings"]
    settings = CompactionSettings.from_json(raw)
    preparation = prepare_compaction(args["pathEntries"], settings, strict_pi=_strict(args))
    if preparation is None:
        return {"preparation": None}
    result = preparation.to_json()
    result["settings"] = raw  # the reference echoes the settings object it was given
    return {"preparation": result}


def _extract_file_ops(args: dict[str, Any], env: CaseEnv) -> Any:
    ops = extract_file_ops(args["messages"])
    lists = compute_file_lists(ops)
    return {**ops.to_json(), **lists.to_details(), "formatted": format_file_lists(lists)}


def _convert_to_llm(args: dict[str, Any], env: CaseEnv) -> Any:
    return {"messages": convert_to_llm(args["messages"])}


def _serialize_conversation(args: dict[str, Any], env: CaseEnv) -> Any:
    return {"text": serialize_conversation(convert_to_llm(args["messages"]))}


OPS = {
    "estimate_tokens": _estimate_tokens,
    "estimate_context_tokens": _estimate_context_tokens,
    "calculate_context_tokens": _calculate_context_tokens,
    "should_compact": _should_compact,
    "find_turn_start_index": _find_turn_start_index,
    "find_cut_point": _find_cut_point,
    "prepare_compaction": _prepare_compaction,
    "extract_file_ops": _extract_file_ops,
    "convert_to_llm": _convert_to_llm,
    "serialize_conversation": _serialize_conversation,
}
