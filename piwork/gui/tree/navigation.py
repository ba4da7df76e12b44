"""How the tree panel moves the session: a small protocol with two implementations.

- `AgentNavigator` drives a live `AgentSession` (refuses while it streams, updates its context).
- `TreeNavigator` drives the engine's `navigate_tree` on a bare `SessionTree` with an optional
  summarizer (the panel's tests use it; the window always has an AgentSession).

Both run until done or until their task is cancelled (nothing is written then).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from piwork.core.agent import AgentSession
from piwork.core.compaction import (
    BranchSummaryProgress,
    BranchSummarySettings,
    NavigationResult,
    Summarizer,
    branch_summary_budget,
    navigate_tree,
)
from piwork.core.session import SessionTree

ProgressFn = Callable[[BranchSummaryProgress], None]
STREAMING_REFUSAL = "Wait for the current response to finish before navigating the session tree."


class Navigator(Protocol):
    @property
    def is_streaming(self) -> bool: ...

    @property
    def can_summarize(self) -> bool: ...

    @property
    def can_replace_instructions(self) -> bool: ...

    @property
    def summary_budget(self) -> int | None:
        """Tokens of the branch a summary would be given (None: no summary can be made)."""
        ...

    async def navigate(
        self,
        target_id: str,
        *,
        summarize: bool,
        focus: str | None,
        replace_instructions: bool,
        label: str | None,
        on_progress: ProgressFn | None = None,
    ) -> NavigationResult: ...


class TreeNavigator:
    def __init__(
        self,
        tree: SessionTree,
        summarizer: Summarizer | None = None,
        settings: BranchSummarySettings | None = None,
    ) -> None:
        self.tree = tree
        self.summarizer = summarizer
        self.settings = settings

    @property
    def is_streaming(self) -> bool:
        return False

    @property
    def can_summarize(self) -> bool:
        return self.summarizer is not None

    @property
    def can_replace_instructions(self) -> bool:
        return True

    @property
    def summary_budget(self) -> int | None:
        if self.summarizer is None:
            return None
        settings = self.settings or BranchSummarySettings()
        return branch_summary_budget(self.summarizer.model.context_window, settings)

    async def navigate(
        self,
        target_id: str,
        *,
        summarize: bool,
        focus: str | None,
        replace_instructions: bool,
        label: str | None,
        on_progress: ProgressFn | None = None,
    ) -> NavigationResult:
        return await navigate_tree(
            self.tree,
            target_id,
            summarize=summarize,
            custom_instructions=focus,
            replace_instructions=replace_instructions,
            label=label,
            summarizer=self.summarizer,
            settings=self.settings,
            on_progress=on_progress,
            strict_pi=False,  # the engine's mode: piwork's deviations from the reference
        )


class AgentNavigator:
    """Adapter over `AgentSession.navigate`."""

    def __init__(self, agent: AgentSession) -> None:
        self.agent = agent

    @property
    def is_streaming(self) -> bool:
        return self.agent.is_streaming

    @property
    def can_summarize(self) -> bool:
        return self.agent.model is not None

    @property
    def can_replace_instructions(self) -> bool:
        return True

    @property
    def summary_budget(self) -> int | None:
        model = self.agent.model
        if model is None:
            return None
        settings = BranchSummarySettings.from_settings(self.agent.settings)
        return branch_summary_budget(model.context_window, settings)

    async def navigate(
        self,
        target_id: str,
        *,
        summarize: bool,
        focus: str | None,
        replace_instructions: bool,
        label: str | None,
        on_progress: ProgressFn | None = None,
    ) -> NavigationResult:
        return await self.agent.navigate(
            target_id,
            summarize=summarize,
            focus=focus,
            label=label,
            replace_instructions=replace_instructions,
            on_progress=on_progress,
        )
