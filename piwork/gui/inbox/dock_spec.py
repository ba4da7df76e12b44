"""Where the inbox's dock is remembered and how it is toggled (View → Inbox)."""

from __future__ import annotations

DOCK_ID = "inbox"
SHORTCUT = "Alt+5"
