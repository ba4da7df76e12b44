"""The window's tree navigator for the panel tests: `AgentNavigator` over a real AgentSession on the test's
session file, answering through the loopback provider when a model is given."""

from __future__ import annotations

from typing import Any

from piwork.core.llm.types import Model
from piwork.core.session.store import Session
from piwork.gui.tree.navigation import AgentNavigator
from tests.core.agent.sessions_support import make_session


def navigator_for(
    session: Session, model: Model | None = None, settings: dict[str, Any] | None = None
) -> AgentNavigator:
    """``model``: where a branch summary is asked for (None: summaries cannot be offered). Retries are
    off, so a failed summary shows at once."""
    agent, _store, _recorder, _gate = make_session(
        model, store=session, settings={"retry": {"enabled": False}, **(settings or {})}
    )
    return AgentNavigator(agent)
