"""Billed traffic outside replies: the ``usage`` entries Pi 1.6 writes on a branch (prompt-cache warming and
the like). They count in billed tokens and cost, never in the context."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from piwork.core.context.records import BilledSample
from piwork.core.session.timestamps import js_date_ms
from piwork.core.session.tree import SessionTree


def branch_usage_entries(tree: SessionTree, leaf_id: str | None) -> list[dict[str, Any]]:
    """The ``usage`` entries on the path to ``leaf_id`` (``None``: the tree's current leaf), root first
    (bodies may be read from disk: call it off the GUI thread for a large file)."""
    out: list[dict[str, Any]] = []
    for record in tree.path() if leaf_id is None else tree.path(leaf_id):
        if record.type != "usage":
            continue
        body = tree.body(record)
        if isinstance(body, dict) and isinstance(body.get("usage"), Mapping):
            out.append(body)
    return out


def _number(value: Any) -> float:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    return float(value) if ok else 0.0


def usage_cost(usage: Mapping[str, Any]) -> float:
    cost = usage.get("cost")
    return _number(cost.get("total")) if isinstance(cost, Mapping) else 0.0


def usage_sample(entry: Mapping[str, Any]) -> BilledSample:
    """A ``usage`` entry as one point of the billed series."""
    usage = entry["usage"]
    stamp = js_date_ms(entry.get("timestamp"))
    return BilledSample(
        time_ms=int(stamp) if math.isfinite(stamp) else 0,
        provider=str(entry.get("provider") or ""),
        model=str(entry.get("model") or ""),
        input=int(_number(usage.get("input"))),
        output=int(_number(usage.get("output"))),
        cache_read=int(_number(usage.get("cacheRead"))),
        cache_write=int(_number(usage.get("cacheWrite"))),
        cost=usage_cost(usage),
    )
