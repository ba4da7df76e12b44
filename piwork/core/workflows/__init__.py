"""Workflows: the services that drive a whole ``AgentSession``, above the agent and the context policy.

``core/context`` decides (budget, governor, manifest, exclusions, elision, index, X-ray); what here
assembles a session, runs the ``/context`` commands, starts tasks and fresh sessions and onboards a
project uses those decisions together with the running session.

Public API (what callers outside the engine import from this package):
- assembling a session: ``create_runtime`` (given ``RuntimeOptions``) -> ``AgentRuntime``: a ready
  ``AgentSession`` for a folder (store, model registry, credentials, resources, tools, context tools);
- the view over a session: ``ContextView``, ``view_from_session``, ``view_from_parts``, ``load_view``
  (from disk, with no running session) and its ``view_summarizer``;
- tasks, intake and fresh sessions: ``begin_task``, ``contract_from_text``, ``parse_task`` and
  ``TaskWords`` (``/task`` words in any order), ``TASK_USAGE``, ``contract_from_words``,
  ``edit_contract`` (the Task dialog), ``save_intake``, ``INTAKE_TOKENS``, ``intake_tokens`` (the
  long-prompt rule) and its cheap ``may_need_intake``, ``FRESH_KINDS``, ``FreshError``;
- the ``/context``, ``/fresh`` and ``/onboard`` commands as reports: ``preflight``,
  ``budget_command``, ``index_status_command``, ``search_command``, ``pack_command``, ``rebuild_command``,
  ``manifest_command``, ``compact_command``, ``exclusion_command`` (``/context exclude|include``),
  ``fresh_command``, ``parse_onboard``, ``onboard_command``, ``ONBOARD_USAGE``, ``overview_command``
  (``piwork context`` without a subcommand), and ``report_text`` to show any of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from piwork.core.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from piwork.core.workflows.commands import (
        ONBOARD_USAGE,
        compact_command,
        exclusion_command,
        fresh_command,
        index_status_command,
        manifest_command,
        onboard_command,
        overview_command,
        parse_onboard,
        preflight,
        report_text,
    )
    from piwork.core.workflows.commands import budget as budget_command
    from piwork.core.workflows.commands import pack as pack_command
    from piwork.core.workflows.commands import rebuild as rebuild_command
    from piwork.core.workflows.commands import search as search_command
    from piwork.core.workflows.fresh import FRESH_KINDS, FreshError
    from piwork.core.workflows.intake import INTAKE_TOKENS, intake_tokens, may_need_intake, save_intake
    from piwork.core.workflows.runtime import AgentRuntime, RuntimeOptions, create_runtime
    from piwork.core.workflows.tasks import (
        TASK_USAGE,
        TaskWords,
        begin_task,
        contract_from_text,
        contract_from_words,
        edit_contract,
        parse_task,
    )
    from piwork.core.workflows.view import (
        ContextView,
        load_view,
        view_from_parts,
        view_from_session,
        view_summarizer,
    )

__all__ = [
    "FRESH_KINDS",
    "INTAKE_TOKENS",
    "ONBOARD_USAGE",
    "TASK_USAGE",
    "AgentRuntime",
    "ContextView",
    "FreshError",
    "RuntimeOptions",
    "TaskWords",
    "begin_task",
    "budget_command",
    "compact_command",
    "contract_from_text",
    "contract_from_words",
    "create_runtime",
    "edit_contract",
    "exclusion_command",
    "fresh_command",
    "index_status_command",
    "intake_tokens",
    "load_view",
    "manifest_command",
    "may_need_intake",
    "onboard_command",
    "overview_command",
    "pack_command",
    "parse_onboard",
    "parse_task",
    "preflight",
    "rebuild_command",
    "report_text",
    "save_intake",
    "search_command",
    "view_from_parts",
    "view_from_session",
    "view_summarizer",
]

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "ONBOARD_USAGE": "piwork.core.workflows.commands",
            "compact_command": "piwork.core.workflows.commands",
            "exclusion_command": "piwork.core.workflows.commands",
            "fresh_command": "piwork.core.workflows.commands",
            "index_status_command": "piwork.core.workflows.commands",
            "manifest_command": "piwork.core.workflows.commands",
            "onboard_command": "piwork.core.workflows.commands",
            "overview_command": "piwork.core.workflows.commands",
            "parse_onboard": "piwork.core.workflows.commands",
            "preflight": "piwork.core.workflows.commands",
            "report_text": "piwork.core.workflows.commands",
            "budget_command": "piwork.core.workflows.commands:budget",
            "pack_command": "piwork.core.workflows.commands:pack",
            "rebuild_command": "piwork.core.workflows.commands:rebuild",
            "search_command": "piwork.core.workflows.commands:search",
            "FRESH_KINDS": "piwork.core.workflows.fresh",
            "FreshError": "piwork.core.workflows.fresh",
            "INTAKE_TOKENS": "piwork.core.workflows.intake",
            "intake_tokens": "piwork.core.workflows.intake",
            "may_need_intake": "piwork.core.workflows.intake",
            "save_intake": "piwork.core.workflows.intake",
            "AgentRuntime": "piwork.core.workflows.runtime",
            "RuntimeOptions": "piwork.core.workflows.runtime",
            "create_runtime": "piwork.core.workflows.runtime",
            "TASK_USAGE": "piwork.core.workflows.tasks",
            "TaskWords": "piwork.core.workflows.tasks",
            "begin_task": "piwork.core.workflows.tasks",
            "contract_from_text": "piwork.core.workflows.tasks",
            "contract_from_words": "piwork.core.workflows.tasks",
            "edit_contract": "piwork.core.workflows.tasks",
            "parse_task": "piwork.core.workflows.tasks",
            "ContextView": "piwork.core.workflows.view",
            "load_view": "piwork.core.workflows.view",
            "view_from_parts": "piwork.core.workflows.view",
            "view_from_session": "piwork.core.workflows.view",
            "view_summarizer": "piwork.core.workflows.view",
        },
    )
