"""Selecting a search hit in the session tree, and which row stands for it when the tree does not
show the entry itself.

The tree never lists an assistant turn that only calls tools (its tool results stand for it), and its
filters hide bookkeeping entries; a hit there lands on the first shown entry below it on the same
branch (its tool result), else on the nearest shown entry above it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from piwork.core.session import SessionTree

if TYPE_CHECKING:
    from piwork.gui.main_window import MainWindow


def landing_entry(tree: SessionTree, entry_id: str, shown: Callable[[str], bool]) -> str | None:
    if shown(entry_id):
        return entry_id
    pending = [r for r in tree.sorted_children(entry_id)]
    for _ in range(64):  # a short walk down: results of the same turn sit right below
        if not pending:
            break
        child = pending.pop(0)
        if isinstance(child.id, str) and shown(child.id):
            return child.id
        pending[:0] = tree.sorted_children(child.id)[:1]
    for record in reversed(tree.path(entry_id)[:-1]):
        if isinstance(record.id, str) and shown(record.id):
            return record.id
    return None


def select_in_tree(window: MainWindow, entry_id: str) -> None:
    """Show the tree and select ``entry_id`` in it, or the row that stands for it."""
    window.show_tree()
    tree = window.tree_panel
    if tree.loading:  # the session just opened: its tree is still being laid out
        tree.when_loaded(lambda: select_in_tree(window, entry_id))
        return
    if tree.tree is None or tree.model is None:
        return
    tree.select_entry(entry_id)
    if tree.model.index_of_id(entry_id).isValid():
        return
    # Not in the outline (its search or filter hides it, or it is a turn that only calls tools):
    # show everything, then land on the entry or the row that stands for it (a tool call's result).
    tree.search_field.clear()
    tree.model.set_search("")
    tree.set_filter_mode("all")
    model = tree.model
    target = landing_entry(tree.tree, entry_id, lambda i: model.index_of_id(i).isValid())
    if target is not None and target != entry_id:
        tree.select_entry(target)
        graph = getattr(tree, "graph", None)
        if graph is not None:
            graph.select(entry_id)  # the graph lists every entry: keep it on the hit itself
