"""Session tree view: `SessionTreePanel` (tree_panel.py) over the engine's `SessionTree`.

Navigation goes through a `Navigator` (navigation.py): `AgentNavigator` for a live AgentSession,
`TreeNavigator` for a session opened for browsing. The signal reference-count fix is installed
first, before any widget of the GUI emits a signal.
"""

from piwork.gui.tree import emit_refcount_fix

emit_refcount_fix.install()

from piwork.gui.tree.navigation import AgentNavigator, TreeNavigator  # noqa: E402
from piwork.gui.tree.tree_panel import SessionTreePanel  # noqa: E402

__all__ = ["AgentNavigator", "SessionTreePanel", "TreeNavigator"]
