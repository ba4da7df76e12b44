"""Log viewer: the session's cut tool outputs and their full output files, opened lazily.

`LogViewerPanel` (panel.py) is the widget the main window docks; `FullOutputView` can be used alone
to open any log file. Connect `LogViewerPanel.send_to_chat(str)` to the composer.
"""

from piwork.gui.logs.full_output_view import FullOutputView
from piwork.gui.logs.panel import LogViewerPanel

__all__ = ["FullOutputView", "LogViewerPanel"]
