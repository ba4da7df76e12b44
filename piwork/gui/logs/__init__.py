"""Log viewer: the session's cut tool outputs and their full output files, opened lazily.

`LogViewerPanel` (panel.py) is the widget the main window docks; `FullOutputView` can be used alone
to open any log file. Connect `LogViewerPanel.send_to_chat(str)` to the composer. Both are imported when
first named (the window's first frame needs only the package's small helpers, such as ``sgr``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from piwork.core.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from piwork.gui.logs.full_output_view import FullOutputView
    from piwork.gui.logs.panel import LogViewerPanel
else:
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {"FullOutputView": "piwork.gui.logs.full_output_view", "LogViewerPanel": "piwork.gui.logs.panel"},
    )

__all__ = ["FullOutputView", "LogViewerPanel"]
