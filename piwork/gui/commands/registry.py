"""The slash commands the window runs, each declared once: its name, the hint for its arguments, what it
does and the handler that does it. The composer's completer, the command palette and Help read the same
declarations; the controller runs a typed command through :meth:`CommandRegistry.run`."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from piwork.gui.commands.context import CommandContext

Handler = Callable[["CommandContext", str], object]


@dataclass(frozen=True, slots=True)
class Command:
    name: str  # typed after the slash; a name ending in ":" is a prefix (``skill:``) the agent expands
    hint: str  # the arguments, as the completer shows them: ``[focus]``, ``<name> [args]``
    about: str  # one line: what it does
    run: Handler | None = None  # None: declared for the completer only, the agent handles it

    @property
    def needs_argument(self) -> bool:
        """Run from the palette, it is inserted into the composer to be completed rather than run."""
        return self.hint.startswith("<")


class CommandRegistry:
    def __init__(self, commands: Iterable[Command] = ()) -> None:
        self._commands: dict[str, Command] = {}
        for command in commands:
            self.add(command)

    def add(self, command: Command) -> None:
        if command.name in self._commands:
            raise ValueError(f"/{command.name} is declared twice")
        self._commands[command.name] = command

    def __iter__(self) -> Iterator[Command]:
        return iter(self._commands.values())

    def __len__(self) -> int:
        return len(self._commands)

    def get(self, name: str) -> Command | None:
        return self._commands.get(name)

    def runs(self, name: str) -> bool:
        """The window runs ``/name`` itself (anything else typed after a slash goes to the agent)."""
        command = self._commands.get(name)
        return command is not None and command.run is not None

    def run(self, ctx: CommandContext, name: str, args: str) -> bool:
        """Run ``/name args``; False when the window has no such command."""
        command = self._commands.get(name)
        if command is None or command.run is None:
            return False
        command.run(ctx, args)
        return True
