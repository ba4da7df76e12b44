"""The ten context layers in the order a task loads them, and where each one is delivered.

Layer 1 (context files) reaches the model in the system prompt; layers 2-7 are joined into the
context bundle (one ``custom_message`` entry before the task's first prompt); layers 8-10 arrive on
demand as user attachments or tool results. Layers 2-7 come from the repository and need trust.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

# The files the layers are read from (named here too for the context modules).
from piwork.core.paths import INDEX_PATH as INDEX_PATH
from piwork.core.paths import INTAKE_DIR as INTAKE_DIR
from piwork.core.paths import MEMORY_PATH as MEMORY_PATH
from piwork.core.paths import PROFILE_PATH as PROFILE_PATH
from piwork.core.paths import SNAPSHOT_PATH as SNAPSHOT_PATH

LayerKind = Literal[
    "contextFile",
    "profile",
    "pack",
    "index",
    "snapshot",
    "memory",
    "required",
    "taskFile",
    "testDoc",
    "externalDoc",
]
Delivery = Literal["systemPrompt", "bundle", "onDemand"]


@dataclass(frozen=True)
class Layer:
    number: int
    kind: LayerKind
    title: str
    source: str  # where piwork finds it, as shown to people
    delivery: Delivery
    trust_gated: bool


LAYERS: tuple[Layer, ...] = (
    Layer(1, "contextFile", "Nearest context files", "AGENTS.md & co.", "systemPrompt", False),
    Layer(2, "profile", "Project profile", ".pi/piwork-profile.json", "bundle", True),
    Layer(3, "pack", "Task pack", "built from the context index", "bundle", True),
    Layer(4, "index", "Context index", ".pi/context-index.json", "bundle", True),
    Layer(5, "snapshot", "Project snapshot", ".pi/project-context.md", "bundle", True),
    Layer(6, "memory", "Memory summary", ".pi/memory/memory_summary.md", "bundle", True),
    Layer(7, "required", "Required context", "profile required[] paths", "bundle", True),
    Layer(8, "taskFile", "Task files", "attached or read by the model", "onDemand", False),
    Layer(9, "testDoc", "Related tests and docs", "read by the model", "onDemand", False),
    Layer(10, "externalDoc", "External docs", "web tools, official docs first", "onDemand", False),
)
LAYER_BY_KIND: dict[str, Layer] = {layer.kind: layer for layer in LAYERS}


def layer(number_or_kind: int | str) -> Layer:
    """The layer by its number (1-10) or its kind name."""
    if isinstance(number_or_kind, int):
        if not 1 <= number_or_kind <= len(LAYERS):
            raise ValueError(f"no context layer {number_or_kind}")
        return LAYERS[number_or_kind - 1]
    try:
        return LAYER_BY_KIND[number_or_kind]
    except KeyError:
        raise ValueError(f"no context layer named {number_or_kind!r}") from None
