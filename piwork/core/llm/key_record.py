"""The providers the keyring is known to hold no piwork key for: a record that spares a run asking it.

A stored key comes before the environment's and models.json's, so every run would have to ask the OS
keyring first, and finding its backend costs a headless run a good part of its start-up (keyring probes
every installed backend; a desktop keyring then answers over D-Bus) although most keys come from the
environment or models.json. ``<agentDir>/piwork/keyring-record.json`` lists the providers piwork found
the keyring (service ``piwork``) to hold no key for, under a fingerprint of what decides which keyring is
asked: keyring's backend variable and its config and data folders, the D-Bus session bus, the user, the
installed packages. It holds provider names only, never a key, and is kept current wherever piwork
learns something:

- every answer of the keyring is noted: a key found takes its provider off the record at once; none
  found (or no keyring at all) puts it on, unless the record changed while the keyring was asked (another
  piwork storing a key meanwhile), in which case nothing is noted;
- storing a key takes its provider off before the keyring is written (when the record cannot be written,
  it is removed); removing a key puts it on afterwards;
- a record of another fingerprint, of another version, unreadable or missing spares nothing.

A key put into the keyring under the service ``piwork`` by another program is found the next time the
keyring is asked about that provider: by a run whose provider has no key in the environment or
models.json (the record spares asking only when one of those has a key), and by the window, which asks
about every provider when it opens.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path

from piwork.core import safe_read
from piwork.core.fs.atomic import write_atomically
from piwork.core.fs.lock import LockBusyError, locked

RECORD_VERSION = 1
RECORD_NAME = "keyring-record.json"
Stamp = tuple[int, int, int] | None  # (inode, mtime in ns, size) of the record file; None: no file


def record_path(agent_dir: Path) -> Path:
    return Path(agent_dir) / "piwork" / RECORD_NAME


def keyring_setup(env: Mapping[str, str] | None = None) -> str:
    """A digest of what decides which keyring a lookup reaches (from the process environment, which is
    what keyring reads): its ``PYTHON_KEYRING_BACKEND``, its config and data folders (a
    ``keyringrc.cfg`` names a backend; a file backend keeps its keys there), the session bus a desktop
    keyring answers on, the user, and the installed packages (a new backend changes the choice)."""
    environ = os.environ if env is None else env
    home = environ.get("HOME") or os.path.expanduser("~")
    roots = [
        os.path.join(environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config"), "python_keyring"),
        os.path.join(environ.get("XDG_DATA_HOME") or os.path.join(home, ".local", "share"), "python_keyring"),
    ]
    if sys.platform == "win32":
        base = environ.get("LOCALAPPDATA", environ.get("ProgramData", "."))
        roots.append(os.path.join(base, "Python Keyring"))
    watched = [*roots, *(os.path.join(root, "keyringrc.cfg") for root in roots)]
    for root in roots:  # a file backend's own files (rewritten in place when a key is stored)
        with contextlib.suppress(OSError):
            watched += sorted(os.path.join(root, name) for name in os.listdir(root))
    watched += [p for p in sys.path if os.path.basename(p) in ("site-packages", "dist-packages")]
    facts: list[object] = [
        RECORD_VERSION,
        sys.platform,
        getattr(os, "getuid", lambda: -1)(),
        home,
        environ.get("PYTHON_KEYRING_BACKEND", ""),
        environ.get("DBUS_SESSION_BUS_ADDRESS", ""),
        environ.get("XDG_RUNTIME_DIR", ""),
    ]
    for path in watched:
        try:
            info = os.stat(path)
        except OSError:
            facts.append([path, None])
        else:
            facts.append([path, info.st_ino, info.st_mtime_ns, info.st_size])
    return hashlib.sha256(json.dumps(facts).encode("utf-8", "surrogatepass")).hexdigest()


class KeyRecord:
    """The record of one agent folder. Blocking file work: call it where the keyring is asked (a worker)."""

    def __init__(self, path: Path, setup: str | None = None) -> None:
        self.path = Path(path)
        self._setup = setup

    @classmethod
    def of(cls, agent_dir: Path) -> KeyRecord:
        """The record of the agent folder ``agent_dir``."""
        return cls(record_path(agent_dir))

    @property
    def setup(self) -> str:
        if self._setup is None:
            self._setup = keyring_setup()
        return self._setup

    def stamp(self) -> Stamp:
        try:
            info = os.stat(self.path)
        except OSError:
            return None
        return (info.st_ino, info.st_mtime_ns, info.st_size)

    def current(self) -> bool:
        """The record is there, readable and of this setup."""
        return self._contents()[0] == self.setup

    def _contents(self) -> tuple[str | None, set[str]]:
        """(the setup the record is of, the providers on it); (None, empty) when there is none to read."""
        try:
            data = json.loads(safe_read.read_text(self.path, safe_read.CACHE, errors="strict"))
        except (OSError, ValueError):
            return None, set()
        if not isinstance(data, dict) or data.get("version") != RECORD_VERSION:
            return None, set()
        setup, names = data.get("setup"), data.get("lacking")
        if not isinstance(setup, str) or not isinstance(names, list):
            return None, set()
        return setup, {n for n in names if isinstance(n, str)}

    def lacks(self, provider: str) -> bool:
        """Whether the keyring is known to hold no piwork key for ``provider`` (a record of this setup says so)."""
        setup, lacking = self._contents()
        return setup == self.setup and provider in lacking

    def note_found(self, provider: str) -> None:
        """The keyring holds (or is about to hold) ``provider``'s key: off the record, whatever setup it is of
        (two setups may reach one keyring). When the record cannot be changed it is removed, so that it
        never spares asking about a key that is there."""
        if provider not in self._contents()[1]:
            return  # nothing to take off
        try:
            with locked(self.path):
                setup, lacking = self._contents()
                if setup is not None and provider in lacking:
                    self._write(setup, lacking - {provider})
        except (OSError, LockBusyError):
            with contextlib.suppress(OSError):
                os.unlink(self.path)

    def note_missing(self, provider: str, since: Stamp) -> None:
        """The keyring held no key for ``provider`` when asked (the record's ``stamp()`` was ``since``
        just before): on the record, unless it changed meanwhile. A record of another setup is replaced."""
        with contextlib.suppress(OSError, LockBusyError), locked(self.path):
            if self.stamp() != since:
                return  # someone wrote it while the keyring was asked: their news may be newer
            setup, lacking = self._contents()
            if setup != self.setup:
                self._write(self.setup, {provider})
            elif provider not in lacking:
                self._write(setup, {*lacking, provider})

    def _write(self, setup: str, lacking: set[str]) -> None:
        data = {"version": RECORD_VERSION, "setup": setup, "lacking": sorted(lacking)}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(self.path, json.dumps(data, indent=1) + "\n", durable=False)
