"""What a project contributes to the agent, and whether it may.

Entry points:
- ``loader.load_project(cwd, agent_dir, TrustResolver(...), LoaderOptions(...))`` → ``LoadedResources``
  (skills, prompt templates, context files, SYSTEM/APPEND text, settings, trust state, panel rows);
- ``system_prompt.build_system_prompt(prompt_input_for(loaded, tools, snippets, guidelines))`` and
  ``system_prompt_parts(...)`` for the prompt-anatomy view; ``expand_skill_command`` for ``/skill:``;
- ``prompts.expand_prompt_template`` for ``/name args``;
- ``trust`` / ``trust_store`` / ``trust_fingerprint`` for the trust dialog, ``trust_review`` (files and
  previews of gated resources) and ``trust_snapshot`` (what they looked like at the last decision, and
  the diff since);
- ``frontmatter.parse_frontmatter`` for any Markdown with YAML frontmatter.

Public API (what callers outside the engine import from this package):
- loading: ``load_project`` with ``LoaderOptions`` -> ``LoadedResources``, ``ResourceRow`` (the
  resources panel rows); ``load_profile`` for the project's context profile;
- the system prompt: ``prompt_input_for``, ``system_prompt_parts`` -> ``PromptPart``,
  ``system_prompt_sections`` (the tagged sections a session's system message holds),
  ``render_system_sections``, ``parse_skill_invocation``;
- trust: ``TrustResolver``, ``TrustRequest``, ``TrustResource``, ``TrustState``, ``TrustOption``,
  ``trust_options``, ``trust_resources``, ``MCP_NOTE`` (what to say beside ``.pi/mcp.json``); the store: ``TrustStore``, ``TrustEntry``, ``TrustUpdate``,
  ``TrustStoreError``, ``strict_canonical``; fingerprints: ``FingerprintStore``,
  ``compute_fingerprint``; review: ``list_resource_files`` -> ``ResourceListing``, ``preview_file``
  -> ``FilePreview`` (``preview_of_text`` for the text a trust reading holds), ``display_path``, ``KIND_ROLES``; snapshots: ``SnapshotStore``,
  ``Snapshot``, ``take_snapshot``, ``compare`` -> ``FileChange``; the one reading a trust question
  shows and its decision covers: ``read_for_review`` -> ``TrustReading``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from piwork.core.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from piwork.core.resources.loader import LoadedResources, LoaderOptions, load_project
    from piwork.core.resources.panel import ResourceRow
    from piwork.core.resources.profile import load_profile
    from piwork.core.resources.system_prompt import (
        PromptPart,
        parse_skill_invocation,
        prompt_input_for,
        render_system_sections,
        system_prompt_parts,
        system_prompt_sections,
    )
    from piwork.core.resources.trust import (
        TrustOption,
        TrustRequest,
        TrustResolver,
        TrustState,
        trust_options,
        trust_resources,
    )
    from piwork.core.resources.trust_fingerprint import FingerprintStore, compute_fingerprint
    from piwork.core.resources.trust_reading import TrustReading, read_for_review, take_snapshot
    from piwork.core.resources.trust_resource import MCP_NOTE, TrustResource
    from piwork.core.resources.trust_review import (
        KIND_ROLES,
        FilePreview,
        ResourceListing,
        display_path,
        list_resource_files,
        preview_file,
        preview_of_text,
    )
    from piwork.core.resources.trust_snapshot import (
        FileChange,
        Snapshot,
        SnapshotStore,
        compare,
    )
    from piwork.core.resources.trust_store import (
        TrustEntry,
        TrustStore,
        TrustStoreError,
        TrustUpdate,
        strict_canonical,
    )

__all__ = [
    "KIND_ROLES",
    "MCP_NOTE",
    "FileChange",
    "FilePreview",
    "FingerprintStore",
    "LoadedResources",
    "LoaderOptions",
    "PromptPart",
    "ResourceListing",
    "ResourceRow",
    "Snapshot",
    "SnapshotStore",
    "TrustEntry",
    "TrustOption",
    "TrustReading",
    "TrustRequest",
    "TrustResolver",
    "TrustResource",
    "TrustState",
    "TrustStore",
    "TrustStoreError",
    "TrustUpdate",
    "compare",
    "compute_fingerprint",
    "display_path",
    "list_resource_files",
    "load_profile",
    "load_project",
    "parse_skill_invocation",
    "preview_file",
    "preview_of_text",
    "prompt_input_for",
    "read_for_review",
    "render_system_sections",
    "strict_canonical",
    "system_prompt_parts",
    "system_prompt_sections",
    "take_snapshot",
    "trust_options",
    "trust_resources",
]

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "LoadedResources": "piwork.core.resources.loader",
            "LoaderOptions": "piwork.core.resources.loader",
            "load_project": "piwork.core.resources.loader",
            "ResourceRow": "piwork.core.resources.panel",
            "load_profile": "piwork.core.resources.profile",
            "PromptPart": "piwork.core.resources.system_prompt",
            "parse_skill_invocation": "piwork.core.resources.system_prompt",
            "prompt_input_for": "piwork.core.resources.system_prompt",
            "render_system_sections": "piwork.core.resources.system_prompt",
            "system_prompt_parts": "piwork.core.resources.system_prompt",
            "system_prompt_sections": "piwork.core.resources.system_prompt",
            "TrustOption": "piwork.core.resources.trust",
            "TrustRequest": "piwork.core.resources.trust",
            "TrustResolver": "piwork.core.resources.trust",
            "TrustState": "piwork.core.resources.trust",
            "trust_options": "piwork.core.resources.trust",
            "trust_resources": "piwork.core.resources.trust",
            "FingerprintStore": "piwork.core.resources.trust_fingerprint",
            "compute_fingerprint": "piwork.core.resources.trust_fingerprint",
            "TrustReading": "piwork.core.resources.trust_reading",
            "read_for_review": "piwork.core.resources.trust_reading",
            "take_snapshot": "piwork.core.resources.trust_reading",
            "MCP_NOTE": "piwork.core.resources.trust_resource",
            "TrustResource": "piwork.core.resources.trust_resource",
            "KIND_ROLES": "piwork.core.resources.trust_review",
            "FilePreview": "piwork.core.resources.trust_review",
            "ResourceListing": "piwork.core.resources.trust_review",
            "display_path": "piwork.core.resources.trust_review",
            "list_resource_files": "piwork.core.resources.trust_review",
            "preview_file": "piwork.core.resources.trust_review",
            "preview_of_text": "piwork.core.resources.trust_review",
            "FileChange": "piwork.core.resources.trust_snapshot",
            "Snapshot": "piwork.core.resources.trust_snapshot",
            "SnapshotStore": "piwork.core.resources.trust_snapshot",
            "compare": "piwork.core.resources.trust_snapshot",
            "TrustEntry": "piwork.core.resources.trust_store",
            "TrustStore": "piwork.core.resources.trust_store",
            "TrustStoreError": "piwork.core.resources.trust_store",
            "TrustUpdate": "piwork.core.resources.trust_store",
            "strict_canonical": "piwork.core.resources.trust_store",
        },
    )
