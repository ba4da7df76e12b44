"""What project trust is about: one gated entry of a project, and the note beside ``.pi/mcp.json``.

Below the trust decision (``trust``) and the readings of gated files (``trust_reading``,
``trust_snapshot``, ``trust_fingerprint``, ``trust_review``), which all name the entries they cover.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

#: Said wherever ``.pi/mcp.json`` is listed: it needs trust, but piwork does nothing with it yet.
MCP_NOTE = (
    "piwork runs no MCP servers yet: this file is listed because Pi starts the servers it names "
    "once the folder is trusted"
)


@dataclass(frozen=True)
class TrustResource:
    """A project entry that needs trust before piwork loads it."""

    path: str
    kind: str  # "settings", "mcp", "skills", "prompts", "extensions", "themes", "system", "append", "agents-skills", ...

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "kind": self.kind}
