"""The Tools list's rows (plain values, no Qt): every tool the session has, whether the next request sends
its schema, why not when it does not, and what it costs.

A sent tool's tokens are its share of the request as the X-ray counts it (the tool schemas encoded as one
text, each token going to the schema it starts in), so this list and the X-ray agree; a tool not sent shows
what its schema alone would count. Built in the context feed's worker, beside the X-ray.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from piwork.core.context import TokenEstimator, Xray, blocked_tool_reason, tool_schemas
from piwork.core.llm import ToolSpec

NOT_ACTIVE = "Turned off for this session: the model is not told about it."


@dataclass(frozen=True)
class ToolRow:
    name: str
    description: str
    parameters: dict[str, Any]
    sent: bool  # the next request carries its schema
    tokens: int  # sent: its share of the request; not sent: its schema alone
    reason: str = ""  # why it is not sent
    active: bool = True  # turned on for the session (a task's rules may still keep it out of requests)

    @property
    def schema_json(self) -> str:
        """The schema as the request sends it, laid out for reading (the same JSON, indented)."""
        spec = {"name": self.name, "description": self.description, "parameters": self.parameters}
        return json.dumps(spec, ensure_ascii=False, indent=2)


def tool_rows(
    every_tool: Sequence[ToolSpec],
    xray: Xray,
    estimator: TokenEstimator,
    contract: Any = None,
    active: Collection[str] | None = None,
) -> list[ToolRow]:
    """Rows for ``every_tool`` (the registry's, in its order); the X-ray's tool parts are the ones sent.
    ``contract`` is the task contract in force (a read-only task leaves the writing tools out);
    ``active`` the tools turned on for the session (None: the ones sent)."""
    sent = {part.ref: part.tokens for part in xray.parts if part.kind == "tool_schema"}
    rows = []
    for spec, schema in zip(every_tool, tool_schemas(every_tool), strict=True):
        parameters = dict(spec.parameters)
        on = spec.name in (sent if active is None else active)
        if spec.name in sent:
            rows.append(ToolRow(spec.name, spec.description, parameters, True, sent[spec.name], active=on))
            continue
        reason = blocked_tool_reason(contract, spec.name) or NOT_ACTIVE
        tokens = estimator.counter.count(schema)
        rows.append(ToolRow(spec.name, spec.description, parameters, False, tokens, reason, active=on))
    return rows
