"""frontmatter suite: parse_frontmatter."""

from __future__ import annotations

from typing import Any

from piwork.conformance.harness import CaseEnv
from piwork.core.resources.frontmatter import parse_frontmatter


def _parse(args: dict[str, Any], env: CaseEnv) -> Any:
    return parse_frontmatter(args["text"]).to_json()


OPS = {"parse_frontmatter": _parse}
