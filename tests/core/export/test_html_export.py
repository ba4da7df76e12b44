"""The HTML export opened in a real headless Chromium: the tree is there, branches switch through the
address fragment, and the file holds no network address (nothing can be fetched)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from html.parser import HTMLParser
from pathlib import Path

import pytest

from piwork.core.export.html_export import ExportError, embedded_json, export_html
from piwork.core.session.store import open_session
from tests.support.branch_runs import record_two_branches
from tests.support.chromium import click_and_download, dump_dom, opened_page
from tests.support.rich_session import ABANDONED_TEXT, ACTIVE_TEXT, LONG_OUTPUT, write_rich_session

URL = re.compile(r"(?i)(?:https?|wss?|ftp)://")


class _Dom(HTMLParser):
    """Elements of interest in a dumped DOM: tree rows, message cards, the shown branch."""

    def __init__(self) -> None:
        super().__init__()
        self.tree_ids: list[str] = []
        self.card_ids: list[str] = []
        self.target: list[str] = []
        self.leaf = ""
        self.details = 0
        self.svg_circles = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        classes = (a.get("class") or "").split()
        if tag == "div" and "node" in classes:
            self.tree_ids.append(a.get("data-id") or "")
        if tag == "section" and "entry" in classes:
            self.card_ids.append(a.get("data-id") or "")
            if "target" in classes:
                self.target.append(a.get("data-id") or "")
        if tag == "main" and a.get("id") == "messages":
            self.leaf = a.get("data-leaf") or ""
        if tag == "details":
            self.details += 1
        if tag == "circle":
            self.svg_circles += 1


def _messages(dom: str) -> str:
    """The rendered conversation pane (the first ``<main>``: the scripts come after it)."""
    start = dom.index("<main ")
    return dom[start : dom.index("</main>", start)]


def _parse(dom: str) -> _Dom:
    parser = _Dom()
    parser.feed(dom)
    return parser


@pytest.fixture
def page(tmp_path: Path) -> Path:
    source = write_rich_session(tmp_path / "rich.jsonl")
    before = source.read_bytes()
    out = export_html(source, tmp_path / "rich.html")
    assert source.read_bytes() == before  # the session is only read
    return out


def test_the_file_is_self_contained(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    assert not URL.search(text)  # the session quotes an address; the file still holds none
    assert not re.search(r"(?i)<(?:link|iframe|object|embed)\b", text)
    assert not re.search(r'(?i)\bsrc\s*=\s*"(?!data:)', text)
    assert "default-src 'none'" in text
    # "</script>" inside a message cannot close the data element early.
    assert text.count("</script>") == 2


def test_embedded_json_round_trips() -> None:
    import json

    value = {"t": "a </script> <!-- https://x.y/z \u2028 é 😀", "n": [1, 2.5, None]}
    encoded = embedded_json(value).decode("utf-8")
    assert "</" not in encoded and "://" not in encoded
    assert json.loads(encoded) == value
    raw = [b'{"id":"a","text":"</script> http://x"}', b'{"id":"b"}']
    joined = json.loads(embedded_json({"k": 1}, raw))
    assert joined == {"k": 1, "entries": [{"id": "a", "text": "</script> http://x"}, {"id": "b"}]}


def test_chromium_shows_the_active_branch_and_the_whole_tree(page: Path) -> None:
    dom = dump_dom(page)
    parsed = _parse(dom)
    assert parsed.leaf == "a5"
    # Every entry the default filter lists, from both branches (tool-only turns and labels are not).
    assert parsed.tree_ids == ["u1", "r1", "a1b", "u2", "a2", "u3", "r3", "c1", "u4", "a4", "bs", "u5", "a5"]
    assert "u2" not in parsed.card_ids and "u5" in parsed.card_ids and "c1" in parsed.card_ids
    assert ACTIVE_TEXT in _messages(dom) and ABANDONED_TEXT not in _messages(dom)
    assert "start here" in dom  # the label
    assert parsed.svg_circles >= 3  # the graph: a fork and two tips
    assert "Output — 60 lines" in dom and parsed.details >= 3  # long output, thinking, summaries collapsed
    assert LONG_OUTPUT.splitlines()[-1] in dom  # the full output is inside its <details>
    # Code in a fence names its language: keywords, strings and comments are coloured.
    assert '<span class="tok-k">return</span> <span class="tok-s">\'ok\'</span>' in _messages(dom)
    assert '<span class="tok-c"># linked</span>' in _messages(dom)
    assert "<b>x</b>" not in _messages(dom) and "&lt;b&gt;x&lt;/b&gt;" in _messages(dom)  # text escaped


def test_chromium_switches_to_an_abandoned_branch_by_fragment(page: Path) -> None:
    dom = dump_dom(page, "leaf=a2&target=u2")
    parsed = _parse(dom)
    assert parsed.leaf == "a2"
    assert parsed.target == ["u2"]
    messages = _messages(dom)
    assert ABANDONED_TEXT in messages and ACTIVE_TEXT not in messages
    assert "Another branch" in messages and "branch 1 of 2" in messages
    assert parsed.card_ids[:3] == ["u1", "a1", "a1b"]


def test_an_unknown_fragment_falls_back_to_the_active_branch(page: Path) -> None:
    assert _parse(dump_dom(page, "leaf=nope")).leaf == "a5"


def test_not_a_session(tmp_path: Path) -> None:
    bad = tmp_path / "notes.jsonl"
    bad.write_text('{"hello": 1}\n')
    with pytest.raises(ExportError, match="Not a session file"):
        export_html(bad, tmp_path / "x.html")
    with pytest.raises(ExportError, match="No such session file"):
        export_html(tmp_path / "missing.jsonl", tmp_path / "x.html")
    assert not (tmp_path / "x.html").exists()


def test_command_line(tmp_path: Path) -> None:
    source = write_rich_session(tmp_path / "rich.jsonl")
    done = subprocess.run(
        [sys.executable, "-m", "piwork", "export", str(source), "-o", str(tmp_path / "out.html")],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(tmp_path / "out.html")
    assert "session-data" in (tmp_path / "out.html").read_text(encoding="utf-8")
    bad = subprocess.run(
        [sys.executable, "-m", "piwork", "export", str(tmp_path / "missing.jsonl")],
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 1 and "No such session file" in bad.stderr


def test_a_version_1_file_is_migrated_in_memory_for_the_page(tmp_path: Path) -> None:
    import json

    lines = [
        {"type": "session", "id": "old", "timestamp": "2024-01-01T00:00:00.000Z", "cwd": "/p"},
        {
            "type": "message",
            "timestamp": "2024-01-01T00:00:01.000Z",
            "message": {"role": "user", "content": "first question"},
        },
        {
            "type": "message",
            "timestamp": "2024-01-01T00:00:02.000Z",
            "message": {"role": "assistant", "content": [{"type": "text", "text": "old answer"}]},
        },
    ]
    source = tmp_path / "v1.jsonl"
    source.write_text("".join(json.dumps(v) + "\n" for v in lines), encoding="utf-8")
    before = source.read_bytes()
    page = export_html(source, tmp_path / "v1.html")
    assert source.read_bytes() == before
    text = page.read_text(encoding="utf-8")
    data = json.loads(text.split('id="session-data">', 1)[1].split("</script>", 1)[0])
    assert data["title"] == "first question"
    assert [e["message"]["role"] for e in data["entries"]] == ["user", "assistant"]
    assert data["entries"][1]["parentId"] == data["entries"][0]["id"]
    assert data["leafId"] == data["entries"][1]["id"]


def test_a_long_branch_is_shown_a_window_at_a_time(tmp_path: Path) -> None:
    from tests.core.session.helpers import assistant, user, write_session

    entries = []
    parent = None
    for n in range(225):
        entries.append(user(f"u{n}", parent, f"question number {n}", 2 * n))
        entries.append(assistant(f"a{n}", f"u{n}", f"answer number {n}", 2 * n + 1))
        parent = f"a{n}"
    page = export_html(write_session(tmp_path / "long.jsonl", entries), tmp_path / "long.html")
    end = _parse(dump_dom(page))
    assert len(end.card_ids) == 200 and end.card_ids[-1] == "a224" and "u0" not in end.card_ids
    assert len(end.tree_ids) < 450  # the tree lays out only the rows in view
    assert "Show earlier entries (250 more)" in _messages(dump_dom(page))
    start = dump_dom(page, "leaf=a224&target=u0")
    parsed = _parse(start)
    assert parsed.card_ids[0] == "u0" and parsed.target == ["u0"]
    assert "Show later entries" in _messages(start) and "Show earlier entries" not in _messages(start)
    assert "u0" in parsed.tree_ids  # the tree scrolled to the target's row


def test_thinking_and_long_output_unfold_on_request(page: Path) -> None:
    folded = _messages(dump_dom(page, "leaf=r1"))
    assert '<details class="thinking">' in folded and '<details class="output">' in folded
    unfolded = _messages(dump_dom(page, "leaf=r1&open=thinking,outputs"))
    assert '<details class="thinking" open="">' in unfolded and '<details class="output" open="">' in unfolded


def test_recorded_edits_figures_counts_and_tool_parameters(tmp_path: Path) -> None:
    """On a session from real runs: an edit shows the diff the tool recorded (file line numbers), each
    answer its tokens and cost, the header the count of each kind of entry, the tools their parameters."""
    (tmp_path / "run").mkdir()
    recorded = record_two_branches(tmp_path / "run")
    tools = [{"name": "read", "description": "Read a file", "parameters": {
        "type": "object", "required": ["path"],
        "properties": {"path": {"type": "string", "description": "Where the file is"}, "limit": {"type": "number"}}}}]  # fmt: skip
    page = export_html(recorded.path, tmp_path / "page.html", system_prompt="You help.", tools=tools)
    dom = dump_dom(page, f"leaf={recorded.ids['tip_a']}")
    assert "<span class=\"del\">-1 print('hi')</span><span class=\"add\">+1 print('hello')</span>" in dom
    assert (
        '<div class="figures" title="Tokens and cost of this answer">160 in · 30 out · $0.0009</div>' in dom
    )
    text = " ".join(re.sub(r"<[^>]+>", " ", dom).split())
    assert "Messages 3 user · 10 assistant · 7 tool results Tool calls 7" in text
    assert "Summaries 1 branch summary · 0 compactions" in text
    assert "path string, required — Where the file is" in text and "limit number, optional" in text
    assert 'id="download-session"' in dom


def test_the_page_saves_the_session_file_again(tmp_path: Path) -> None:
    """Clicking 'Save as session file' in a real browser saves a file that opens with the same tree,
    labels and context as the exported session."""
    source = write_rich_session(tmp_path / "rich.jsonl")
    page = export_html(source, tmp_path / "page.html")
    (tmp_path / "saved").mkdir()
    saved = click_and_download(page, "download-session", tmp_path / "saved")
    assert saved.suffix == ".jsonl"
    with open_session(source, writable=False) as original, open_session(saved, writable=False) as again:
        assert again.tree.diagnostics == []
        assert len(again.tree) == len(original.tree) and again.tree.leaf_id == original.tree.leaf_id
        assert again.tree.labels() == original.tree.labels()
        assert again.tree.build_context().to_json() == original.tree.build_context().to_json()
        assert again.tree.header == original.tree.header


def test_escape_goes_back_to_the_session_leaf_and_the_tree_can_be_widened(page: Path) -> None:
    """In a real browser: Escape clears the tree's search and returns from an abandoned branch to the
    session's leaf; the separator beside the tree widens it with the arrow keys and by dragging."""
    with opened_page(page, "leaf=a2&target=u2") as tab:
        assert "Another branch" in tab.evaluate("document.getElementById('messages').textContent")
        tab.evaluate(
            "var s = document.getElementById('tree-search'); s.value = 'zebra';"
            " s.dispatchEvent(new Event('input')); s.focus()"
        )
        tab.key("Escape")
        tab.evaluate("document.body.focus()")
        shown = "location.hash + ' ' + document.getElementById('messages').textContent"
        for _ in range(100):  # the page follows the address when its hashchange event has run
            if "leaf=a5" in tab.evaluate(shown) and "Another branch" not in tab.evaluate(shown):
                break
            time.sleep(0.05)
        assert "leaf=a5" in tab.evaluate("location.hash")
        assert tab.evaluate("document.getElementById('tree-search').value") == ""
        assert "Another branch" not in tab.evaluate("document.getElementById('messages').textContent")
        before = tab.evaluate("document.querySelector('aside').getBoundingClientRect().width")
        tab.evaluate("document.getElementById('aside-resizer').focus()")
        tab.key("ArrowRight")
        tab.key("ArrowRight")
        after = tab.evaluate("document.querySelector('aside').getBoundingClientRect().width")
        assert after == before + 48
        box = tab.evaluate("JSON.stringify(document.getElementById('aside-resizer').getBoundingClientRect())")
        rect = json.loads(box)
        x, y = rect["x"] + rect["width"] / 2, rect["y"] + 200
        tab.drag((x, y), (x - 150, y))
        assert tab.evaluate("document.querySelector('aside').getBoundingClientRect().width") == pytest.approx(
            after - 150, abs=4
        )
