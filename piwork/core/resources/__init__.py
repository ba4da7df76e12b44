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

from piwork.core.lazy_exports import load_export

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
        MCP_NOTE,
        TrustOption,
        TrustRequest,
        TrustResolver,
        TrustResource,
        TrustState,
        trust_options,
        trust_resources,
    )
    from piwork.core.resources.trust_fingerprint import FingerprintStore, compute_fingerprint
    from piwork.core.resources.trust_reading import TrustReading, read_for_review
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
        take_snapshot,
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

# Each public name is loaded from its module on first use (see piwork.core.lazy_exports).
_EXPORTS: dict[str, tuple[str, str]] = {
    "FileChange": ("trust_snapshot", "FileChange"),
    "FilePreview": ("trust_review", "FilePreview"),
    "FingerprintStore": ("trust_fingerprint", "FingerprintStore"),
    "KIND_ROLES": ("trust_review", "KIND_ROLES"),
    "MCP_NOTE": ("trust", "MCP_NOTE"),
    "LoadedResources": ("loader", "LoadedResources"),
    "LoaderOptions": ("loader", "LoaderOptions"),
    "PromptPart": ("system_prompt", "PromptPart"),
    "ResourceListing": ("trust_review", "ResourceListing"),
    "ResourceRow": ("panel", "ResourceRow"),
    "load_profile": ("profile", "load_profile"),
    "Snapshot": ("trust_snapshot", "Snapshot"),
    "SnapshotStore": ("trust_snapshot", "SnapshotStore"),
    "TrustEntry": ("trust_store", "TrustEntry"),
    "TrustOption": ("trust", "TrustOption"),
    "TrustRequest": ("trust", "TrustRequest"),
    "TrustResolver": ("trust", "TrustResolver"),
    "TrustResource": ("trust", "TrustResource"),
    "TrustReading": ("trust_reading", "TrustReading"),
    "TrustState": ("trust", "TrustState"),
    "TrustStore": ("trust_store", "TrustStore"),
    "TrustStoreError": ("trust_store", "TrustStoreError"),
    "TrustUpdate": ("trust_store", "TrustUpdate"),
    "compare": ("trust_snapshot", "compare"),
    "compute_fingerprint": ("trust_fingerprint", "compute_fingerprint"),
    "display_path": ("trust_review", "display_path"),
    "list_resource_files": ("trust_review", "list_resource_files"),
    "load_project": ("loader", "load_project"),
    "parse_skill_invocation": ("system_prompt", "parse_skill_invocation"),
    "preview_file": ("trust_review", "preview_file"),
    "prompt_input_for": ("system_prompt", "prompt_input_for"),
    "render_system_sections": ("system_prompt", "render_system_sections"),
    "strict_canonical": ("trust_store", "strict_canonical"),
    "system_prompt_parts": ("system_prompt", "system_prompt_parts"),
    "system_prompt_sections": ("system_prompt", "system_prompt_sections"),
    "preview_of_text": ("trust_review", "preview_of_text"),
    "read_for_review": ("trust_reading", "read_for_review"),
    "take_snapshot": ("trust_snapshot", "take_snapshot"),
    "trust_options": ("trust", "trust_options"),
    "trust_resources": ("trust", "trust_resources"),
}


def __getattr__(name: str) -> object:
    return load_export(__name__, _EXPORTS, name)
