"""Work around a PySide6 reference-count bug: `SignalInstance.emit()` and `.disconnect()` return
`True`/`False` without a new reference. On Python 3.11 (where `True` is not immortal) every such
call from Python code lowers the bool's count by one, and a long-running window eventually
crashes the interpreter ("bool_dealloc: deallocating True or False").

`install()` measures the bug once with a probe signal and, only if it is present, wraps both methods
so the missing reference is added back. Idempotent; harmless on fixed PySide6 versions.
"""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Signal, SignalInstance

_installed = False


class _Probe(QObject):
    fired = Signal()


def _noop() -> None:
    pass


def bool_results_leak() -> bool:
    probe = _Probe()
    before = sys.getrefcount(True)
    probe.fired.connect(_noop)
    probe.fired.emit()
    probe.fired.disconnect(_noop)
    return sys.getrefcount(True) < before


def _with_reference(method: Callable[..., Any]) -> Callable[..., Any]:
    incref = ctypes.pythonapi.Py_IncRef
    incref.argtypes = [ctypes.py_object]
    incref.restype = None

    def call(self: SignalInstance, *args: Any) -> Any:
        result = method(self, *args)
        if result is True or result is False:
            incref(result)
        return result

    call.__name__ = method.__name__
    call.__doc__ = method.__doc__
    return call


def install() -> bool:
    """Patch `SignalInstance.emit`/`disconnect` if needed; returns whether a patch is active."""
    global _installed
    if _installed:
        return True
    if not bool_results_leak():
        return False
    SignalInstance.emit = _with_reference(SignalInstance.emit)  # type: ignore[method-assign]
    SignalInstance.disconnect = _with_reference(SignalInstance.disconnect)  # type: ignore[method-assign]
    _installed = True
    return True


install()
