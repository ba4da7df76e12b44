"""Slash commands typed in the composer. Parsing only; the chat panel decides what each one does."""

from __future__ import annotations

from dataclasses import dataclass

# name -> (argument hint, description); shown by the composer's completer and in Help.
COMMANDS: dict[str, tuple[str, str]] = {
    "compact": ("[focus]", "Summarise older messages now, optionally focusing the summary on something"),
    "tree": ("", "Show the session tree to branch from an earlier point"),
    "name": ("[name]", "Name this session (asks when no name is given)"),
    "new": ("", "Start a new session in this project"),
    "skill:": ("<name> [args]", "Run a skill with optional arguments"),
}


@dataclass(frozen=True)
class SlashCommand:
    name: str  # "compact", "tree", "name", "new", "skill", or any other word (a prompt template)
    args: str
    skill: str = ""  # for /skill:<name>

    @property
    def known(self) -> bool:
        return self.name in ("compact", "tree", "name", "new", "skill")


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
