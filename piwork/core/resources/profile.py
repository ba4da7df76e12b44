"""The project profile ``.pi/piwork-profile.json``: verifier commands, required paths, memory, task mode.

It configures behaviour (the verifier gate may run its ``verify`` commands), so it is read only for
a trusted project. A broken file gives diagnostics and the fields that are valid; it never raises.

    {"version": 1, "verify": ["pytest -q"], "required": ["docs/architecture.md"],
     "memory": {"enabled": false}, "defaultTaskMode": "source-write"}
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from piwork.core import safe_read
from piwork.core.paths import PROFILE_PATH
from piwork.core.resources.diagnostics import Diagnostic
from piwork.core.resources.textfiles import strip_bom

TaskMode = Literal["read-only", "source-write"]
TASK_MODES: tuple[TaskMode, ...] = ("read-only", "source-write")
PROFILE_VERSION = 1
PROFILE_TEMPLATE: dict[str, Any] = {
    "version": PROFILE_VERSION,
    "verify": [],
    "required": [],
    "memory": {"enabled": False},
    "defaultTaskMode": "source-write",
}


def inferred_verify(root: str) -> list[str]:
    """The project's test command as its files name it: a Makefile ``test`` target, package.json's
    ``test`` script, pytest (pyproject/setup.cfg/pytest.ini/tox.ini or a tests folder), Cargo, go.mod.
    Empty when none is recognised. Reads only small configuration files."""

    def text(name: str, limit: int = 256 * 1024) -> str:
        try:  # a FIFO or a device named Makefile is not waited on or read
            return safe_read.read_start(os.path.join(root, name), safe_read.PROJECT_FILE, limit)[0].decode(
                "utf-8", "replace"
            )
        except OSError:
            return ""

    found: list[str] = []
    makefile = text("Makefile") or text("makefile") or text("GNUmakefile")
    if re.search(r"^test\s*:", makefile, re.MULTILINE):
        found.append("make test")
    package = text("package.json")
    if package:
        try:
            scripts = json.loads(package).get("scripts")
        except (ValueError, AttributeError):
            scripts = None
        test = scripts.get("test") if isinstance(scripts, dict) else None
        if isinstance(test, str) and "no test specified" not in test:
            runner = (
                "pnpm"
                if os.path.exists(os.path.join(root, "pnpm-lock.yaml"))
                else ("yarn" if os.path.exists(os.path.join(root, "yarn.lock")) else "npm")
            )
            found.append(f"{runner} test")
    pyproject = text("pyproject.toml")
    if (
        "[tool.pytest" in pyproject
        or "pytest" in pyproject
        or "[tool:pytest]" in text("setup.cfg")
        or os.path.exists(os.path.join(root, "pytest.ini"))
        or "[pytest]" in text("tox.ini")
        or (
            os.path.isdir(os.path.join(root, "tests"))
            and (pyproject or os.path.exists(os.path.join(root, "setup.py")))
        )
    ):
        found.append("pytest -q")
    if os.path.exists(os.path.join(root, "Cargo.toml")):
        found.append("cargo test")
    if os.path.exists(os.path.join(root, "go.mod")):
        found.append("go test ./...")
    return found


@dataclass(frozen=True)
class Profile:
    path: str
    verify: tuple[str, ...] = ()
    required: tuple[str, ...] = ()
    memory_enabled: bool = False
    default_task_mode: TaskMode = "source-write"

    def to_json(self) -> dict[str, Any]:
        return {
            "version": PROFILE_VERSION,
            "verify": list(self.verify),
            "required": list(self.required),
            "memory": {"enabled": self.memory_enabled},
            "defaultTaskMode": self.default_task_mode,
        }


@dataclass(frozen=True)
class ProfileResult:
    """``profile`` is None when the file is absent, unreadable, not JSON or of another version."""

    path: str
    exists: bool
    profile: Profile | None = None
    diagnostics: tuple[Diagnostic, ...] = field(default=())
    text: str | None = None  # the file as read (for the bundle); None when not read


def profile_path(cwd: str) -> str:
    return os.path.join(os.path.abspath(cwd), PROFILE_PATH)


def load_profile(cwd: str) -> ProfileResult:
    """Read and validate the profile of ``cwd``. Call only for a trusted project."""
    path = profile_path(cwd)
    if not os.path.lexists(path):
        return ProfileResult(path, False)
    try:
        raw = safe_read.read_bytes(path, safe_read.PROJECT_DATA)
    except OSError as err:
        return ProfileResult(
            path, True, diagnostics=(_error(path, f"cannot read the profile: {err.strerror}"),)
        )
    text = strip_bom(raw.decode("utf-8", errors="replace"))
    try:
        data = json.loads(text)
    except ValueError as err:
        return ProfileResult(
            path, True, diagnostics=(_error(path, f"the profile is not valid JSON: {err}"),), text=text
        )
    return parse_profile(data, path, text)


def parse_profile(data: Any, path: str, text: str | None = None) -> ProfileResult:
    """Validate parsed JSON; each bad field is reported and replaced by its default."""
    if not isinstance(data, dict):
        return ProfileResult(
            path, True, diagnostics=(_error(path, "the profile must be a JSON object"),), text=text
        )
    problems: list[Diagnostic] = []
    version = data.get("version")
    if version != PROFILE_VERSION:
        message = (
            f"unsupported profile version {json.dumps(version)} (piwork reads version {PROFILE_VERSION})"
        )
        return ProfileResult(path, True, diagnostics=(_error(path, message),), text=text)
    verify = _strings(data, "verify", path, problems)
    required = _strings(data, "required", path, problems)
    memory_enabled = False
    memory = data.get("memory")
    if memory is not None:
        enabled = memory.get("enabled") if isinstance(memory, dict) else None
        if isinstance(enabled, bool):
            memory_enabled = enabled
        elif not (isinstance(memory, dict) and enabled is None):
            problems.append(
                _warning(path, 'memory must be an object like {"enabled": true}; memory stays off')
            )
    mode: TaskMode = "source-write"
    raw_mode = data.get("defaultTaskMode")
    if raw_mode is not None:
        if raw_mode in TASK_MODES:
            mode = raw_mode
        else:
            problems.append(
                _warning(
                    path, f'defaultTaskMode must be "read-only" or "source-write", not {json.dumps(raw_mode)}'
                )
            )
    profile = Profile(path, verify, required, memory_enabled, mode)
    return ProfileResult(path, True, profile, tuple(problems), text)


def _strings(data: dict[str, Any], key: str, path: str, problems: list[Diagnostic]) -> tuple[str, ...]:
    value = data.get(key)
    if value is None:
        return ()
    if not isinstance(value, list):
        problems.append(_warning(path, f"{key} must be a list of strings; ignored"))
        return ()
    kept = tuple(v.strip() for v in value if isinstance(v, str) and v.strip())
    if len(kept) != len(value):
        problems.append(_warning(path, f"{key}: entries that are not non-empty strings are ignored"))
    return kept


def _error(path: str, message: str) -> Diagnostic:
    return Diagnostic("error", message, path, "profile")


def _warning(path: str, message: str) -> Diagnostic:
    return Diagnostic("warning", message, path, "profile")
