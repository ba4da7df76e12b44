"""piwork's exported page shows at least what the reference implementation's export of the same session
shows: the entry count, every user and assistant text, each tool call's name, arguments and output
(the edit's recorded diff included), branch summaries, labels, model changes, images and the header's
figures, a skill invocation. Both pages are opened in headless Chromium and the facts are read from their DOMs.

The session comes from real runs against the loopback server (two branches, a branch summary written
by the model), with a label, a skill invocation, an image, thinking, a model change, a compaction and
an extension message added after them. It is compared on its own leaf and on the abandoned branch.

Needs Node with the reference package (``$PI_ORACLE_DIR``) and Chromium; skipped with a reason otherwise.
"""

from __future__ import annotations

import base64
import io
import json
import os
import re
import subprocess
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from piwork.core.export.html_export import export_html
from piwork.core.session.store import open_session
from tests.support.branch_runs import record_two_branches
from tests.support.chromium import chromium_path, dump_dom
from tests.support.reference import MISSING_REASON, NODE, PI_DIST, reference_installed

CLI = PI_DIST / "bundle" / "cli.js"
pytestmark = [
    pytest.mark.oracle,
    pytest.mark.skipif(not reference_installed(CLI), reason=MISSING_REASON),
    pytest.mark.skipif(
        chromium_path() is None, reason="Chromium is not installed: the pages are not rendered"
    ),
]

_SKIPPED = {"script", "style", "svg", "button", "noscript"}
_BLOCKS = {
    "div",
    "p",
    "pre",
    "li",
    "section",
    "dt",
    "dd",
    "h1",
    "h2",
    "h3",
    "h4",
    "summary",
    "details",
    "tr",
    "td",
}


class _Texts(HTMLParser):
    """The text under each element, by class and by id (scripts, styles, icons and buttons left out)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.by_class: dict[str, list[str]] = {}
        self.by_id: dict[str, str] = {}
        self.by_tag: dict[str, list[str]] = {}
        self.images = 0  # data: images inside the conversation (the element with id "messages")
        self._open: list[tuple[str, list[str], str | None, list[str]]] = []  # tag, classes, id, texts
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "img" and (found.get("src") or "").startswith("data:image"):
            self.images += any(ident == "messages" for _t, _c, ident, _x in self._open)
        if tag in ("img", "br", "input", "meta", "link", "hr", "path", "circle", "line"):
            return
        if tag in _SKIPPED:
            self._skip += 1
        self._open.append((tag, (found.get("class") or "").split(), found.get("id"), []))

    def handle_endtag(self, tag: str) -> None:
        while self._open:
            name, classes, ident, texts = self._open.pop()
            if name in _SKIPPED:
                self._skip -= 1
            text = "".join(texts)
            for cls in classes:
                self.by_class.setdefault(cls, []).append(text)
            if ident:
                self.by_id[ident] = text
            self.by_tag.setdefault(name, []).append(text)
            if self._open:
                self._open[-1][3].append(text + ("\n" if name in _BLOCKS else ""))
            if name == tag:
                break

    def handle_data(self, data: str) -> None:
        if self._open and not self._skip:
            self._open[-1][3].append(data)


def _texts(dom: str) -> _Texts:
    parser = _Texts()
    parser.feed(dom)
    parser.close()
    return parser


def _flat(text: str) -> str:
    return " ".join(text.split())


def _lines(text: str) -> Iterator[str]:
    return (_flat(line) for line in text.split("\n") if line.strip())


def _png() -> str:
    out = io.BytesIO()
    Image.new("RGB", (24, 16), (200, 40, 40)).save(out, "PNG")
    return base64.b64encode(out.getvalue()).decode("ascii")


def _session(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    (tmp_path / "run").mkdir()
    recorded = record_two_branches(tmp_path / "run")
    with open_session(recorded.path) as session:
        session.tree.set_label(recorded.ids["tip_a"], "prints-hello")
    last = json.loads(recorded.path.read_text(encoding="utf-8").splitlines()[-1])
    stamp, png = last["timestamp"], _png()
    usage = {"input": 400, "output": 60, "cacheRead": 100, "cacheWrite": 20, "totalTokens": 580,
             "cost": {"input": 0.0012, "output": 0.0009, "cacheRead": 0.00003, "cacheWrite": 0.000075, "total": 0.002205}}  # fmt: skip

    def message(entry_id: str, parent: str, value: dict[str, Any]) -> dict[str, Any]:
        return {"type": "message", "id": entry_id, "parentId": parent, "timestamp": stamp, "message": value}

    more = [
        message("skl00001", last["id"], {"role": "user", "timestamp": 1, "content": [{"type": "text", "text": (
            '<skill name="tidy" location="/home/u/.pi/agent/skills/tidy/SKILL.md">\n'
            "# Tidy\n\nSort the imports, then run the formatter.\n</skill>\n\nTidy hello.py please.")}]}),
        message("img00001", "skl00001", {"role": "user", "timestamp": 1, "content": [
            {"type": "text", "text": "What colour is this?"}, {"type": "image", "data": png, "mimeType": "image/png"}]}),
        message("thk00001", "img00001", {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "A small red rectangle, it seems."},
            {"type": "text", "text": "It is **red**."},
            {"type": "toolCall", "id": "call_r1", "name": "read", "arguments": {"path": "shot.png"}}],
            "api": "anthropic-messages", "provider": "loopback", "model": "loopback-model", "usage": usage,
            "stopReason": "toolUse", "timestamp": 2}),
        message("res00001", "thk00001", {"role": "toolResult", "toolCallId": "call_r1", "toolName": "read",
            "content": [{"type": "text", "text": "Read image file [image/png]"},
                        {"type": "image", "data": png, "mimeType": "image/png"}], "isError": False, "timestamp": 3}),
        {"type": "model_change", "id": "mc000001", "parentId": "res00001", "timestamp": stamp,
         "provider": "openai", "modelId": "gpt-4o"},
        message("fin00001", "mc000001", {"role": "assistant", "content": [{"type": "text", "text": "Red, then."}],
            "api": "openai-completions", "provider": "openai", "model": "gpt-4o", "usage": usage,
            "stopReason": "stop", "timestamp": 4}),
        {"type": "compaction", "id": "cmp00001", "parentId": "fin00001", "timestamp": stamp,
         "summary": "## Goal\nName colours.", "firstKeptEntryId": "img00001", "tokensBefore": 5000},
        message("aft00001", "cmp00001", {"role": "user", "content": "After the compaction.", "timestamp": 5}),
        {"type": "custom_message", "id": "cus00001", "parentId": "aft00001", "timestamp": stamp,
         "customType": "note", "content": "An extension note", "display": True},
    ]  # fmt: skip
    with open(recorded.path, "a", encoding="utf-8") as out:
        out.write("".join(json.dumps(e, separators=(",", ":")) + "\n" for e in more))
    return recorded.path, recorded.ids


def _on_branch(source: Path, tip: str, target: Path) -> Path:
    """A copy of ``source`` whose last line hangs under ``tip`` (a name entry), so both exports open there."""
    lines = source.read_text(encoding="utf-8")
    name = {
        "type": "session_info",
        "id": "nm000001",
        "parentId": tip,
        "timestamp": "2026-01-01T00:00:00.000Z",
    }
    target.write_text(lines + json.dumps({**name, "name": "the first way"}) + "\n", encoding="utf-8")
    return target


def _reference_export(tmp_path: Path, session: Path, out: Path) -> Path:
    env = {**os.environ, "PI_OFFLINE": "1", "PI_SKIP_VERSION_CHECK": "1", "TZ": "UTC",
           "PI_CODING_AGENT_DIR": str(tmp_path / "pi-agent")}  # fmt: skip
    (tmp_path / "pi-agent").mkdir(exist_ok=True)
    done = subprocess.run(
        [str(NODE), str(CLI), "--export", str(session), str(out)],
        capture_output=True, text=True, env=env, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0 and out.exists(), done.stdout + done.stderr
    return out


def _count(text: str) -> float:
    """A figure as the reference abbreviates it: 1.3k, 2M, 134."""
    scale = {"k": 1e3, "M": 1e6}.get(text[-1], 1)
    return float(text.rstrip("kM")) * scale


def _check_same_facts(pi: _Texts, ours: _Texts) -> list[str]:
    """Every fact the reference's page shows, missing from piwork's (an empty list when none is)."""
    conversation = _flat(ours.by_id["messages"])
    header = _flat(" ".join(ours.by_tag.get("header", [])))
    missing: list[str] = []

    def need(fact: str, where: str, what: str) -> None:
        if fact and fact not in where:
            missing.append(f"{what}: {fact!r}")

    total = re.search(r"/\s*(\d+)\s+entries", pi.by_id["tree-status"])
    assert total is not None
    ours_total = re.search(r"(\d+) entries", ours.by_id["graph-caption"])
    if ours_total is None or ours_total.group(1) != total.group(1):
        missing.append(f"entry count {total.group(1)} (piwork: {ours.by_id['graph-caption']!r})")
    for cls, what in (("markdown-content", "message text"), ("tool-output", "tool output"),
                      ("diff-removed", "edit diff"), ("diff-added", "edit diff"), ("thinking-text", "thinking")):  # fmt: skip
        for text in pi.by_class.get(cls, []):
            for line in _lines(text):
                need(line, conversation, what)
    for header_text in pi.by_class.get("tool-header", []) + pi.by_class.get("tool-command", []):
        need(_flat(header_text), conversation, "tool call")
    framing = {
        _flat(t)
        for t in pi.by_class.get("branch-summary-header", []) + pi.by_class.get("message-timestamp", [])
    }
    for summary in pi.by_class.get("branch-summary", []):
        for line in _lines(summary):
            need("" if line in framing else line, conversation, "branch summary")
    for skill in pi.by_class.get("skill-invocation-label", []):
        need("skill " + _flat(skill).split("]")[-1].strip(), conversation, "skill invoked")
    for name in pi.by_class.get("model-name", []):
        need(_flat(name), conversation, "model change")
    for label in pi.by_class.get("tree-label", []):
        need(_flat(label).strip("[]"), _flat(ours.by_id["tree"]) + " " + conversation, "label")
    if ours.images < pi.images:
        missing.append(f"images: the reference shows {pi.images}, piwork {ours.images}")
    facts = dict(zip((_flat(t).rstrip(":") for t in pi.by_class["info-label"]),
                     (_flat(t) for t in pi.by_class["info-value"]), strict=True))  # fmt: skip
    for model in facts.get("Models", "").split(","):
        need(model.strip(), header, "model")
    need(f"Tool calls {facts.get('Tool Calls', '')}", header, "tool call count")
    wording = {"user": "user", "assistant": "assistant", "tool results": "tool results", "custom": "extension message",
               "compactions": "compaction", "branch summaries": "branch summar"}  # fmt: skip
    for number, kind in re.findall(r"(\d+) ([a-z ]+?)(?:,|$)", facts.get("Messages", "")):
        need(f"{number} {wording.get(kind, kind)}", header, "message count")
    tokens = re.search(r"↑(\S+) ↓(\S+)", facts.get("Tokens", ""))
    ours_tokens = re.search(r"([\d,]+) in · ([\d,]+) out", header)
    if tokens is not None:
        if ours_tokens is None:
            missing.append("token totals")
        else:
            for theirs, mine in zip(tokens.groups(), ours_tokens.groups(), strict=True):
                if abs(_count(theirs) - float(mine.replace(",", ""))) > 0.05 * _count(theirs) + 1:
                    missing.append(f"tokens {theirs} (piwork {mine})")
    cost = re.search(r"\$([\d.]+)", header)
    if "Cost" in facts and (cost is None or abs(float(cost.group(1)) - float(facts["Cost"])) > 0.0006):
        missing.append(f"cost {facts['Cost']}")
    return missing


def test_piwork_page_shows_what_the_reference_page_shows(tmp_path: Path) -> None:
    session, ids = _session(tmp_path)
    checked = skills = 0
    for path in (session, _on_branch(session, ids["tip_a"], tmp_path / "branch-a.jsonl")):
        pi = _texts(dump_dom(_reference_export(tmp_path, path, tmp_path / f"pi-{path.stem}.html")))
        ours = _texts(dump_dom(export_html(path, tmp_path / f"piwork-{path.stem}.html")))
        assert pi.by_class.get("markdown-content") and pi.by_class.get("tool-header"), (
            "the reference page changed"
        )
        assert _check_same_facts(pi, ours) == [], path.name
        checked += len(pi.by_class["markdown-content"]) + len(pi.by_class["tool-header"])
        skills += len(pi.by_class.get("skill-invocation-label", []))
    assert checked >= 15 and skills == 1
