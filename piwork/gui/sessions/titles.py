"""How a session's first message reads as its title: a /skill:name invocation by the command typed rather
than the <skill …> block written for the model (the session browser, palette and search use it)."""

from __future__ import annotations


def first_message_title(text: str) -> str:
    from piwork.core.resources import parse_skill_invocation  # the engine's, loaded after the first frame

    invocation = parse_skill_invocation(text)
    if invocation is None:
        return text
    return f"/skill:{invocation.name} {' '.join(invocation.args.split())}".strip()
