"""Planning a compaction and a branch summary on a large session file (no model calls).

Input: the deepest path of the benchmark session (100,000 entries in 8 branches, ~900-char bodies;
about 70,000 entries on that path). Targets on a 2-core machine: planning a compaction (cut point,
preparation, file lists, context estimate; entry bodies already loaded) under 30 µs per path entry;
serializing everything it summarizes under 40 µs per message; budgeting the whole path as an
abandoned branch under 0.5 s. Reading entry bodies from the file (``path_bodies_s``,
``collect_branch_s``) is the session store's cost and is reported for reference. Prints one JSON line.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from piwork.core.compaction.branch_entries import prepare_branch_entries
from piwork.core.compaction.compact import path_entries, plan_compaction
from piwork.core.compaction.navigate import collect_from_tree
from piwork.core.compaction.prepare import prepare_compaction
from piwork.core.compaction.settings import CompactionSettings
from piwork.core.compaction.summarize import serialize_messages
from piwork.core.compaction.tokens import estimate_context_tokens
from piwork.core.session.store import open_session
from tests.benchmarks.session_fixture import write_large_session


def _best(fn: Callable[[], Any], runs: int = 3) -> tuple[float, Any]:
    best, value = float("inf"), None
    for _ in range(runs):
        start = time.perf_counter()
        value = fn()
        best = min(best, time.perf_counter() - start)
    return best, value


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "large.jsonl"
        facts = write_large_session(path)
        session = open_session(path, writable=False)
        tree = session.tree
        tree.branch(facts["deepest_leaf"])
        settings = CompactionSettings()

        load_s, entries = _best(lambda: path_entries(tree))
        plan_s, preparation = _best(lambda: prepare_compaction(entries, settings, strict_pi=False))
        plan_tree_s, _ = _best(lambda: plan_compaction(tree, settings), runs=1)
        estimate_s, _ = _best(lambda: estimate_context_tokens(tree.build_context().messages))
        serialize_s, text = _best(lambda: serialize_messages(preparation.messages_to_summarize))
        collect_s, collected = _best(
            lambda: collect_from_tree(tree, facts["deepest_leaf"], "00000000"), runs=1
        )
        budget_s, prepared = _best(lambda: prepare_branch_entries(collected.entries, 128000 - 16384))
        session.close()
    print(
        json.dumps(
            {
                "bench": "compaction",
                "entries": facts["entries"],
                "path_entries": len(entries),
                "path_bodies_s": round(load_s, 4),
                "prepare_compaction_s": round(plan_s, 4),
                "prepare_us_per_entry": round(plan_s / len(entries) * 1e6, 1),
                "plan_from_file_s": round(plan_tree_s, 4),
                "messages_to_summarize": len(preparation.messages_to_summarize),
                "context_estimate_s": round(estimate_s, 4),
                "serialize_s": round(serialize_s, 4),
                "serialize_us_per_message": round(
                    serialize_s / max(1, len(preparation.messages_to_summarize)) * 1e6, 1
                ),
                "serialized_chars": len(text),
                "collect_branch_s": round(collect_s, 4),
                "branch_entries": len(collected.entries),
                "prepare_branch_s": round(budget_s, 4),
                "branch_messages_in_budget": len(prepared.messages),
            }
        )
    )


if __name__ == "__main__":
    main()
