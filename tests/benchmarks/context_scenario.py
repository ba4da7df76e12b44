"""A long tool-heavy conversation for the context views, run for real: a window and its session controller
against the loopback provider server, a project with an AGENTS.md and source files, and a model with a
1M-token window so nothing is compacted away. Used by ``bench_context_panel.py``."""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from PySide6.QtCore import QSettings

from piwork.gui.main_window import MainWindow
from piwork.gui.notifications import NotificationCenter
from piwork.gui.session_controller import SessionController
from piwork.gui.theme import load_theme
from tests.support import LoopbackServer, Text, ToolCall, Turn, Usage

MODULES = 12


def make_home() -> tuple[Path, Path]:
    """(agent dir, project) in a fresh temporary folder; PI_CODING_AGENT_DIR points at the agent dir."""
    base = Path(tempfile.mkdtemp(prefix="piwork-context-"))
    agent = base / "home" / ".pi" / "agent"
    agent.mkdir(parents=True)
    os.environ["HOME"] = str(base / "home")
    os.environ["PI_CODING_AGENT_DIR"] = str(agent)
    os.environ["PIWORK_CONFIG_DIR"] = str(base / "config")
    project = base / "shop"
    (project / "src").mkdir(parents=True)
    (project / "tests").mkdir()
    (project / "AGENTS.md").write_text(
        "# Shop service\n\nPython 3.11. Run `pytest -q` before saying a change is done.\n"
        "Keep modules small; every public function has a docstring and type hints.\n"
    )
    for i in range(MODULES):
        body = "".join(
            f'def handler_{i}_{n}(order: dict) -> dict:\n    """Step {n} of module {i}."""\n'
            f"    return {{**order, 'step_{n}': {n} * {i + 1}}}\n\n"
            for n in range(60)
        )
        (project / "src" / f"module_{i}.py").write_text(body)
    (project / "tests" / "test_orders.py").write_text("def test_total():\n    assert 1 + 1 == 2\n")
    return agent, project


def configure(agent: Path, server: LoopbackServer, window: int = 1_000_000) -> None:
    model = {
        "id": "loopback-large",
        "name": "Loopback large",
        "contextWindow": window,
        "maxTokens": 8192,
        "cost": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75},
    }
    models = {
        "providers": {
            "loopback": {
                "baseUrl": server.url,
                "api": "anthropic-messages",
                "apiKey": "loopback-key",
                "models": [model],
            }
        }
    }
    (agent / "models.json").write_text(json.dumps(models))
    (agent / "settings.json").write_text(
        json.dumps({"defaultProvider": "loopback", "defaultModel": "loopback-large"})
    )


def tool_heavy_turns(rounds: int) -> list[Turn]:
    """Reads of every module (some twice), greps and test runs, with growing provider-reported usage."""
    turns: list[Turn] = []
    prompt = 4_000
    for r in range(rounds):
        module = r % MODULES
        if r % 5 == 4:
            call = ToolCall("bash", {"command": "pytest -q"}, id=f"call_{r}")
        elif r % 7 == 6:
            call = ToolCall("grep", {"pattern": f"handler_{module}_1", "path": "src"}, id=f"call_{r}")
        else:
            call = ToolCall("read", {"path": f"src/module_{module}.py"}, id=f"call_{r}")
        turns.append(
            Turn(
                [Text(f"Looking at module {module}."), call],
                usage=Usage(input=400, cache_read=prompt, output=40),
            )
        )
        prompt += 2_600
    turns.append(
        Turn(
            [Text("All modules read; the handlers compose in order.")],
            usage=Usage(input=500, cache_read=prompt, output=60),
        )
    )
    return turns


def open_window(agent: Path, project: Path) -> tuple[MainWindow, SessionController, NotificationCenter]:
    window = MainWindow(QSettings(str(agent / "window.ini"), QSettings.Format.IniFormat), load_theme("light"))
    notifications = NotificationCenter(window)
    controller = SessionController(window, notifications, str(project), agent, approve=True, env={})
    return window, controller, notifications


async def wait_for(predicate: Any, timeout: float = 60.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        if asyncio.get_running_loop().time() > deadline:
            raise TimeoutError("scenario step did not finish")
        await asyncio.sleep(0.02)


async def run_conversation(controller: SessionController, server: LoopbackServer, rounds: int) -> None:
    server.script(*tool_heavy_turns(rounds))
    controller.submit("Read every module of the shop service and tell me how the handlers compose.")
    await wait_for(lambda: controller.chat.busy, 10)
    await wait_for(lambda: not controller.chat.busy, 240)
