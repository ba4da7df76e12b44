"""Session tree view: `SessionTreePanel` (tree_panel.py) over the engine's `SessionTree`.

Navigation goes through a `Navigator` (navigation.py): `AgentNavigator` for a live AgentSession,
`TreeNavigator` for a bare `SessionTree`. A session opened only for browsing has no navigator: it can be
looked through but not moved.
"""

from piwork.gui.tree.navigation import AgentNavigator, TreeNavigator
from piwork.gui.tree.tree_panel import SessionTreePanel

__all__ = ["AgentNavigator", "SessionTreePanel", "TreeNavigator"]
