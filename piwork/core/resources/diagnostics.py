"""Problems found while loading resources: each names a file and says what is wrong."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

DiagnosticType = Literal["warning", "error", "collision"]


@dataclass(frozen=True)
class Collision:
    resource_type: str  # "skill" | "prompt"
    name: str
    winner_path: str
    loser_path: str

    def to_json(self) -> dict[str, Any]:
        return {
            "resourceType": self.resource_type,
            "name": self.name,
            "winnerPath": self.winner_path,
            "loserPath": self.loser_path,
        }


@dataclass(frozen=True)
class Diagnostic:
    type: DiagnosticType
    message: str
    path: str
    kind: str = ""  # stable machine-readable code, e.g. "description_required"
    collision: Collision | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type, "message": self.message, "path": self.path}
        if self.kind:
            out["kind"] = self.kind
        if self.collision is not None:
            out["collision"] = self.collision.to_json()
        return out
