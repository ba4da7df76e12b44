"""Everything the context commands look at for one project and session branch, gathered once.

The window builds a view from what it already holds (:func:`view_from_parts`); the headless
``piwork context`` command loads one from disk (:func:`load_view`), deciding trust first without
asking anybody, exactly as other headless commands do, and, with no running session to summarise
through, gets its summarizer for ``onboard`` from :func:`view_summarizer`.
"""

from __future__ import annotations

import asyncio
import functools
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from piwork.core.agent.options import complete_through, default_stream_fn
from piwork.core.agent.system_prompt import prompt_parts_for
from piwork.core.compaction.summarize import Summarizer
from piwork.core.context.budget import GovernorSettings
from piwork.core.context.caps import cap_context_files
from piwork.core.context.contract import TaskContract, allowed_tools, latest_contract
from piwork.core.context.estimate import TokenEstimator
from piwork.core.context.exclusion_projection import RequestProjection, context_files_for_task
from piwork.core.context.exclusions import NO_EXCLUSIONS, Exclusions, latest_exclusions, with_exclusions
from piwork.core.context.manifest import Manifest, latest_manifest
from piwork.core.llm.credentials import CredentialStore
from piwork.core.llm.models import ModelRegistry
from piwork.core.llm.tokens import Tokenizers
from piwork.core.llm.transport import is_loopback
from piwork.core.llm.types import Model, ToolSpec
from piwork.core.messages import Message
from piwork.core.resources.loader import LoadedResources, LoaderOptions, load_project
from piwork.core.resources.system_prompt import PromptPart
from piwork.core.resources.trust import TrustResolver
from piwork.core.resources.trust_store import TrustStore
from piwork.core.session.store import open_session
from piwork.core.session.tree import SessionTree
from piwork.core.settings_schema import DEFAULT_MODEL, DEFAULT_PROVIDER
from piwork.core.settings_values import SettingValues
from piwork.core.tools.registry import ALL_TOOL_NAMES, DEFAULT_ACTIVE_TOOLS, create_default_tools

if TYPE_CHECKING:
    from piwork.core.agent.session import AgentSession


@dataclass
class ContextView:
    cwd: str
    agent_dir: str
    resources: LoadedResources
    tree: SessionTree | None
    leaf_id: str | None
    messages: list[Message]
    model: Model | None
    active_tools: list[str]
    tools: list[ToolSpec]
    prompt_parts: list[PromptPart]
    estimator: TokenEstimator
    governor_settings: GovernorSettings
    contract: TaskContract | None
    manifest: Manifest | None  # as stored (see ``shown_manifest`` for the task as it now stands)
    session_file: str | None = None
    # the parts of the task's context the person excluded; ``messages`` and ``prompt_parts`` are the
    # next request's, so they already hold the markers in their place
    exclusions: Exclusions = NO_EXCLUSIONS

    @property
    def trusted(self) -> bool:
        return self.resources.project_trusted

    @property
    def system_prompt(self) -> str:
        return "".join(p.text for p in self.prompt_parts)

    @property
    def tokenizer(self) -> str:
        return self.estimator.tokenizer

    @property
    def shown_manifest(self) -> Manifest | None:
        """The stored manifest with the excluded rows ``omitted``."""
        return with_exclusions(self.manifest, self.exclusions) if self.manifest is not None else None


def view_from_parts(
    resources: LoadedResources,
    tree: SessionTree | None,
    model: Model | None,
    active_tools: Sequence[str] | None = None,
    estimator: TokenEstimator | None = None,
    leaf_id: str | None = None,
    session_file: str | None = None,
    prompt_parts: Sequence[PromptPart] | None = None,
) -> ContextView:
    """A view over objects the caller already has (the window's runtime). ``prompt_parts``: the system
    prompt as the running session sends it (``AgentSession.system_prompt_parts()``); else it is
    assembled from ``resources`` and the active tools."""
    contract = latest_contract(tree, leaf_id) if tree is not None else None
    manifest = latest_manifest(tree, leaf_id) if tree is not None else None
    exclusions = latest_exclusions(tree, leaf_id) if tree is not None else NO_EXCLUSIONS
    names = (
        list(active_tools)
        if active_tools is not None
        else allowed_tools(contract, DEFAULT_ACTIVE_TOOLS, ALL_TOOL_NAMES)
    )
    registry = create_default_tools(ALL_TOOL_NAMES)
    specs = [ToolSpec(s.name, s.description, s.parameters) for s in registry.specs(names)]
    if prompt_parts is not None:
        parts = list(prompt_parts)
    else:
        files = functools.partial(context_files_for_task, exclusions=exclusions)
        parts = prompt_parts_for(resources, names, registry, files)
    messages: list[Message] = []
    if tree is not None:
        context = tree.build_context(leaf_id) if leaf_id is not None else tree.build_context()
        messages = RequestProjection().messages(list(context.messages), exclusions)
    return ContextView(
        resources.cwd,
        resources.agent_dir,
        resources,
        tree,
        leaf_id,
        messages,
        model,
        names,
        specs,
        parts,
        estimator or TokenEstimator(),
        GovernorSettings.from_settings(resources.settings.values),
        contract,
        manifest,
        session_file,
        exclusions,
    )


def view_from_session(
    session: AgentSession,
    resources: LoadedResources,
    estimator: TokenEstimator | None = None,
    session_file: str | None = None,
) -> ContextView:
    """A view of a running session's next request: its branch, model, active tools and system prompt
    exactly as it sends them (the session's governor estimator by default, so counts are shared)."""
    return view_from_parts(
        resources,
        session.tree,
        session.model,
        session.tool_names(),
        estimator or session.governance.governor.estimator,
        session_file=session_file,
        prompt_parts=session.system_prompt_parts(),
    )


def _model_for(
    models: ModelRegistry, settings: Mapping[str, Any], session_model: Any, ref: str | None
) -> Model | None:
    if ref:
        provider, _, model_id = ref.partition("/") if "/" in ref else ("", "", ref)
        if provider:
            return models.find(provider, model_id)
        return next((m for m in models.models if m.id == model_id), None)
    if isinstance(session_model, Mapping) and isinstance(session_model.get("provider"), str):
        found = models.find(str(session_model["provider"]), str(session_model.get("modelId", "")))
        if found is not None:
            return found
    values = SettingValues.of(settings)
    default_provider, default_id = values.value(DEFAULT_PROVIDER), values.value(DEFAULT_MODEL)
    if default_provider is not None and default_id is not None:
        return models.find(default_provider, default_id)
    return None


async def load_view(
    cwd: str,
    agent_dir: str | os.PathLike[str],
    session_file: str | None = None,
    leaf_id: str | None = None,
    model_ref: str | None = None,
    trust_override: bool | None = None,
) -> ContextView:
    """Decide trust (nobody is asked), load resources, the session branch and the model's tokenizer."""
    agent = str(agent_dir)
    resolver = TrustResolver(TrustStore(agent), ask=None)
    resources = await load_project(
        os.path.abspath(cwd),
        agent,
        resolver,
        LoaderOptions(context_file_cap=cap_context_files),
        override=trust_override,
    )
    tree: SessionTree | None = None
    if session_file is not None:
        store = await asyncio.to_thread(open_session, Path(session_file), writable=False)
        tree = store.tree
    session_model = None
    if tree is not None:
        context = tree.build_context(leaf_id) if leaf_id is not None else tree.build_context()
        session_model = context.model
    models = ModelRegistry(Path(agent))
    model = _model_for(models, resources.settings.values, session_model, model_ref)
    tokenizers = Tokenizers(Path(agent))
    await asyncio.to_thread(tokenizers.load_for, model.id if model else "")
    estimator = TokenEstimator(tokenizers.counter_for(model.id if model else ""))
    return view_from_parts(resources, tree, model, None, estimator, leaf_id, session_file)


def view_summarizer(view: ContextView) -> Summarizer | None:
    """For a view loaded from disk (no running session to ask): a summarizer on the view's model over
    the default provider path, when the model has an API key or runs on this machine."""
    model = view.model
    if model is None:
        return None
    models = ModelRegistry(Path(view.agent_dir))
    key = CredentialStore(config_key=models.config_api_key).api_key(model.provider)
    if not key and not is_loopback(model.base_url):
        return None
    return Summarizer(
        model=models.with_resolved_headers(model), complete=complete_through(default_stream_fn()), api_key=key
    )
