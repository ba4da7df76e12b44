"""Rewind the project's files with the conversation, from the window.

- ``FileRewind`` (flow.py): the window's restores and their undo, over the open session's checkpoints;
  registered as a session panel. Everything that reads or writes files runs in a worker.
- ``RestoreOption`` (branch_option.py): the branch dialog's "Also restore the files to this point".
- ``RestoreFilesDialog`` (restore_dialog.py): the question before a restore, listing the files.
- ``PlanList`` (plan_list.py): the files a restore would add, modify and remove.
"""

from piwork.gui.rewind.branch_option import RestoreOption
from piwork.gui.rewind.flow import FileRewind
from piwork.gui.rewind.plan_list import PlanList
from piwork.gui.rewind.restore_dialog import RestoreFilesDialog

__all__ = ["FileRewind", "PlanList", "RestoreFilesDialog", "RestoreOption"]
