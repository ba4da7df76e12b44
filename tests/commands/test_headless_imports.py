"""What a ``piwork -p`` process imports: only what its run uses (each heavy library costs start-up time).

Checked in real subprocesses, since a test process has imported half the world already.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.support.loopback_server import LoopbackServer, Text, Turn

# Libraries a plain answer never needs: images, YAML frontmatter, ignore-file matching, and httpx's own
# command-line client (click, rich, pygments: imported by ``import httpx`` wherever they are installed).
NOT_FOR_A_PLAIN_ANSWER = ("PIL", "ruamel", "pathspec", "click", "rich", "pygments")
# Engine parts a run loads only when it uses them: export and import of session files, onboarding and
# building the context index (``/onboard``, ``/context rebuild``), the checkpoints store.
NOT_UNTIL_USED = (
    "piwork.core.export",
    "piwork.core.workflows.onboard",
    "piwork.core.context.index_builder",
    "piwork.core.checkpoints.git_store",  # opened at the first file-changing tool call
    "piwork.core.checkpoints.shadow",
)
# What a run that neither compacts, nor works on a task, nor asks about trust never loads: the compaction
# engine, the task's context machinery (X-ray, index, bundle, manifest refresh, the /context reports), the
# reading a trust question shows, the session browser, the recovery of a failed reply; and nothing of the GUI.
# (The tokenizer is loaded: the governor counts every request with it.)
NOT_FOR_A_PLAIN_RUN = (
    "piwork.core.compaction.compact",
    "piwork.core.compaction.navigate",
    "piwork.core.compaction.summarize",
    "piwork.core.compaction.hooks",
    "piwork.core.context.xray",
    "piwork.core.context.index",
    "piwork.core.context.manifest_refresh",
    "piwork.core.context.durable",
    "piwork.core.context.bundle",
    "piwork.core.workflows.commands",
    "piwork.core.workflows.view",
    "piwork.core.resources.trust_reading",
    "piwork.core.session.listing",
    "piwork.core.agent.recovery_omission",
    "piwork.gui",
    "PySide6",
    "qasync",
)
# With the key given on the command line the keyring is never asked: neither keyring nor what its backends load.
NOT_WITH_A_KEY_GIVEN = ("keyring", "cryptography", "secretstorage", "jeepney")

_REPORT_MODULES = """
import atexit, json, runpy, sys
report, sys.argv = sys.argv[1], ["piwork", *sys.argv[2:]]
def write():
    with open(report, "w") as out:
        json.dump(sorted(sys.modules), out)
atexit.register(write)
runpy.run_module("piwork", run_name="__main__", alter_sys=True)
"""


def _loaded(modules: list[str], names: tuple[str, ...]) -> list[str]:
    return [m for m in modules if any(m == n or m.startswith(n + ".") for n in names)]


def _env(tmp_path: Path) -> dict[str, str]:
    home, agent = tmp_path / "home", tmp_path / "agent"
    home.mkdir()
    agent.mkdir()
    return {
        **{k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")},
        "HOME": str(home),
        "PI_CODING_AGENT_DIR": str(agent),
        "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring",
    }


def test_importing_the_headless_command_loads_no_tokenizer_keyring_or_image_library(tmp_path: Path) -> None:
    code = (
        "import json, sys\n"
        "import piwork.commands.headless\n"
        "import piwork.core.workflows.runtime\n"  # what create_runtime needs, imported by the run's first step
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], env=_env(tmp_path), capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    modules = json.loads(done.stdout)
    assert "piwork.core.workflows.runtime" in modules
    heavy = ("tiktoken", "keyring", "PIL", "ruamel", "pathspec", *NOT_UNTIL_USED)
    assert _loaded(modules, heavy) == []


def test_a_plain_answer_loads_no_image_yaml_ignore_httpx_cli_or_keyring_library(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "notes.txt").write_text("nothing to see\n")
    report = tmp_path / "modules.json"
    with LoopbackServer() as server:
        server.script(Turn([Text("Fine, thanks.")]))
        command = [sys.executable, "-c", _REPORT_MODULES, str(report), "-p", "How are you?", "--no-session"]
        command += ["--provider", "loopback", "--model", server.model, "--base-url", server.openai_url]
        done = subprocess.run(
            [*command, "--api-key", "sk-loopback"],
            cwd=project,
            env=_env(tmp_path),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Fine, thanks."
    modules = json.loads(report.read_text())
    assert "piwork.core.workflows.runtime" in modules  # the report is of the run itself
    assert (
        _loaded(modules, NOT_FOR_A_PLAIN_ANSWER + NOT_UNTIL_USED + NOT_WITH_A_KEY_GIVEN + NOT_FOR_A_PLAIN_RUN)
        == []
    )
