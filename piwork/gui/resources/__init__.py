"""Resource panel: `ResourcePanel` (panel.py) shows what the engine loaded for a project and why."""

from piwork.gui.resources.panel import ResourcePanel
from piwork.gui.tree import emit_refcount_fix  # noqa: F401  (installs the signal fix)

__all__ = ["ResourcePanel"]
