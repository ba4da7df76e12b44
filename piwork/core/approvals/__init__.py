"""Approvals: what the agent may run in a project without asking (Run everything, Ask, Read only).

Public API: ``ApprovalGate`` (the ``before_tool_call`` hook; ``ask`` is the caller's "ask the user"),
``ApprovalRequest`` and ``ApprovalAnswer`` (one question and its answer), ``ApprovalAsker``,
``ApprovalStore`` (``<agentDir>/piwork-approvals.json``), ``ProjectRules``, ``ApprovalMode`` with
``MODES``, ``MODE_LABELS`` and ``MODE_SHORT``, ``CallKind`` (a command or a file change), ``denied_text``
and the refusal texts ``READ_ONLY_TEXT`` and ``NOBODY_TO_ASK_TEXT``, ``RULES_FILE_NAME``. What an edit or write
would change is ``piwork.core.tools.ChangePreview``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from piwork.core.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from piwork.core.approvals.gate import (
        NOBODY_TO_ASK_TEXT,
        READ_ONLY_TEXT,
        ApprovalAnswer,
        ApprovalAsker,
        ApprovalGate,
        ApprovalRequest,
        CallKind,
        denied_text,
    )
    from piwork.core.approvals.rules import MODE_LABELS, MODE_SHORT, MODES, ApprovalMode, ProjectRules
    from piwork.core.approvals.store import RULES_FILE_NAME, ApprovalStore

__all__ = [
    "MODES",
    "MODE_LABELS",
    "MODE_SHORT",
    "NOBODY_TO_ASK_TEXT",
    "READ_ONLY_TEXT",
    "RULES_FILE_NAME",
    "ApprovalAnswer",
    "ApprovalAsker",
    "ApprovalGate",
    "ApprovalMode",
    "ApprovalRequest",
    "ApprovalStore",
    "CallKind",
    "ProjectRules",
    "denied_text",
]

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "NOBODY_TO_ASK_TEXT": "piwork.core.approvals.gate",
            "READ_ONLY_TEXT": "piwork.core.approvals.gate",
            "ApprovalAnswer": "piwork.core.approvals.gate",
            "ApprovalAsker": "piwork.core.approvals.gate",
            "ApprovalGate": "piwork.core.approvals.gate",
            "ApprovalRequest": "piwork.core.approvals.gate",
            "CallKind": "piwork.core.approvals.gate",
            "denied_text": "piwork.core.approvals.gate",
            "MODE_LABELS": "piwork.core.approvals.rules",
            "MODE_SHORT": "piwork.core.approvals.rules",
            "MODES": "piwork.core.approvals.rules",
            "ApprovalMode": "piwork.core.approvals.rules",
            "ProjectRules": "piwork.core.approvals.rules",
            "RULES_FILE_NAME": "piwork.core.approvals.store",
            "ApprovalStore": "piwork.core.approvals.store",
        },
    )
