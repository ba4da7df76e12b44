"""One inbox of what waits for the user across the window's sessions: approvals, trust questions, failed
replies and runs that finished out of sight.

``InboxFeed`` (``feed.py``) follows one ``SessionController`` and turns its events into ``InboxItem``s
(``items.py``); ``Inbox`` (``inbox.py``) gathers the feeds of every session the window holds, knows which
is in front and acts on an item (jump to it, answer an approval); ``InboxPanel`` (``panel.py``) is its
dock, ``InboxBadge`` (``badge.py``) its status-bar count; ``wiring.py`` installs them in a window and
attaches controllers (one now, one per tab through the tabs' signals).
"""
