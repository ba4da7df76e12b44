"""How a session's first message reads as its title: a /skill:name invocation by the command typed rather
than the <skill …> block written for the model (the session browser, palette and search use it)."""

from __future__ import annotations

from piwork.core.resources import parse_skill_invocation


def first_message_title(text: str) -> str:
    invocation = parse_skill_invocation(text)
    if invocation is None:
        return text
    return f"/skill:{invocation.name} {' '.join(invocation.args.split())}".strip()
