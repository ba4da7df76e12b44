"""Values in ``models.json`` (``apiKey``, header values): ``$VAR`` templates and ``!command`` values.

``$VAR`` / ``${VAR}`` read the environment (a missing or empty variable leaves the whole value
unresolved), ``$$`` is a literal ``$`` and ``$!`` a literal ``!``. A value starting with ``!`` is a shell
command whose trimmed standard output is the value (10 s limit; results cached per resolver, never
logged).
"""

from __future__ import annotations

import os
import re
import subprocess
import threading
from collections.abc import Callable, Mapping

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
COMMAND_TIMEOUT_S = 10.0

CommandRunner = Callable[[str], str | None]


def run_shell_command(command: str) -> str | None:
    """Run ``command`` in the user's shell; trimmed stdout, or None on failure/timeout/empty output."""
    shell = os.environ.get("SHELL") or "/bin/sh"
    try:
        completed = subprocess.run(
            [shell, "-c", command],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            timeout=COMMAND_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if completed.returncode != 0:
        return None
    value = completed.stdout.decode("utf-8", errors="replace").strip()
    return value or None


def _parse(value: str) -> list[tuple[str, str]]:
    parts: list[tuple[str, str]] = []
    literal: list[str] = []
    i = 0
    while i < len(value):
        dollar = value.find("$", i)
        if dollar < 0:
            literal.append(value[i:])
            break
        literal.append(value[i:dollar])
        nxt = value[dollar + 1 : dollar + 2]
        if nxt in ("$", "!"):
            literal.append(nxt)
            i = dollar + 2
            continue
        if nxt == "{":
            end = value.find("}", dollar + 2)
            if end < 0:
                literal.append("$")
                i = dollar + 1
                continue
            name = value[dollar + 2 : end]
            if _NAME.fullmatch(name):
                parts.append(("literal", "".join(literal)))
                literal = []
                parts.append(("env", name))
            else:
                literal.append(value[dollar : end + 1])
            i = end + 1
            continue
        match = _NAME.match(value, dollar + 1)
        if match:
            parts.append(("literal", "".join(literal)))
            literal = []
            parts.append(("env", match.group()))
            i = match.end()
            continue
        literal.append("$")
        i = dollar + 1
    parts.append(("literal", "".join(literal)))
    return [p for p in parts if p[0] == "env" or p[1]]


class ValueResolver:
    """Resolves config values against an environment; command results are cached for its lifetime."""

    def __init__(
        self, env: Mapping[str, str] | None = None, run_command: CommandRunner = run_shell_command
    ) -> None:
        self._env = env if env is not None else os.environ
        self._run = run_command
        self._cache: dict[str, str | None] = {}
        self._running = threading.Lock()  # one command at a time, so a value's command runs only once

    def runs_command(self, value: str) -> bool:
        """Resolving ``value`` would run a command not run yet (it may take seconds: resolve it in a worker)."""
        return value.startswith("!") and value not in self._cache

    def resolve(self, value: str) -> str | None:
        """``value`` resolved; a ``!command`` not run yet blocks while it runs (a worker thread's call)."""
        if value.startswith("!"):
            with self._running:
                if value not in self._cache:
                    self._cache[value] = self._run(value[1:])
                return self._cache[value]
        out: list[str] = []
        for kind, text in _parse(value):
            if kind == "literal":
                out.append(text)
                continue
            found = self._env.get(text)
            if not found:
                return None
            out.append(found)
        return "".join(out)
