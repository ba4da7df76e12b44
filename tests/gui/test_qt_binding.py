"""The Qt binding must keep Python's reference counts: PySide6 6.12.0 on Python 3.11 returns ``None`` and
``True``/``False`` from C++ calls without a new reference, which crashes a long-running window
("none_dealloc"). pyproject excludes it; this test catches a binding with the same defect."""

from __future__ import annotations

import sys

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QLabel
from pytestqt.qtbot import QtBot


class _Probe(QObject):
    fired = Signal()


def test_void_calls_and_signal_emits_keep_reference_counts(qtbot: QtBot) -> None:
    label = QLabel()
    qtbot.addWidget(label)
    probe = _Probe()
    probe.fired.connect(lambda: None)
    none_before, true_before = sys.getrefcount(None), sys.getrefcount(True)
    for _ in range(500):
        label.setText("x")
        probe.fired.emit()
    assert sys.getrefcount(None) - none_before >= -5
    assert sys.getrefcount(True) - true_before >= -5
