"""The Qt binding must keep Python's reference counts: PySide6 6.12.0 returns ``None`` and ``True``/``False``
from C++ calls without a new reference. On Python 3.11 every such call takes one reference away, and a
window aborts ("Fatal Python error: none_dealloc") within a few thousand calls. From
Python 3.12 these objects are immortal (PEP 683): their count never changes and the defect is harmless
(6.12.0 on 3.12 survives millions of calls). So pyproject keeps ``<6.12`` only under
``python_version < '3.12'``, and this test, which catches a binding with the same defect, only means
something on 3.11."""

from __future__ import annotations

import sys

import pytest
from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QLabel
from pytestqt.qtbot import QtBot


class _Probe(QObject):
    fired = Signal()


@pytest.mark.skipif(
    sys.version_info >= (3, 12), reason="None, True and False are immortal from Python 3.12 (PEP 683)"
)
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
