"""``<agentDir>/piwork-approvals.json``: each project's approval mode and rules.

The rules live in the agent folder, keyed by the project's canonical real path as trust decisions are,
never in the project: a cloned repository cannot bring rules that allow its own commands. Writes
re-read the file under its lock, apply one change and replace it atomically. A file that does not parse
is moved aside (``piwork-approvals.json.bad``, numbered when that exists), reported once, and counts as
no rules.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

from piwork.core.approvals.rules import ProjectRules, RulesFile
from piwork.core.fs.atomic import write_atomically
from piwork.core.fs.lock import locked
from piwork.core.paths import canonical_path
from piwork.core.safe_read import APPROVAL_RULES, UnreadableFile, read_bytes

RULES_FILE_NAME = "piwork-approvals.json"


class ApprovalStore:
    """Reads and writes one rules file. Blocking: call it from a worker."""

    def __init__(self, agent_dir: str | os.PathLike[str]) -> None:
        self.path = Path(canonical_path(os.fspath(agent_dir))) / RULES_FILE_NAME
        self.warnings: list[str] = []  # what went wrong reading it (a bad file moved aside)

    def rules_for(self, project: str) -> ProjectRules:
        with locked(self.path):
            return self._read().projects.get(canonical_path(project), ProjectRules())

    def update(self, project: str, change: Callable[[ProjectRules], ProjectRules]) -> ProjectRules:
        """Apply ``change`` to the project's rules as the file holds them now, and save."""
        key = canonical_path(project)
        with locked(self.path):
            current = self._read()
            rules = change(current.projects.get(key, ProjectRules()))
            projects = {**current.projects, key: rules}
            text = json.dumps(RulesFile(projects).to_json(), indent=2, ensure_ascii=False) + "\n"
            write_atomically(self.path, text.encode("utf-8"), durable=True, private=True)
            return rules

    def _read(self) -> RulesFile:
        try:
            return RulesFile.from_json(json.loads(read_bytes(self.path, APPROVAL_RULES).decode("utf-8")))
        except FileNotFoundError:
            return RulesFile()
        except (ValueError, UnicodeDecodeError, UnreadableFile) as err:  # also a FIFO, a device, too large
            aside = _free_name(self.path.with_name(self.path.name + ".bad"))
            os.replace(self.path, aside)
            self.warnings.append(
                f"{self.path}: {err}; the approval rules count as none, the file is kept as {aside.name}"
            )
            return RulesFile()


def _free_name(path: Path) -> Path:
    number = 1
    candidate = path
    while candidate.exists():
        number += 1
        candidate = path.with_name(f"{path.name}.{number}")
    return candidate
