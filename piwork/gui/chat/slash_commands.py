"""Slash commands typed in the composer. Parsing only; the chat panel decides what each one does."""

from __future__ import annotations

from dataclasses import dataclass

# name -> (argument hint, description); shown by the composer's completer, the palette and Help.
COMMANDS: dict[str, tuple[str, str]] = {
    "compact": ("[focus]", "Summarise older messages now, optionally focusing the summary on something"),
    "tree": ("", "Show the session tree to branch from an earlier point"),
    "name": ("[name]", "Name this session (asks when no name is given)"),
    "new": ("", "Start a new session in this project"),
    "model": ("[provider/model]", "Switch the model (opens the picker when none is given)"),
    "thinking": ("[level]", "Set the thinking level: off, minimal, low, medium, high, xhigh, max"),
    "session": ("", "Show this session's file, id, messages, tokens and cost"),
    "fork": ("", "Start a new session from before one of your earlier messages"),
    "clone": ("", "Copy the active branch into a new session and continue there"),
    "copy": ("", "Copy the last reply to the clipboard"),
    "export": ("[file.html|file.jsonl]", "Save the session as an HTML page, or its branch as a session file"),
    "import": ("[file.jsonl]", "Copy a session file into this project's sessions and open it"),
    "reload": ("", "Re-read skills, prompt templates, context files and settings"),
    "hotkeys": ("", "List the keyboard shortcuts"),
    "resume": ("", "Browse and open another session"),
    "search": ("[words]", "Search every session of the project"),
    "trust": ("", "Decide whether this project's resources may load"),
    "settings": ("", "Providers, default model, compaction"),
    "logs": ("", "List this session's full-output logs and open the newest in the log viewer"),
    "quit": ("", "Close piwork"),
    "skill:": ("<name> [args]", "Run a skill with optional arguments"),
    "context": (
        "preflight|budget|index-status|search <query>|pack <task>|compact|rebuild|manifest|exclude <layer|path>|include <layer|path>",
        "Context window: check the next request, the marks, the index, the task pack, the manifest; "
        "leave a layer out of this task or bring it back",
    ),
    "task": (
        "[read-only|source-write] [unfamiliar] <goal> [verify: <cmd>] [accept: <criterion>] [phase: <phase>]",
        "Start a task: its contract, manifest and the project's context layers before your next prompt",
    ),
    "onboard": (
        "run [--refresh]",
        "Create the project's context index, snapshot and profile template where missing",
    ),
    "fresh": (
        "task|scout|be-to-fe",
        "Continue the task in a new session seeded with its contract and a summary",
    ),
}

# Handled by the window; anything else starting with "/" goes to the agent (prompt templates expand there).
KNOWN = frozenset(name for name in COMMANDS if not name.endswith(":"))


@dataclass(frozen=True)
class SlashCommand:
    name: str  # a key of COMMANDS, "skill", or any other word (a prompt template)
    args: str
    skill: str = ""  # for /skill:<name>

    @property
    def known(self) -> bool:
        return self.name in KNOWN or self.name == "skill"


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
