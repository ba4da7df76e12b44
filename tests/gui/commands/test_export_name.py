"""The file name File → Export offers: the session's name (or its project's) and its date, never the uuid."""

from __future__ import annotations

from pathlib import Path

from piwork.gui.commands.file_family import export_name

SOURCE = Path("2026-11-30T09-12-44-120Z_0193e5b2-7c1d-7a4e-9f00-0000000021aa.jsonl")


def test_the_offered_name_is_readable() -> None:
    assert export_name("Fix the parser", SOURCE) == "Fix-the-parser-2026-11-30.html"
    assert export_name("my-app", SOURCE) == "my-app-2026-11-30.html"  # unnamed: the project folder's name
    assert export_name("../../etc/passwd?", SOURCE) == "etc-passwd-2026-11-30.html"  # never a path
    assert export_name(None, Path("odd.jsonl")) == "session.html"
