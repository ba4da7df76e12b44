"""``piwork`` (the window command) as a real subprocess: no-display message, version, help, smoke start."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from piwork import __version__
from piwork.commands.window import EXIT_NO_DISPLAY
from piwork.gui.compat import display_problem


def _run(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "piwork", *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=60
    )


def _bare_env(tmp_path: Path) -> dict[str, str]:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path), "LANG": "C.UTF-8"}
    if "PYTHONPATH" in os.environ:  # the checkout under test, not another installed copy
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return env


def test_without_a_display_it_explains_and_exits_cleanly(tmp_path: Path) -> None:
    result = _run([], _bare_env(tmp_path), tmp_path)
    assert result.returncode == EXIT_NO_DISPLAY
    assert "cannot open the window" in result.stderr
    assert "DISPLAY" in result.stderr and "piwork -p" in result.stderr
    assert "Aborted" not in result.stderr and "qt.qpa" not in result.stderr


def test_version_and_help_need_no_display(tmp_path: Path) -> None:
    version = _run(["--version"], _bare_env(tmp_path), tmp_path)
    assert version.returncode == 0 and version.stdout.strip() == f"piwork {__version__}"
    helptext = _run(["--help"], _bare_env(tmp_path), tmp_path)
    assert helptext.returncode == 0
    for flag in ("--cwd", "--session", "--approve", "--no-approve"):
        assert flag in helptext.stdout


def test_bad_arguments_are_reported(tmp_path: Path) -> None:
    env = _bare_env(tmp_path)
    missing = _run(["--cwd", str(tmp_path / "nope")], env, tmp_path)
    assert missing.returncode == 2 and "not a folder" in missing.stderr
    both = _run(["--approve", "--no-approve"], env, tmp_path)
    assert both.returncode == 2 and "not allowed with" in both.stderr


def test_window_starts_offscreen_and_remembers_its_layout(tmp_path: Path) -> None:
    env = {**_bare_env(tmp_path), "QT_QPA_PLATFORM": "offscreen", "PIWORK_CONFIG_DIR": str(tmp_path / "cfg")}
    env["PI_CODING_AGENT_DIR"] = str(tmp_path / "agent")
    result = _run(["--smoke-test", "--cwd", str(tmp_path)], env, tmp_path)
    assert result.returncode == 0, result.stderr
    assert "window ok (offscreen)" in result.stdout
    assert "geometry=" in (tmp_path / "cfg" / "window.ini").read_text()


def test_display_detection_rules() -> None:
    assert display_problem({}, "linux") is not None
    assert display_problem({"DISPLAY": ":0"}, "linux") is None
    assert display_problem({"WAYLAND_DISPLAY": "wayland-0"}, "linux") is None
    assert display_problem({"QT_QPA_PLATFORM": "offscreen"}, "linux") is None
    assert display_problem({"QT_QPA_PLATFORM": "minimal"}, "linux") is None
    assert display_problem({"QT_QPA_PLATFORM": "xcb", "WAYLAND_DISPLAY": "w"}, "linux") is not None
    assert display_problem({"QT_QPA_PLATFORM": "wayland", "DISPLAY": ":0"}, "linux") is not None
    assert display_problem({}, "win32") is None
    assert display_problem({}, "darwin") is None


def _smoke_env(tmp_path: Path) -> dict[str, str]:
    env = {**_bare_env(tmp_path), "QT_QPA_PLATFORM": "offscreen", "PIWORK_CONFIG_DIR": str(tmp_path / "cfg")}
    env["PI_CODING_AGENT_DIR"] = str(tmp_path / "agent")
    return env


def test_a_folder_or_a_session_file_given_as_the_argument_is_opened(tmp_path: Path) -> None:
    """What a desktop entry's ``Exec=piwork %F`` passes: a folder opens as the project; a session file
    opens in the folder it was run in."""
    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    project.mkdir()
    elsewhere.mkdir()
    env = _smoke_env(tmp_path)
    folder = _run(["--smoke-test", str(project)], env, elsewhere)
    assert folder.returncode == 0, folder.stderr
    assert f"window ok (offscreen) in {project}" in folder.stdout
    session = tmp_path / "kept" / "s.jsonl"
    session.parent.mkdir()
    header = '{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"%s"}\n'
    session.write_text(header % project)
    opened = _run(["--smoke-test", str(session)], env, elsewhere)
    assert opened.returncode == 0, opened.stderr
    assert f"in {project}" in opened.stdout


def test_a_missing_argument_or_a_doubled_one_is_reported(tmp_path: Path) -> None:
    env = _bare_env(tmp_path)
    missing = _run([str(tmp_path / "gone")], env, tmp_path)
    assert missing.returncode == 2 and "no such folder or file" in missing.stderr
    doubled = _run(["--cwd", str(tmp_path), str(tmp_path)], env, tmp_path)
    assert doubled.returncode == 2 and "not both" in doubled.stderr
