"""Opening a session for the tree view off the GUI thread.

`load_for_view` reads the file and builds the display tree in one go; call it through
`asyncio.to_thread` (the panel does) so a 100 MB session never blocks the window. The result is
handed to the GUI thread, which is its only user from then on.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from piwork.gui.tree.display_tree import DisplayTree, build_display_tree

if TYPE_CHECKING:
    from piwork.core.session import Session


@dataclass
class LoadedView:
    session: Session
    display: DisplayTree
    mode: str


def load_for_view(path: str | os.PathLike[str], mode: str = "default", writable: bool = False) -> LoadedView:
    """Open `path` (read-only unless `writable`) and lay out its tree for `mode`."""
    from piwork.core.session import open_session

    session = open_session(path, writable=writable)
    return LoadedView(session, build_display_tree(session.tree, mode), mode)
