"""Context governance: the layered context order, the manifest, the budget and the governor.

The policy only: what drives a running session with it (the view over a session, the ``/context``
commands, tasks, intake, fresh sessions, onboarding) is in ``piwork.core.workflows``.

Public API (what callers outside the engine import from this package):
- ``TokenEstimator``; ``cap_context_files`` (the hard cap on context files, handed to the resource
  loader through its ``LoaderOptions``); the request X-ray: ``build_xray`` -> ``Xray`` of ``XrayPart`` (``xray_message_rows``: its message rows before counting, for several X-rays of one list); ``tool_schemas``
  (each tool's schema as the request sends it);
- layers and manifest: ``LAYERS``, ``Layer``, ``Manifest``, ``ManifestEntry``, ``append_manifest``,
  ``latest_manifest``, ``CUSTOM_TYPE_WORDS``;
- budget and governor records: ``GovernorSettings``, ``Marks``, ``effective_marks``,
  ``GovernorDecision``, ``OccupancySample``, ``BilledSample``, ``ElidedItem``, ``DECISIONS``,
  ``REASON_CODES``, ``TRIGGERS``;
  ``branch_usage_entries`` (the billed calls outside a reply on a branch) and ``usage_sample`` (one as a
  point of the billed series); ``RequestShape`` (what a request holds besides messages);
- excluding a part of the task's context: ``Exclusions``, ``ExcludedPart``, ``latest_exclusions``,
  ``with_exclusions`` (the manifest as the task now stands), ``excludable``, ``is_excluded``,
  ``EXCLUDED_REASON``, ``shown_path`` (a path as the bundle and the window name it: relative to the
  project when inside it);
- tasks: ``latest_contract`` (the task on a branch), ``blocked_tool_reason`` (why the task leaves a tool
  out), ``ContractError``, ``run_verifier_for_real``; image paths in a prompt: ``attach_images`` and its
  cheap ``may_name_images``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from piwork.core.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from piwork.core.context.billed_entries import branch_usage_entries, usage_sample
    from piwork.core.context.budget import GovernorSettings, Marks, effective_marks
    from piwork.core.context.caps import cap_context_files
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
    from piwork.core.context.governor import RequestShape
    from piwork.core.context.image_paths import attach_images, may_name_images
    from piwork.core.context.layers import LAYERS, Layer
    from piwork.core.context.manifest import Manifest, ManifestEntry, append_manifest, latest_manifest
    from piwork.core.context.records import (
        DECISIONS,
        REASON_CODES,
        TRIGGERS,
        BilledSample,
        ElidedItem,
        GovernorDecision,
        OccupancySample,
    )
    from piwork.core.context.verifier import run_verifier_for_real
    from piwork.core.context.xray import Xray, XrayPart
    from piwork.core.context.xray import message_rows as xray_message_rows
    from piwork.core.context.xray import xray as build_xray

__all__ = [
    "CUSTOM_TYPE_WORDS",
    "DECISIONS",
    "EXCLUDED_REASON",
    "LAYERS",
    "REASON_CODES",
    "TRIGGERS",
    "BilledSample",
    "ContractError",
    "ElidedItem",
    "ExcludedPart",
    "Exclusions",
    "GovernorDecision",
    "GovernorSettings",
    "Layer",
    "Manifest",
    "ManifestEntry",
    "Marks",
    "OccupancySample",
    "RequestShape",
    "TokenEstimator",
    "Xray",
    "XrayPart",
    "append_manifest",
    "attach_images",
    "blocked_tool_reason",
    "branch_usage_entries",
    "build_xray",
    "cap_context_files",
    "effective_marks",
    "excludable",
    "is_excluded",
    "latest_contract",
    "latest_exclusions",
    "latest_manifest",
    "may_name_images",
    "run_verifier_for_real",
    "shown_path",
    "tool_schemas",
    "usage_sample",
    "with_exclusions",
    "xray_message_rows",
]

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "branch_usage_entries": "piwork.core.context.billed_entries",
            "usage_sample": "piwork.core.context.billed_entries",
            "GovernorSettings": "piwork.core.context.budget",
            "Marks": "piwork.core.context.budget",
            "effective_marks": "piwork.core.context.budget",
            "cap_context_files": "piwork.core.context.caps",
            "ContractError": "piwork.core.context.contract",
            "blocked_tool_reason": "piwork.core.context.contract",
            "latest_contract": "piwork.core.context.contract",
            "CUSTOM_TYPE_WORDS": "piwork.core.context.entries",
            "TokenEstimator": "piwork.core.context.estimate",
            "tool_schemas": "piwork.core.context.estimate",
            "EXCLUDED_REASON": "piwork.core.context.exclusions",
            "ExcludedPart": "piwork.core.context.exclusions",
            "Exclusions": "piwork.core.context.exclusions",
            "excludable": "piwork.core.context.exclusions",
            "is_excluded": "piwork.core.context.exclusions",
            "latest_exclusions": "piwork.core.context.exclusions",
            "shown_path": "piwork.core.context.exclusions",
            "with_exclusions": "piwork.core.context.exclusions",
            "RequestShape": "piwork.core.context.governor",
            "attach_images": "piwork.core.context.image_paths",
            "may_name_images": "piwork.core.context.image_paths",
            "LAYERS": "piwork.core.context.layers",
            "Layer": "piwork.core.context.layers",
            "Manifest": "piwork.core.context.manifest",
            "ManifestEntry": "piwork.core.context.manifest",
            "append_manifest": "piwork.core.context.manifest",
            "latest_manifest": "piwork.core.context.manifest",
            "DECISIONS": "piwork.core.context.records",
            "REASON_CODES": "piwork.core.context.records",
            "TRIGGERS": "piwork.core.context.records",
            "BilledSample": "piwork.core.context.records",
            "ElidedItem": "piwork.core.context.records",
            "GovernorDecision": "piwork.core.context.records",
            "OccupancySample": "piwork.core.context.records",
            "run_verifier_for_real": "piwork.core.context.verifier",
            "Xray": "piwork.core.context.xray",
            "XrayPart": "piwork.core.context.xray",
            "build_xray": "piwork.core.context.xray:xray",
            "xray_message_rows": "piwork.core.context.xray:message_rows",
        },
    )
