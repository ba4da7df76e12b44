"""Session tree view: `SessionTreePanel` (tree_panel.py) over the engine's `SessionTree`.

Navigation goes through `AgentNavigator` (navigation.py), over the live AgentSession. A session opened
only for browsing has no navigator: it can be looked through but not moved.
"""

from piwork.gui.tree.navigation import AgentNavigator
from piwork.gui.tree.tree_panel import SessionTreePanel

__all__ = ["AgentNavigator", "SessionTreePanel"]
