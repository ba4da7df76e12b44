"""What a drop on the main window opens: one project folder, or one session file (``.jsonl``).

Told apart while the drag enters (one ``stat`` of a local path, as the drop cursor must say at once
whether the drop would be taken); anything else is refused with a sentence saying why."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Literal

from PySide6.QtCore import QMimeData

REFUSED_HINT = "Drop a project folder or a session file (.jsonl) to open it."


@dataclass(frozen=True)
class DropTarget:
    kind: Literal["folder", "session"] | None  # None: refused
    path: str = ""
    reason: str = ""  # why it is refused


def drop_target(mime: QMimeData | None) -> DropTarget:
    urls = mime.urls() if mime is not None and mime.hasUrls() else []
    if not urls:
        return DropTarget(None, reason=f"Not a file or folder. {REFUSED_HINT}")
    if len(urls) > 1:
        return DropTarget(None, reason=f"{len(urls)} items dropped: one at a time. {REFUSED_HINT}")
    url = urls[0]
    if not url.isLocalFile():
        return DropTarget(None, reason=f"{url.toDisplayString()} is not on this computer. {REFUSED_HINT}")
    path = os.path.normpath(url.toLocalFile())
    if os.path.isdir(path):
        return DropTarget("folder", path)
    if path.lower().endswith(".jsonl") and os.path.isfile(path):
        return DropTarget("session", path)
    name = os.path.basename(path)
    return DropTarget(None, path, f"{name} is neither a folder nor a session file. {REFUSED_HINT}")
