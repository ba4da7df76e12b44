"""The tokenizer (tens of megabytes) is loaded once something on screen shows token counts: the meter once
there is a model, the Context panel, the Resources panel. A window on a project without a model does not
load it at start; showing the Context panel counts with it (the figures the panel shows are never chars/4
when a tokenizer file is there)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

SCRIPT = textwrap.dedent(
    """
    import json, sys
    from PySide6.QtCore import QTimer
    import piwork.core.llm.tokens as tokens
    import piwork.gui.app as app_module
    from piwork.gui.session_controller import SessionController

    report = {}

    def watch(window):
        def controller():  # the first tab's, made once the window has shown its first frame
            return window.findChild(SessionController)

        def encodings_built():
            return controller().tokenizers.available + sorted(name for name, _digest in tokens._BUILT)
        steps = iter(["started", "context_shown", "resources_shown"])
        state = {"step": next(steps), "seen": 0}

        def poll():
            step = state["step"]
            state["polls"] = state.get("polls", 0) + 1
            if state["polls"] > 1000:  # 20 s: report what happened, as far as it went
                print(json.dumps(report), flush=True)
                timer.stop()
                window.close()
                return
            if step == "started":
                made = controller()
                if made is None or made.runtime is None or made.context_feed.refresh_count < 1 or made.tasks:
                    return
                feed = state["feed"] = made.context_feed
                report["at_start"] = encodings_built()
                report["footer"] = window.chat.footer.context_label.text()
                state["seen"] = feed.refresh_count
                window.show_context_panel(0)
                state["step"] = next(steps)
            elif step == "context_shown":
                feed = state["feed"]
                if feed.refresh_count <= state["seen"]:
                    return
                report["context_shown"] = encodings_built()
                report["xray_total"] = window.context_panel.xray_model.total
                report["xray_tokenizer"] = feed.reading.tokenizer
                window.docks["context"].hide()
                dock = window.docks["resources"]
                dock.show()
                dock.raise_()
                state["step"] = next(steps)
            elif step == "resources_shown":
                summary = window.resource_panel.prompt_view.summary.text()
                if "cl100k" not in summary:  # a recount with the tokenizer follows a chars/4 one
                    return
                report["prompt_summary"] = summary
                print(json.dumps(report), flush=True)
                timer.stop()
                window.close()  # as a person closes it

        timer = QTimer(window)
        timer.timeout.connect(poll)
        timer.start(20)

    build = app_module.build_window

    def build_and_watch(app, options):
        made = build(app, options)
        window = made[0]
        QTimer.singleShot(0, lambda: watch(window))
        return made

    app_module.build_window = build_and_watch
    app_module.run(app_module.WindowOptions(cwd=sys.argv[1]))
    """
)


def test_a_window_without_a_model_loads_the_tokenizer_only_when_a_panel_shows_counts(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(QT_QPA_PLATFORM="offscreen", HOME=str(tmp_path), PI_CODING_AGENT_DIR=str(tmp_path / "agent"),
               PIWORK_CONFIG_DIR=str(tmp_path / "config"), PI_OFFLINE="1",
               PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring")  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(project)], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["at_start"] == []  # a fresh window on a project without a model: no encoding built
    assert report["footer"] == "context: —"  # the meter shows no count without a model
    assert report.get("context_shown") == ["cl100k_base"]  # the Context panel shows counts: loaded for it
    assert "cl100k_base" in report["xray_tokenizer"] and report["xray_total"] > 0
    assert "tokens (≈ cl100k_base)" in report.get(
        "prompt_summary", ""
    )  # the Resources panel's system prompt too
