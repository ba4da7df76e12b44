"""A real keyring backend that behaves like a desktop keyring waiting for its user: every call waits until
the test opens it (an unlock prompt, a slow D-Bus daemon), and it records which thread asked, so a test
can show that the window never asked from its GUI thread.

The GUI stall guard measures GUI-thread CPU time, which a thread waiting on this backend does not use; the
recorded threads are what proves that the waiting happened elsewhere."""

from __future__ import annotations

import threading

import keyring.backend
import keyring.errors

WAIT_LIMIT_S = 30.0  # a test that never opens the keyring fails instead of hanging


class BlockingKeyring(keyring.backend.KeyringBackend):
    """Passwords in a dict behind a gate. ``open()`` lets every waiting and later call through;
    ``fail_with`` makes calls raise that error once through the gate."""

    priority = 1  # type: ignore[assignment]

    def __init__(self, passwords: dict[str, str] | None = None, service: str = "piwork") -> None:
        super().__init__()
        self.passwords: dict[tuple[str, str], str] = {
            (service, user): value for user, value in (passwords or {}).items()
        }
        self.gate = threading.Event()
        self.asked = threading.Event()  # set by every call as it starts waiting
        self.fail_with: Exception | None = None
        self.callers: list[tuple[str, int]] = []  # (call, thread ident), in order
        self.gui_thread = threading.get_ident()  # made on the test's (the GUI) thread
        self._callers_lock = threading.Lock()

    def open(self) -> None:
        self.gate.set()

    def close(self) -> None:
        self.gate.clear()

    @property
    def waiting(self) -> int:
        """Calls made so far (each waits at the gate until it opens)."""
        with self._callers_lock:
            return len(self.callers)

    @property
    def calls_on_gui_thread(self) -> list[str]:
        with self._callers_lock:
            return [call for call, thread in self.callers if thread == self.gui_thread]

    def _wait(self, call: str) -> None:
        with self._callers_lock:
            self.callers.append((call, threading.get_ident()))
        self.asked.set()
        if not self.gate.wait(WAIT_LIMIT_S):
            raise keyring.errors.KeyringError("the test never opened the keyring")
        if self.fail_with is not None:
            raise self.fail_with

    def get_password(self, service: str, username: str) -> str | None:
        self._wait(f"get {username}")
        return self.passwords.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self._wait(f"set {username}")
        self.passwords[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        self._wait(f"delete {username}")
        if (service, username) not in self.passwords:
            raise keyring.errors.PasswordDeleteError("not found")
        del self.passwords[(service, username)]
