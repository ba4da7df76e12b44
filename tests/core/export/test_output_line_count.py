"""A tool result's line count is one figure: the engine's `output_line_count`, which the HTML export's
page shows (and the window's tool cards give, see tests/gui/chat/test_tool_views.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from piwork.core.export.html_export import export_html, load_for_export, output_lines
from piwork.core.messages import output_line_count
from tests.core.session.helpers import user, write_session
from tests.support.chromium import dump_dom
from tests.support.search_sessions import tool_call, tool_output

TWENTY = "".join(f"line {n}\n" for n in range(20))  # twenty lines, the last ended by its newline


def _result(*texts: str) -> dict[str, Any]:
    return {"role": "toolResult", "toolCallId": "c", "toolName": "bash",
            "content": [{"type": "text", "text": t} for t in texts], "isError": False}  # fmt: skip


def test_lines_are_counted_as_the_tools_count_them() -> None:
    assert output_line_count(_result(TWENTY)) == 20
    assert output_line_count(_result(TWENTY.removesuffix("\n"))) == 20
    assert output_line_count(_result("a\r\nb\r\n")) == 2
    assert output_line_count(_result("10%\r50%\r100%\n")) == 1  # a progress line is one line
    assert output_line_count(_result("one", "two\n")) == 2  # each text block on lines of its own
    assert output_line_count(_result()) == 0 and output_line_count(_result("")) == 0
    assert output_line_count({"role": "bashExecution", "command": "ls", "output": "a\nb\nc"}) == 3


def test_the_page_gives_the_engines_count(tmp_path: Path) -> None:
    entries = [
        user("u1", None, "list them", 1),
        tool_call("t1", "u1", "seq 20", 2),
        tool_output("r1", "t1", TWENTY, 3),
    ]
    source = write_session(tmp_path / "s.jsonl", entries)
    assert output_lines(load_for_export(source).entries_json) == {"r1": 20}
    page = export_html(source, tmp_path / "s.html")
    dom = dump_dom(page, "leaf=r1")
    assert "Output — 20 lines: line 0" in dom and "21 lines" not in dom
