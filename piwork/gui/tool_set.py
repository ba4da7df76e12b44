"""The open session's tools and the system prompt they make: the Resources panel shows the prompt the
session now sends, and a tool turned on or off there changes the session's next request."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, Protocol

from piwork.core.llm import Tokenizers
from piwork.core.workflows import AgentRuntime
from piwork.gui.context.feed import ContextFeed
from piwork.gui.main_window import MainWindow
from piwork.gui.resources.prompt_parts import show_system_prompt


class ToolSetHost(Protocol):
    runtime: AgentRuntime | None
    tokenizers: Tokenizers

    @property
    def front(self) -> bool: ...  # the session's tab is in front (the Resources panel shows its prompt)

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]: ...


class ToolSet:
    def __init__(self, host: ToolSetHost, window: MainWindow, feed: ContextFeed) -> None:
        self.host = host
        self.window = window
        self.feed = feed
        self._dock = window.docks["resources"]
        self._rough = False  # the prompt's parts were counted chars/4 while the panel was out of view
        self._dock.visibilityChanged.connect(self._panel_shown)

    def watch_dock(self) -> None:
        """The session's tab moved to another window: its Resources panel is the one shown."""
        self._dock.visibilityChanged.disconnect(self._panel_shown)
        self._dock = self.window.docks["resources"]
        self._dock.visibilityChanged.connect(self._panel_shown)

    def show_system_prompt(self) -> None:
        """Show the system prompt the session now sends in the Resources panel (a tool toggled, a context
        file excluded for this task, another model or tool set after a move in the tree changed it).
        The tokenizer is loaded for it once the panel is on screen, or there is a model (the meter's)."""
        runtime = self.host.runtime
        if runtime is None or not self.host.front:
            return
        session = runtime.session
        load = self._dock.isVisible() or session.model is not None
        self.host.spawn(self._show(runtime, load))

    async def _show(self, runtime: AgentRuntime, load: bool) -> None:
        rough = await show_system_prompt(
            self.window.resource_panel, runtime.session, runtime.resources, self.host.tokenizers, load
        )
        if runtime is self.host.runtime:
            self._rough = rough

    def _panel_shown(self, visible: bool) -> None:
        if visible and self._rough:
            self._rough = False
            self.show_system_prompt()

    def toggle_tool(self, name: str, on: bool) -> None:
        """Turn a tool on (added after the others) or off for the open session: its next request sends
        the new set, and the system prompt, X-ray and meter show it at once."""
        runtime = self.host.runtime
        if runtime is None:
            return
        session = runtime.session
        names = session.tool_names()
        if on and name not in names:
            names.append(name)
        elif not on:
            names = [n for n in names if n != name]
        session.set_active_tools(names)
        self.feed.schedule()
        self.show_system_prompt()
        state = "on" if on else "off"
        self.window.status.showMessage(f"Tool {name} turned {state} for this session.", 5000)
