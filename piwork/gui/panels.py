"""Panels that show the open session attach to it through one small protocol, registered with the main
window: the controller hands each session to the window's panels once (one panel per event-loop turn),
instead of pushing its state into every panel. A panel that follows the session as it changes subscribes
to its events in ``attach`` and lets go in ``detach``."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from piwork.core.workflows import AgentRuntime


class SessionPanel(Protocol):
    def attach(self, runtime: AgentRuntime) -> None:
        """Show ``runtime``'s session (a session was opened, or reopened)."""

    def detach(self) -> None:
        """The session is being closed: stop following it (the next ``attach`` replaces what is shown)."""

    def shutdown(self) -> None:
        """The window is closing: cancel background work."""


class LazyPanel:
    """The place in ``SessionPanels`` of a panel made later (a dock's, when first shown): until ``get``
    makes it, it keeps the session shown, which the panel attaches to as soon as it is made."""

    def __init__(self, make: Callable[[], SessionPanel]) -> None:
        self._make = make
        self.panel: SessionPanel | None = None
        self._runtime: AgentRuntime | None = None

    def made(self) -> None:
        """Called once the panel is made: it shows the session of the moment."""
        self.panel = self._make()
        if self._runtime is not None:
            self.panel.attach(self._runtime)

    def attach(self, runtime: AgentRuntime) -> None:
        self._runtime = runtime
        if self.panel is not None:
            self.panel.attach(runtime)

    def detach(self) -> None:
        self._runtime = None
        if self.panel is not None:
            self.panel.detach()

    def shutdown(self) -> None:
        if self.panel is not None:
            self.panel.shutdown()


class SessionPanels:
    def __init__(self) -> None:
        self._panels: list[SessionPanel] = []

    def register(self, panel: SessionPanel) -> None:
        self._panels.append(panel)

    def __iter__(self) -> Iterator[SessionPanel]:
        return iter(self._panels)

    def detach(self) -> None:
        for panel in self._panels:
            panel.detach()

    def shutdown(self) -> None:
        for panel in self._panels:
            panel.shutdown()
