"""What a command's handler is given: a small declared context, never the controller or its widgets.

Each part is a protocol the window fills in: the chat's notices, the background tasks the controller
supervises, the open session's lifecycle, choosing its model, the composer's text and the window's dialogs
and pickers."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from PySide6.QtWidgets import QWidget

if TYPE_CHECKING:
    from piwork.core.agent import AgentSession
    from piwork.core.llm import ModelRegistry
    from piwork.core.workflows import AgentRuntime


class Notices(Protocol):
    def add_notice(self, title: str, text: str = "", hint: str = "", error: bool = False) -> object: ...


class BackgroundTasks(Protocol):
    """Supervised tasks: a failure is reported (in the chat or the notification centre), none outlives the
    window."""

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]: ...


class ComposerText(Protocol):
    def toPlainText(self) -> str: ...

    def set_text(self, text: str) -> None: ...


class SessionLifecycle(Protocol):
    """The open session and what a command may ask of its lifecycle and keys."""

    cwd: str
    agent_dir: Path
    runtime: AgentRuntime | None

    async def open_session(
        self, session_file: str | None, *, reopen_current: bool = False
    ) -> AgentRuntime: ...

    def open_branched(self, session: Any, editor_text: str) -> None: ...

    def reload(self) -> None: ...

    async def keys_known(self, session: AgentSession) -> None:
        """Returns once the keyring has said whether the session's model has a key."""


class ModelPicks(Protocol):
    """The models known, and choosing the open session's model and thinking level."""

    @property
    def models(self) -> ModelRegistry: ...

    def pick_model(self, provider: str, model_id: str) -> None: ...

    def pick_thinking(self, level: str) -> None: ...


class SearchQuery(Protocol):
    def set_query(self, text: str) -> None: ...


class WindowSurface(Protocol):
    """The window's dialogs, pickers and panels, as a command reaches them."""

    @property
    def parent(self) -> QWidget:
        """The parent of a dialog a command opens."""

    def show_status(self, text: str, timeout_ms: int = 5000) -> None: ...

    def set_session_title(self, name: str | None) -> None: ...

    def show_tree(self) -> None: ...

    def open_log(self, path: str) -> None: ...

    def show_model_picker(self) -> None: ...

    def show_thinking_picker(self) -> None: ...

    def show_shortcuts(self) -> object: ...

    def show_sessions_browser(self) -> object: ...

    def show_search(self) -> SearchQuery: ...

    def show_trust(self) -> object: ...

    def show_settings(self) -> object: ...

    def close(self) -> bool: ...


class ContextWork(Protocol):
    """The context-engineering workflows (``/context``, ``/task``, ``/onboard``, ``/fresh``)."""

    async def run(self, name: str, args: str) -> None: ...


@dataclass(frozen=True, slots=True)
class CommandContext:
    notices: Notices
    tasks: BackgroundTasks
    sessions: SessionLifecycle
    model_choice: ModelPicks
    composer: ComposerText
    window: WindowSurface
    context: ContextWork

    @property
    def runtime(self) -> AgentRuntime | None:
        return self.sessions.runtime

    @property
    def session(self) -> AgentSession | None:
        runtime = self.sessions.runtime
        return runtime.session if runtime is not None else None

    def notice(self, title: str, text: str, *, error: bool = False, hint: str = "") -> None:
        self.notices.add_notice(title, text, hint=hint, error=error)
