"""Reading a slash command typed in the composer. Parsing only: the registry says what each one does."""

from __future__ import annotations

from dataclasses import dataclass

from piwork.gui.commands.catalog import BUILTIN


@dataclass(frozen=True)
class SlashCommand:
    name: str  # a command of the registry, "skill", or any other word (a prompt template)
    args: str
    skill: str = ""  # for /skill:<name>

    @property
    def known(self) -> bool:
        """The window handles it (a skill is expanded by the agent, the rest runs in the window)."""
        return BUILTIN.runs(self.name) or self.name == "skill"

    @property
    def runs_in_window(self) -> bool:
        return BUILTIN.runs(self.name)


def parse_slash(text: str) -> SlashCommand | None:
    """``/word rest`` -> SlashCommand; anything else (including ``//`` and ``/ x``) -> None."""
    stripped = text.strip()
    if not stripped.startswith("/") or len(stripped) < 2 or stripped[1] in "/ \t\n":
        return None
    head, _, rest = stripped[1:].partition(" ")
    head, _, extra = head.partition("\n")
    args = (extra + ("\n" if extra and rest else "") + rest).strip() if extra else rest.strip()
    if head.startswith("skill:"):
        return SlashCommand("skill", args, skill=head[len("skill:") :])
    return SlashCommand(head, args)
