"""Session tree view: `SessionTreePanel` (tree_panel.py) over the engine's `SessionTree`.

Navigation goes through a `Navigator` (navigation.py): `AgentNavigator` for a live AgentSession,
`TreeNavigator` for a session opened for browsing.
"""

from piwork.gui.tree.navigation import AgentNavigator, TreeNavigator
from piwork.gui.tree.tree_panel import SessionTreePanel

__all__ = ["AgentNavigator", "SessionTreePanel", "TreeNavigator"]
