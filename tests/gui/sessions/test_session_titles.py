"""A session started with /skill:name is titled by the command typed, not by the <skill …> block the
engine wrote for the model, wherever sessions are listed (browser, palette, search)."""

from __future__ import annotations

from pathlib import Path

from piwork.core.session.listing import SessionInfo
from piwork.gui.sessions.session_model import title_of
from piwork.gui.sessions.titles import first_message_title

SKILL_MESSAGE = (
    '<skill name="lint-check" location="/tmp/demo/.pi/skills/lint-check/SKILL.md">\n'
    "Paths in this skill are relative to /tmp/demo/.pi/skills/lint-check.\n\n"
    "# Lint check\nRun ruff.\n</skill>\n\nplease"
)


def test_a_skill_session_is_titled_by_its_command() -> None:
    assert first_message_title(SKILL_MESSAGE) == "/skill:lint-check please"
    assert first_message_title("fix the add function") == "fix the add function"
    info = SessionInfo(
        path=Path("/tmp/s.jsonl"),
        id="s1",
        cwd="/tmp/demo",
        name=None,
        parent_session_path=None,
        created="",
        modified_ms=0.0,
        message_count=2,
        first_message=SKILL_MESSAGE,
        all_messages_text=SKILL_MESSAGE,
        size=1,
    )
    assert title_of(info) == "/skill:lint-check please"
