"""How the tree panel moves the session: `AgentNavigator`, over the window's live `AgentSession`.

The window and the tests drive the same navigator: it refuses while the agent streams, summarizes the
branch left behind with the session's own model and settings, and updates the agent's context after a
move. A move runs until done or until its task is cancelled (nothing is written then). A session
opened only for browsing has no navigator: the panel lets it be looked through but not moved.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from piwork.core.agent import AgentSession
    from piwork.core.compaction import BranchSummaryProgress, NavigationResult

ProgressFn = Callable[["BranchSummaryProgress"], None]
STREAMING_REFUSAL = "Wait for the current response to finish before navigating the session tree."


class AgentNavigator:
    """The tree panel's view of `AgentSession.navigate`: what it may offer, and the move itself."""

    def __init__(self, agent: AgentSession) -> None:
        self.agent = agent

    @property
    def is_streaming(self) -> bool:
        return self.agent.is_streaming

    @property
    def can_summarize(self) -> bool:
        return self.agent.model is not None

    @property
    def summary_budget(self) -> int | None:
        """Tokens of the branch a summary would be given (None: no summary can be made)."""
        model = self.agent.model
        if model is None:
            return None
        from piwork.core.compaction import BranchSummarySettings, branch_summary_budget  # the engine's

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
