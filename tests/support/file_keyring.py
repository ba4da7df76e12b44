"""A real keyring backend that keeps its passwords in a JSON file (``$PIWORK_TEST_KEYRING_FILE``), so that a
test and the ``piwork`` processes it starts (``PYTHON_KEYRING_BACKEND=tests.support.file_keyring.FileKeyring``)
share one keyring, as programs of one desktop share the OS keyring. Every call is counted in the file too
(``calls``, and the names asked for), so a test can tell whether and about what a process asked the keyring."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import keyring.backend
import keyring.errors
from keyring.compat import properties

FILE_ENV = "PIWORK_TEST_KEYRING_FILE"
BACKEND = "tests.support.file_keyring.FileKeyring"


class FileKeyring(keyring.backend.KeyringBackend):
    @properties.classproperty
    def priority(cls) -> float:
        """Never chosen by keyring's own discovery unless a file is named (a test process imports this)."""
        if not os.environ.get(FILE_ENV):
            raise RuntimeError(f"no keyring file: {FILE_ENV} is not set")
        return 1

    def __init__(self, path: Path | None = None) -> None:
        super().__init__()
        self.path = path or Path(os.environ[FILE_ENV])

    def _read(self) -> dict[str, Any]:
        try:
            data: dict[str, Any] = json.loads(self.path.read_text())
        except FileNotFoundError:
            data = {}
        data.setdefault("passwords", {})
        data.setdefault("calls", 0)
        data.setdefault("asked", [])
        return data

    def _counted(self, asked: str | None = None) -> dict[str, Any]:
        data = self._read()
        data["calls"] += 1
        if asked is not None:
            data["asked"].append(asked)
        self.path.write_text(json.dumps(data))
        return data

    def get_password(self, service: str, username: str) -> str | None:
        value = self._counted(username)["passwords"].get(f"{service}/{username}")
        return value if isinstance(value, str) else None

    def set_password(self, service: str, username: str, password: str) -> None:
        data = self._counted()
        data["passwords"][f"{service}/{username}"] = password
        self.path.write_text(json.dumps(data))

    def delete_password(self, service: str, username: str) -> None:
        data = self._counted()
        if data["passwords"].pop(f"{service}/{username}", None) is None:
            raise keyring.errors.PasswordDeleteError("not found")
        self.path.write_text(json.dumps(data))

    def calls(self) -> int:
        return int(self._read()["calls"])

    def asked(self) -> list[str]:
        """The names asked for, in order (``__piwork_probe__``: piwork checking that the keyring works)."""
        return [str(name) for name in self._read()["asked"]]
