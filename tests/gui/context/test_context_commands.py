"""Typed /context and /fresh in the window: the engine's answers as chat notices, /fresh opens the new session."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from piwork.core.context.contract import CONTEXT_TOOLS, TaskContract
from piwork.core.workflows.tasks import begin_task
from piwork.gui.chat.rows import RowKind
from piwork.gui.context.preflight_dialog import PreflightDialog
from piwork.gui.session_controller import SessionController
from tests.support import LoopbackServer, Text, ToolCall, Turn


def _notices(ctl: SessionController) -> list:  # type: ignore[type-arg]
    model = ctl.chat.model
    rows = [model.row_at(i) for i in range(model.rowCount())]
    return [r for r in rows if r.kind in (RowKind.NOTICE, RowKind.ERROR)]


def _type(ctl: SessionController, text: str) -> None:
    ctl.chat.composer.set_text(text)
    ctl.chat.composer.submit()


def _wait_notice(qtbot: QtBot, ctl: SessionController, title: str):  # type: ignore[no-untyped-def]
    qtbot.waitUntil(lambda: any(r.title == title for r in _notices(ctl)), timeout=10_000)
    return next(r for r in reversed(_notices(ctl)) if r.title == title)


def test_context_commands_answer_in_the_chat(qtbot: QtBot, controller: SessionController) -> None:
    _type(controller, "/context budget")
    row = _wait_notice(qtbot, controller, "/context budget")
    assert row.kind == RowKind.NOTICE
    assert "pressure 10931" in row.text and "source estimate" in row.text  # 32K window: 0.7 (W - 16,384)
    _type(controller, "/context manifest")
    row = _wait_notice(qtbot, controller, "/context manifest")
    assert row.text.startswith("Context manifest\n- context: AGENTS.md")
    _type(controller, "/context index-status")
    row = _wait_notice(qtbot, controller, "/context index-status")
    assert row.kind == RowKind.ERROR and "not trusted" in row.text  # the window was opened with no-approve
    _type(controller, "/context sideways")
    row = _wait_notice(qtbot, controller, "/context")
    assert row.kind == RowKind.ERROR and "preflight" in row.hint
    _type(controller, "/context preflight big.txt")
    row = _wait_notice(qtbot, controller, "/context preflight")
    # 1.2K sent + 14K planned on a 32K window: over the ceiling (14,054), under compaction (15,616)
    assert "- verdict: over-ceiling" in row.text and "plannedFiles" in row.text
    # the dialog counts with the model's tokenizer, built once on first use (seconds on a loaded machine)
    qtbot.waitUntil(lambda: bool(controller.window.findChildren(PreflightDialog)), timeout=15_000)
    for dialog in controller.window.findChildren(PreflightDialog):
        dialog.close()


def test_fresh_needs_a_task_then_opens_a_seeded_session(
    qtbot: QtBot, controller: SessionController, server: LoopbackServer
) -> None:
    _type(controller, "/fresh task")
    row = _wait_notice(qtbot, controller, "/fresh task")
    assert row.kind == RowKind.ERROR and "Task Contract" in row.text
    runtime = controller.runtime
    assert runtime is not None
    contract = TaskContract.from_json(
        {"title": "Notes", "goal": "summarise notes.txt", "mode": "read-only", "phase": "scout"}
    )
    begin_task(runtime.session, runtime.resources, contract)
    server.script(Turn([Text("notes say alpha and beta")]))
    controller.submit("summarise it")
    qtbot.waitUntil(lambda: not controller.chat.busy and runtime.store.flushed, timeout=10_000)
    old_path = runtime.store.path
    _type(controller, "/fresh be-to-fe")
    row = _wait_notice(qtbot, controller, "/fresh be-to-fe")
    assert row.kind == RowKind.NOTICE and str(old_path) in row.text
    new = controller.runtime
    assert new is not None and new.store.path != old_path
    header = new.store.tree.header or {}
    assert header.get("parentSession") == str(old_path)
    texts = [m for m in new.session.messages if m.get("role") == "custom"]
    assert [m["customType"] for m in texts] == ["piwork.freshSummary", "piwork.contextBundle"]
    assert "summarise it" in texts[0]["content"][0]["text"]


def test_a_long_prompt_is_offered_as_an_intake_file(
    qtbot: QtBot, controller: SessionController, server: LoopbackServer
) -> None:
    import subprocess
    from pathlib import Path

    from PySide6.QtWidgets import QMessageBox

    from piwork.core.workflows import intake_tokens

    project = Path(controller.cwd)
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    runtime = controller.runtime
    assert runtime is not None and runtime.session.model is not None
    model_id = runtime.session.model.id
    # the window loads the tokenizer files in a worker; the offer counts with the model's one
    qtbot.waitUntil(
        lambda: controller.tokenizers.counter_for(model_id).info.encoding is not None, timeout=10_000
    )
    counter = controller.tokenizers.counter_for(model_id)
    line = "requirement: the parser keeps comments\n"
    # 39,000 chars: over 8,000 tokens by chars/4, exactly 8,000 by the model's tokenizer: sent as it is
    server.script(Turn([Text("noted")]))
    controller.submit(line * 1000)
    qtbot.waitUntil(lambda: len(server.requests) == 1, timeout=10_000)
    assert controller.window.findChild(QMessageBox, "intakeOffer") is None
    qtbot.waitUntil(lambda: not controller.chat.busy, timeout=10_000)
    server.requests.clear()

    long = line * 1500  # 12,000 tokens
    tokens = intake_tokens(long, counter.count)
    assert tokens == 12_000

    def offer() -> QMessageBox:
        qtbot.waitUntil(
            lambda: controller.window.findChild(QMessageBox, "intakeOffer") is not None, timeout=5_000
        )
        box = controller.window.findChild(QMessageBox, "intakeOffer")
        assert box is not None
        return box

    controller.submit(long)
    box = offer()
    assert f"about {tokens:,} tokens" in box.text()  # the count the engine's rule made, as preflight would
    box.button(QMessageBox.StandardButton.Cancel).click()
    qtbot.waitUntil(lambda: controller.window.findChild(QMessageBox, "intakeOffer") is None, timeout=5_000)
    assert controller.chat.composer.toPlainText() == long and server.requests == []

    server.script(Turn([Text("reading it")]))
    controller.submit(long)
    box = offer()
    save = next(b for b in box.buttons() if b.text() == "Save as intake file")
    save.click()
    qtbot.waitUntil(lambda: len(server.requests) == 1, timeout=10_000)
    sent = server.requests[0].body["messages"][-1]["content"][0]["text"]
    assert sent.startswith("The full request is in .pi/intake/") and len(sent) < 300
    assert f"about {tokens:,} tokens" in sent
    saved = list((project / ".pi" / "intake").glob("*.md"))
    assert len(saved) == 1 and saved[0].read_text() == long
    assert "/.pi/intake/" in (project / ".git" / "info" / "exclude").read_text()
    qtbot.waitUntil(lambda: not controller.chat.busy, timeout=10_000)


def test_slash_task_starts_a_task_before_the_next_prompt(
    qtbot: QtBot, controller: SessionController, server: LoopbackServer
) -> None:
    _type(controller, "/task")
    row = _wait_notice(qtbot, controller, "/task")
    assert row.kind == RowKind.ERROR and "Say what the task is" in row.text
    _type(controller, "/task read-only find where notes are parsed")
    row = _wait_notice(qtbot, controller, "/task read-only")
    assert row.text.startswith("Context manifest\n") and "Tools: read, grep, find, ls" in row.text
    runtime = controller.runtime
    assert runtime is not None
    assert runtime.session.tool_names() == ["read", "grep", "find", "ls", *CONTEXT_TOOLS]
    server.script(Turn([Text("in notes.txt")]))
    controller.submit("go")
    qtbot.waitUntil(lambda: len(server.requests) == 1, timeout=10_000)
    body = server.requests[0].body
    assert [t["name"] for t in body["tools"]] == ["read", "grep", "find", "ls", *CONTEXT_TOOLS]
    first = body["messages"][0]["content"]
    first_text = first[0]["text"] if isinstance(first, list) else first
    assert "<task_contract>" in first_text and "Goal: find where notes are parsed" in first_text
    qtbot.waitUntil(lambda: not controller.chat.busy, timeout=10_000)


def test_slash_task_notice_keeps_its_lines_apart_when_rendered(
    qtbot: QtBot, controller: SessionController
) -> None:
    from PySide6.QtGui import QTextDocument

    from piwork.gui.chat.markdown import render_markdown

    _type(controller, "/task source-write fix the add function")
    row = _wait_notice(qtbot, controller, "/task source-write")
    doc = QTextDocument()
    render_markdown(doc, row.text, dark=False)
    lines = doc.toPlainText().splitlines()
    tools = next(line for line in lines if line.startswith("Tools: "))
    assert "No verify command" not in tools, lines  # its own line, not glued after the tool names
    assert any(line.startswith("No verify command") for line in lines)


def test_bare_context_command_says_what_to_add(qtbot: QtBot, controller: SessionController) -> None:
    _type(controller, "/context")
    row = _wait_notice(qtbot, controller, "/context")
    assert row.kind == RowKind.ERROR
    assert "''" not in row.text and "Which part" in row.text
    assert "preflight" in row.hint and "budget" in row.hint
    _type(controller, "/context sideways")
    qtbot.waitUntil(lambda: sum(r.title == "/context" for r in _notices(controller)) == 2, timeout=5_000)
    assert _notices(controller)[-1].text == "Unknown subcommand 'sideways'."


def test_context_commands_count_with_the_panels_estimator(
    qtbot: QtBot, controller: SessionController, server: LoopbackServer
) -> None:
    runtime = controller.runtime
    assert runtime is not None
    server.script(Turn([Text("a first reply")]))
    controller.submit("a first question")
    qtbot.waitUntil(lambda: not controller.chat.busy and runtime.store.flushed, timeout=10_000)
    messages = runtime.session.messages
    feed = controller.context_feed
    model = runtime.session.model
    estimator = feed.estimator_for(runtime.session, model.id if model else "")
    qtbot.waitUntil(lambda: all(estimator.known(m) is not None for m in messages), timeout=10_000)
    view = controller.context_commands._view()
    assert view is not None and view.estimator is estimator  # the panel's counts, not a cold count
    _type(controller, "/context budget")
    assert _wait_notice(qtbot, controller, "/context budget").kind == RowKind.NOTICE


def test_context_budget_names_no_mark_the_model_lacks(qtbot: QtBot, controller: SessionController) -> None:
    """A 32K model has no pricing step: the answer leaves that mark out instead of printing a null."""
    _type(controller, "/context budget")
    row = _wait_notice(qtbot, controller, "/context budget")
    assert "- marks: pressure 10931, ceiling 14054, compaction 15616" in row.text
    assert "None" not in row.text and "pricing" not in row.text


def test_logs_lists_the_full_output_logs_and_opens_the_newest(
    qtbot: QtBot, controller: SessionController, server: LoopbackServer
) -> None:
    _type(controller, "/logs")
    row = _wait_notice(qtbot, controller, "/logs")
    assert row.text.startswith("No full-output logs yet")
    command = "seq 1 5000"  # longer than the tool output limit: the whole output goes to a log
    server.script(Turn([ToolCall("bash", {"command": command}, id="long")]), Turn([Text("Counted.")]))
    controller.submit("count to five thousand")
    qtbot.waitUntil(lambda: controller.chat.busy, timeout=5_000)
    qtbot.waitUntil(lambda: not controller.chat.busy, timeout=20_000)
    before = len(_notices(controller))
    _type(controller, "/logs")
    qtbot.waitUntil(lambda: len(_notices(controller)) > before, timeout=10_000)
    row = _notices(controller)[-1]
    assert row.title == "/logs" and row.text.startswith("1 full-output log in ")
    assert row.text.splitlines()[1].endswith(f"bytes) — {command}")
    assert controller.window.docks["logs"].isVisible()


def test_an_image_path_in_the_prompt_is_sent_as_an_attachment(
    qtbot: QtBot, controller: SessionController, server: LoopbackServer
) -> None:
    from pathlib import Path

    (Path(controller.cwd) / "shot.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 24)
    server.script(Turn([Text("I see it.")]))
    controller.submit("what is wrong in shot.png?")
    qtbot.waitUntil(lambda: len(server.requests) == 1, timeout=10_000)
    qtbot.waitUntil(lambda: not controller.chat.busy, timeout=10_000)
    # the prompt in the session holds the image itself, its text the reference
    runtime = controller.runtime
    assert runtime is not None
    prompt = next(m for m in runtime.session.messages if m.get("role") == "user")
    assert [b["type"] for b in prompt["content"]] == ["text", "image"]
    assert prompt["content"][0]["text"] == "what is wrong in [image1] (shot.png)?"
    assert prompt["content"][1]["mimeType"] == "image/png"
    # this test model reads text only: the provider gets the request converter's placeholder for it
    sent = server.requests[0].body["messages"][-1]["content"]
    assert [b["text"] for b in sent] == [
        "what is wrong in [image1] (shot.png)?",
        "[image left out: this model cannot read images]",
    ]
