"""Context governance: the layered context order, the manifest, the budget and the governor.

Public API (what callers outside the engine import from this package):
- the view over a session: ``ContextView``, ``view_from_session``, ``view_from_parts``, ``load_view``
  (from disk, with no running session) and its ``view_summarizer``, ``TokenEstimator``; the request
  X-ray: ``build_xray`` -> ``Xray`` of ``XrayPart``; ``tool_schemas`` (each tool's schema as the
  request sends it);
- layers and manifest: ``LAYERS``, ``Layer``, ``Manifest``, ``ManifestEntry``, ``append_manifest``,
  ``latest_manifest``, ``CUSTOM_TYPE_WORDS``;
- budget and governor records: ``GovernorSettings``, ``Marks``, ``effective_marks``,
  ``GovernorDecision``, ``OccupancySample``, ``BilledSample``, ``ElidedItem``, ``DECISIONS``,
  ``REASON_CODES``, ``TRIGGERS``; ``load_profile`` for the project's context profile;
  ``branch_usage_entries`` (the billed calls outside a reply on a branch) and ``usage_sample`` (one as a
  point of the billed series);
- excluding a part of the task's context: ``Exclusions``, ``ExcludedPart``, ``latest_exclusions``,
  ``with_exclusions`` (the manifest as the task now stands), ``excludable``, ``is_excluded``,
  ``EXCLUDED_REASON``, ``exclusion_command`` (``/context exclude|include``), ``shown_path`` (a path as
  the bundle and the window name it: relative to the project when inside it);
- tasks, intake and fresh sessions: ``latest_contract`` (the task on a branch), ``blocked_tool_reason``
  (why the task leaves a tool out), ``begin_task``, ``contract_from_text``, ``ContractError``,
  ``parse_task`` and ``TaskWords`` (``/task`` words in any order), ``TASK_USAGE``,
  ``contract_from_words``, ``edit_contract`` (the Task dialog), ``run_verifier_for_real``,
  ``save_intake``, ``INTAKE_TOKENS``, ``intake_tokens`` (the long-prompt rule) and its cheap
  ``may_need_intake``, ``attach_images`` and its cheap ``may_name_images`` (image paths in a
  prompt), ``FRESH_KINDS``, ``FreshError``; ``RequestShape`` (what a request holds besides messages);
- the ``/context``, ``/fresh`` and ``/onboard`` commands as reports: ``preflight``,
  ``budget_command``, ``index_status_command``, ``search_command``, ``pack_command``, ``rebuild_command``,
  ``manifest_command``, ``compact_command``, ``fresh_command``, ``parse_onboard``,
  ``onboard_command``, ``ONBOARD_USAGE``, ``overview_command`` (``piwork context`` without a
  subcommand), and ``report_text`` to show any of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from piwork.core.lazy_exports import load_export

if TYPE_CHECKING:
    from piwork.core.context.billed_entries import branch_usage_entries, usage_sample
    from piwork.core.context.budget import GovernorSettings, Marks, effective_marks
    from piwork.core.context.commands import (
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
    from piwork.core.context.commands import (
        budget as budget_command,
    )
    from piwork.core.context.commands import (
        pack as pack_command,
    )
    from piwork.core.context.commands import (
        rebuild as rebuild_command,
    )
    from piwork.core.context.commands import (
        search as search_command,
    )
    from piwork.core.context.contract import ContractError, blocked_tool_reason, latest_contract
    from piwork.core.context.entries import CUSTOM_TYPE_WORDS
    from piwork.core.context.estimate import TokenEstimator, tool_schemas
    from piwork.core.context.exclusions import (
        EXCLUDED_REASON,
        ExcludedPart,
        Exclusions,
        excludable,
        is_excluded,
        latest_exclusions,
        shown_path,
        with_exclusions,
    )
    from piwork.core.context.fresh import FRESH_KINDS, FreshError
    from piwork.core.context.governor import RequestShape
    from piwork.core.context.image_paths import attach_images, may_name_images
    from piwork.core.context.intake import INTAKE_TOKENS, intake_tokens, may_need_intake, save_intake
    from piwork.core.context.layers import LAYERS, Layer
    from piwork.core.context.manifest import Manifest, ManifestEntry, append_manifest, latest_manifest
    from piwork.core.context.profile import load_profile
    from piwork.core.context.records import (
        DECISIONS,
        REASON_CODES,
        TRIGGERS,
        BilledSample,
        ElidedItem,
        GovernorDecision,
        OccupancySample,
    )
    from piwork.core.context.tasks import (
        TASK_USAGE,
        TaskWords,
        begin_task,
        contract_from_text,
        contract_from_words,
        edit_contract,
        parse_task,
    )
    from piwork.core.context.verifier import run_verifier_for_real
    from piwork.core.context.view import (
        ContextView,
        load_view,
        view_from_parts,
        view_from_session,
        view_summarizer,
    )
    from piwork.core.context.xray import Xray, XrayPart
    from piwork.core.context.xray import xray as build_xray

__all__ = [
    "CUSTOM_TYPE_WORDS",
    "DECISIONS",
    "EXCLUDED_REASON",
    "FRESH_KINDS",
    "INTAKE_TOKENS",
    "LAYERS",
    "ONBOARD_USAGE",
    "REASON_CODES",
    "TASK_USAGE",
    "TRIGGERS",
    "BilledSample",
    "ContextView",
    "ContractError",
    "ElidedItem",
    "ExcludedPart",
    "Exclusions",
    "FreshError",
    "GovernorDecision",
    "GovernorSettings",
    "Layer",
    "Manifest",
    "ManifestEntry",
    "Marks",
    "OccupancySample",
    "RequestShape",
    "TaskWords",
    "TokenEstimator",
    "Xray",
    "XrayPart",
    "append_manifest",
    "attach_images",
    "begin_task",
    "blocked_tool_reason",
    "branch_usage_entries",
    "budget_command",
    "build_xray",
    "compact_command",
    "contract_from_text",
    "contract_from_words",
    "edit_contract",
    "effective_marks",
    "excludable",
    "exclusion_command",
    "fresh_command",
    "index_status_command",
    "intake_tokens",
    "is_excluded",
    "latest_contract",
    "latest_exclusions",
    "latest_manifest",
    "load_profile",
    "load_view",
    "manifest_command",
    "may_name_images",
    "may_need_intake",
    "onboard_command",
    "overview_command",
    "pack_command",
    "parse_onboard",
    "parse_task",
    "preflight",
    "rebuild_command",
    "report_text",
    "run_verifier_for_real",
    "save_intake",
    "search_command",
    "shown_path",
    "tool_schemas",
    "usage_sample",
    "view_from_parts",
    "view_from_session",
    "view_summarizer",
    "with_exclusions",
]

# Each public name is loaded from its module on first use (see piwork.core.lazy_exports).
_EXPORTS: dict[str, tuple[str, str]] = {
    "BilledSample": ("records", "BilledSample"),
    "CUSTOM_TYPE_WORDS": ("entries", "CUSTOM_TYPE_WORDS"),
    "ContextView": ("view", "ContextView"),
    "ContractError": ("contract", "ContractError"),
    "DECISIONS": ("records", "DECISIONS"),
    "EXCLUDED_REASON": ("exclusions", "EXCLUDED_REASON"),
    "ExcludedPart": ("exclusions", "ExcludedPart"),
    "Exclusions": ("exclusions", "Exclusions"),
    "ElidedItem": ("records", "ElidedItem"),
    "FRESH_KINDS": ("fresh", "FRESH_KINDS"),
    "FreshError": ("fresh", "FreshError"),
    "GovernorDecision": ("records", "GovernorDecision"),
    "GovernorSettings": ("budget", "GovernorSettings"),
    "INTAKE_TOKENS": ("intake", "INTAKE_TOKENS"),
    "intake_tokens": ("intake", "intake_tokens"),
    "may_need_intake": ("intake", "may_need_intake"),
    "LAYERS": ("layers", "LAYERS"),
    "Layer": ("layers", "Layer"),
    "Manifest": ("manifest", "Manifest"),
    "ManifestEntry": ("manifest", "ManifestEntry"),
    "Marks": ("budget", "Marks"),
    "ONBOARD_USAGE": ("commands", "ONBOARD_USAGE"),
    "OccupancySample": ("records", "OccupancySample"),
    "REASON_CODES": ("records", "REASON_CODES"),
    "TRIGGERS": ("records", "TRIGGERS"),
    "TokenEstimator": ("estimate", "TokenEstimator"),
    "RequestShape": ("governor", "RequestShape"),
    "Xray": ("xray", "Xray"),
    "XrayPart": ("xray", "XrayPart"),
    "append_manifest": ("manifest", "append_manifest"),
    "begin_task": ("tasks", "begin_task"),
    "budget_command": ("commands", "budget"),
    "build_xray": ("xray", "xray"),
    "compact_command": ("commands", "compact_command"),
    "contract_from_text": ("tasks", "contract_from_text"),
    "contract_from_words": ("tasks", "contract_from_words"),
    "parse_task": ("tasks", "parse_task"),
    "TaskWords": ("tasks", "TaskWords"),
    "TASK_USAGE": ("tasks", "TASK_USAGE"),
    "effective_marks": ("budget", "effective_marks"),
    "excludable": ("exclusions", "excludable"),
    "shown_path": ("exclusions", "shown_path"),
    "exclusion_command": ("commands", "exclusion_command"),
    "fresh_command": ("commands", "fresh_command"),
    "index_status_command": ("commands", "index_status_command"),
    "is_excluded": ("exclusions", "is_excluded"),
    "latest_contract": ("contract", "latest_contract"),
    "blocked_tool_reason": ("contract", "blocked_tool_reason"),
    "tool_schemas": ("estimate", "tool_schemas"),
    "latest_exclusions": ("exclusions", "latest_exclusions"),
    "latest_manifest": ("manifest", "latest_manifest"),
    "load_profile": ("profile", "load_profile"),
    "load_view": ("view", "load_view"),
    "manifest_command": ("commands", "manifest_command"),
    "onboard_command": ("commands", "onboard_command"),
    "overview_command": ("commands", "overview_command"),
    "pack_command": ("commands", "pack"),
    "parse_onboard": ("commands", "parse_onboard"),
    "preflight": ("commands", "preflight"),
    "rebuild_command": ("commands", "rebuild"),
    "attach_images": ("image_paths", "attach_images"),
    "edit_contract": ("tasks", "edit_contract"),
    "run_verifier_for_real": ("verifier", "run_verifier_for_real"),
    "may_name_images": ("image_paths", "may_name_images"),
    "search_command": ("commands", "search"),
    "report_text": ("commands", "report_text"),
    "save_intake": ("intake", "save_intake"),
    "view_from_parts": ("view", "view_from_parts"),
    "view_from_session": ("view", "view_from_session"),
    "view_summarizer": ("view", "view_summarizer"),
    "with_exclusions": ("exclusions", "with_exclusions"),
    "branch_usage_entries": ("billed_entries", "branch_usage_entries"),
    "usage_sample": ("billed_entries", "usage_sample"),
}


def __getattr__(name: str) -> object:
    return load_export(__name__, _EXPORTS, name)
