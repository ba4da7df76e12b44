"""Which view shows which tool: the registered ones, and the default view for every other tool."""

from __future__ import annotations

from piwork.gui.chat.tool_views.view import ToolView

DEFAULT_VIEW = ToolView()
_VIEWS: dict[str, ToolView] = {}


def register_view(tool_name: str, view: ToolView) -> None:
    """Show calls of ``tool_name`` with ``view`` from now on (a later registration replaces it)."""
    _VIEWS[tool_name] = view


def unregister_view(tool_name: str) -> None:
    _VIEWS.pop(tool_name, None)


def view_for(tool_name: str) -> ToolView:
    """The view for calls of ``tool_name``: its own if one is registered, else the default."""
    return _VIEWS.get(tool_name, DEFAULT_VIEW)
