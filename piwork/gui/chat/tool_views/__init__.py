"""Tool views: how the chat shows each tool's calls and results.

Every tool is shown by :class:`ToolView` (the default: it reads the argument each tool declares in its
facts) unless a view is registered for it. A tool that needs its own card (a diff, an approval) gets one
module here, ``<tool>.py``, with a ``ToolView`` subclass that overrides only what differs, registered at
the end of this file with ``register_view("<tool>", <Tool>View())``. The calls an approval can hold (bash,
edit, write) get :class:`ApprovalView` (``approval.py``): the default view until a call waits for the user.
"""

from __future__ import annotations

from piwork.gui.chat.tool_views.approval import ApprovalView
from piwork.gui.chat.tool_views.registry import DEFAULT_VIEW, register_view, unregister_view, view_for
from piwork.gui.chat.tool_views.view import Badge, CardAction, ToolView, cut_text

__all__ = [
    "DEFAULT_VIEW",
    "ApprovalView",
    "Badge",
    "CardAction",
    "ToolView",
    "cut_text",
    "register_view",
    "unregister_view",
    "view_for",
]

for _tool in ("bash", "edit", "write"):
    register_view(_tool, ApprovalView())
