"""A manifest row's path comes from the session file: "Open" hands the desktop only a plain file inside the
project, checked in a worker; a URL, a path outside, a FIFO, a device or a program is refused, saying why."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QObject, QUrl, Slot
from PySide6.QtGui import QDesktopServices
from pytestqt.qtbot import QtBot

from piwork.core.context import ManifestEntry
from piwork.gui.session_controller import SessionController


class Opener(QObject):
    def __init__(self) -> None:
        super().__init__()
        self.urls: list[QUrl] = []

    @Slot(QUrl)
    def open(self, url: QUrl) -> None:
        self.urls.append(url)


@pytest.fixture
def opener() -> Iterator[Opener]:
    catcher = Opener()
    for scheme in ("file", "http", "https"):
        QDesktopServices.setUrlHandler(scheme, catcher, "open")
    yield catcher
    for scheme in ("file", "http", "https"):
        QDesktopServices.unsetUrlHandler(scheme)


def _open(qtbot: QtBot, controller: SessionController, path: str) -> tuple[str, object]:
    navigator = controller.context_navigator
    outcome: list[tuple[str, object]] = []
    navigator.landed.connect(lambda where, what: outcome.append((where, what)))
    navigator.missed.connect(lambda why: outcome.append(("missed", why)))
    controller.preflight.on_manifest_action("open", ManifestEntry(2, "profile", path, "loaded"))
    qtbot.waitUntil(lambda: bool(outcome), timeout=5000)
    return outcome[0]


def test_a_plain_file_inside_the_project_opens(
    qtbot: QtBot, controller: SessionController, opener: Opener
) -> None:
    project = Path(controller.cwd)
    (project / "notes.md").write_text("notes")
    assert _open(qtbot, controller, "notes.md") == ("file", os.path.realpath(project / "notes.md"))
    assert [url.toLocalFile() for url in opener.urls] == [os.path.realpath(project / "notes.md")]


def test_what_the_session_names_outside_the_project_or_not_a_file_is_refused(
    qtbot: QtBot, controller: SessionController, opener: Opener, tmp_path: Path
) -> None:
    project = Path(controller.cwd)
    outside = tmp_path / "outside.txt"
    outside.write_text("secret")
    os.symlink(outside, project / "link-out.txt")
    os.mkfifo(project / "fifo")
    os.symlink("/dev/zero", project / "zero")
    script = project / "run.sh"
    script.write_text("#!/bin/sh\necho ran\n")
    script.chmod(0o755)
    (project / "launcher.desktop").write_text("[Desktop Entry]\nExec=sh -c 'echo ran'\n")
    refused = {
        "https://example.com/x": "not a file path",
        "file:///etc/passwd": "not a file path",
        str(outside): "outside the project",
        "../outside.txt": "outside the project",
        "link-out.txt": "outside the project",
        "fifo": "not a regular file",
        "zero": "outside the project",  # a link to /dev/zero
        "run.sh": "a program",
        "launcher.desktop": "a program",
        "missing.txt": "no file to open",
    }
    for path, why in refused.items():
        where, what = _open(qtbot, controller, path)
        assert where == "missed" and why in str(what), (path, what)
    assert opener.urls == []
