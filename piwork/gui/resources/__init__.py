"""Resource panel: `ResourcePanel` (panel.py) shows what the engine loaded for a project and why."""

from piwork.gui.resources.panel import ResourcePanel

__all__ = ["ResourcePanel"]
