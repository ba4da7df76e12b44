"""The views follow the session in the real window driven by the real engine: the log viewer resets when
another session opens, the composer's placeholder follows the agent, fork/clone/name say what they did,
and the chat scrolls to the bottom on send with a "jump to latest" button when scrolled up."""

from __future__ import annotations

import json
from pathlib import Path

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from piwork.core.llm.credentials import CredentialStore
from piwork.core.llm.models import ModelRegistry
from piwork.core.paths import agent_dir
from piwork.gui.chat.chat_panel import IDLE_PLACEHOLDER, NO_MODEL_PLACEHOLDER, STREAMING_PLACEHOLDER
from piwork.gui.chat.rows import RowKind
from piwork.gui.session_controller import SessionController
from tests.gui.test_session_controller import _rows, controller, server  # noqa: F401  (fixtures)
from tests.support import LoopbackServer, Text, Turn


def _answer(qtbot: QtBot, ctl: SessionController, server: LoopbackServer, text: str, reply: str) -> None:  # noqa: F811
    server.script(Turn([Text(reply)]))
    before = len(_rows(ctl))
    ctl.submit(text)
    qtbot.waitUntil(lambda: not ctl.chat.busy and len(_rows(ctl)) >= before + 2, timeout=10_000)


def test_opening_another_session_resets_the_log_viewer(
    qtbot: QtBot,
    controller: SessionController,  # noqa: F811
    tmp_path: Path,
) -> None:
    log = tmp_path / "bash-previous.log"
    log.write_text("old output\n" * 20)
    window = controller.window
    with qtbot.waitSignal(window.log_panel.full_output.index_finished, timeout=5000):
        window.open_log(str(log))
    first = controller.runtime
    window.action_map["new_session"].trigger()
    qtbot.waitUntil(lambda: controller.runtime not in (None, first), timeout=10_000)
    assert window.log_panel.full_output.path is None
    assert str(log) not in window.log_panel.title_label.text()


def test_the_composer_placeholder_follows_the_agent(
    qtbot: QtBot,
    controller: SessionController,  # noqa: F811
    server: LoopbackServer,  # noqa: F811
) -> None:
    composer = controller.chat.composer
    assert composer.placeholderText() == IDLE_PLACEHOLDER
    words = " ".join(f"w{i}" for i in range(60))
    server.script(Turn([Text(words)], drip=0.01), Turn([Text("queued answer")]))
    controller.submit("talk for a while")
    qtbot.waitUntil(lambda: controller.chat.busy, timeout=5000)
    assert composer.placeholderText() == STREAMING_PLACEHOLDER
    assert "steer" in composer.placeholderText().lower() and "follow-up" in composer.placeholderText()
    composer.set_text("and then this")
    qtbot.keyClick(composer, Qt.Key.Key_Return, Qt.KeyboardModifier.AltModifier)  # queue a follow-up
    qtbot.waitUntil(lambda: len(server.requests) == 2 and not controller.chat.busy, timeout=10_000)
    assert composer.placeholderText() == IDLE_PLACEHOLDER
    assert "and then this" in json.dumps(server.requests[1].body)


def test_placeholder_says_read_only_and_no_model(
    qtbot: QtBot,
    controller: SessionController,  # noqa: F811
    server: LoopbackServer,  # noqa: F811
) -> None:
    from piwork.core.session.store import open_session

    _answer(qtbot, controller, server, "keep this", "kept")
    path = str(controller.runtime.store.path)  # type: ignore[union-attr]
    controller.spawn(controller.open_session(None))
    qtbot.waitUntil(lambda: controller.chat.model.rowCount() == 0, timeout=10_000)
    holder = open_session(path)  # another piwork writes this file
    try:
        controller.spawn(controller.open_session(path))
        qtbot.waitUntil(lambda: controller.runtime is not None and controller.runtime.store.read_only)
        qtbot.waitUntil(lambda: "read-only" in controller.chat.composer.placeholderText())
        reason = controller.session.read_only_reason  # type: ignore[union-attr]
        assert controller.chat.composer.placeholderText() == f"This session is read-only: {reason}"
    finally:
        holder.close()
    (agent_dir() / "models.json").unlink()  # no provider any more: nothing can answer
    controller.credentials = CredentialStore(env={})
    controller.models = ModelRegistry(agent_dir())
    controller.spawn(controller.open_session(None))
    qtbot.waitUntil(
        lambda: controller.chat.composer.placeholderText() == NO_MODEL_PLACEHOLDER, timeout=10_000
    )
    assert "Settings → Providers" in NO_MODEL_PLACEHOLDER
    # a server on this computer needs no key: the hint names it beside the key, as the empty state does
    assert "local server" in controller.chat.composer.placeholderText()


def _notices(ctl: SessionController) -> list[tuple[str, str]]:
    return [(r.title, r.text) for r in _rows(ctl) if r.kind is RowKind.NOTICE]


def test_fork_clone_and_name_say_what_they_did(
    qtbot: QtBot,
    controller: SessionController,  # noqa: F811
    server: LoopbackServer,  # noqa: F811
) -> None:
    _answer(qtbot, controller, server, "plan the parser", "a plan")
    _answer(qtbot, controller, server, "now write it in Rust", "written")
    controller.chat.composer.set_text("/name Parser work")
    controller.chat.composer.submit()
    assert _notices(controller)[-1] == ("Session named", "This session is now called “Parser work”.")

    first = controller.runtime
    assert first is not None
    tree = controller.window.tree_panel
    user_ids = [r.id for r in first.store.tree.path() if r.role == "user"]
    assert tree.select_entry(user_ids[1])
    tree.fork_current()
    qtbot.waitUntil(lambda: controller.runtime not in (None, first) and bool(_notices(controller)))
    title, text = _notices(controller)[-1]
    assert title == "Forked"
    assert "“now write it in Rust”" in text and "original session is unchanged" in text
    assert controller.chat.composer.toPlainText() == "now write it in Rust"

    forked = controller.runtime
    assert tree.select_entry(str(forked.store.tree.leaf_id))  # type: ignore[union-attr]
    tree.clone_current()
    qtbot.waitUntil(lambda: controller.runtime not in (None, forked) and bool(_notices(controller)))
    title, text = _notices(controller)[-1]
    assert title == "Cloned" and "the whole active branch" in text
    assert controller.runtime is not None and controller.runtime.store.path is not None
    assert controller.runtime.store.path.name in text


def test_placeholder_says_no_model_when_the_model_has_no_key(
    qtbot: QtBot,
    controller: SessionController,  # noqa: F811
) -> None:
    assert controller.chat.composer.placeholderText() == IDLE_PLACEHOLDER
    remote = {"baseUrl": "https://api.example.invalid/v1", "api": "openai-completions",
              "models": [{"id": "remote-model", "contextWindow": 100000, "maxTokens": 4096}]}  # fmt: skip
    (agent_dir() / "models.json").write_text(json.dumps({"providers": {"remote": remote}}))
    (agent_dir() / "settings.json").write_text(
        json.dumps({"defaultProvider": "remote", "defaultModel": "remote-model"})
    )
    controller.models = ModelRegistry(agent_dir())
    controller.credentials = CredentialStore(env={}, config_key=controller.models.config_api_key)
    controller.spawn(controller.open_session(None))
    qtbot.waitUntil(
        lambda: controller.chat.composer.placeholderText() == NO_MODEL_PLACEHOLDER, timeout=10_000
    )
