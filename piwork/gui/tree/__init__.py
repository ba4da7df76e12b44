"""Session tree view: `SessionTreePanel` (tree_panel.py) over the engine's `SessionTree`."""

from piwork.gui.tree import emit_refcount_fix

emit_refcount_fix.install()
