"""The server dialog's presets and the README's table of local servers name the same addresses."""

from __future__ import annotations

import re
from pathlib import Path

from piwork.gui.settings.server_dialog import PRESETS

README = Path(__file__).resolve().parents[3] / "README.md"


def test_the_readme_lists_the_dialogs_local_server_presets() -> None:
    text = README.read_text(encoding="utf-8")
    table = text[text.index("Usual base URLs") :].split("\n\n", 2)[1]
    rows = [line for line in table.splitlines() if line.startswith("| ") and "`http" in line]
    urls = [re.search(r"`(http[^`]+)`", row).group(1) for row in rows]  # type: ignore[union-attr]
    assert urls == [url for _name, url in PRESETS]
    for (name, _url), row in zip(PRESETS, rows, strict=True):
        assert name.split()[0] in row  # "llama.cpp server" is the README's "llama.cpp (`llama-server`)"
