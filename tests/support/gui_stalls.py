"""Measuring how long the GUI thread runs without getting back to its event loop (the GUI-thread stall guard).

The meter marks boundaries on the GUI thread: the start of each event it dispatches (an application event
filter, which Qt calls only for objects of the main thread), and the event dispatcher's ``aboutToBlock``
(the loop is about to wait) and ``awake`` (the loop is done with one pass) signals. Between two boundaries
the thread runs one piece of code: a slot, a paint, a model reset, or an asyncio callback run by qasync (each
is a Qt timer event). A piece that uses more than 50 ms of **GUI-thread CPU time** (``time.thread_time``)
is a stall.

Why CPU time and not the wall clock: tests share a small machine with other busy processes, and a process
that waits for a core would show long wall-clock gaps without doing anything wrong. Thread CPU time only
grows while this thread runs, so a starved process is not blamed, and a loop waiting idle costs nothing.
What it cannot see is a slot blocked in a system call without using the CPU (an ``fsync`` on a slow disk, a
keyring call waiting for its daemon): those are kept off the GUI thread by review, not by this meter (the
keyring's by ``tests/gui/test_slow_keyring.py`` too, with a backend that records the thread that asked).

Time in Python's cyclic garbage collector is left out: in a test process a full collection walks every
object earlier tests left behind, which says nothing about the code under test.

A piece that starts at ``awake`` is not counted: after a pass, the event loop either starts the next one or
returns to its caller, and in tests the caller is the test itself (code between ``qtbot`` waits is not an
event). A ``qtbot`` wait's loop can also return straight after an event, with neither signal, and the
test's own code can send an event at once (adding a child sends ``ChildAdded`` without posting it): the
harness reports each wait's loop (:meth:`StallMeter.loop_entered`, :meth:`StallMeter.loop_returned`), so the
test's code between waits is never charged to an event. The same rule leaves out what a slot does after its own ``processEvents()`` call, so the meter can
only under-report.

The meter never changes what an event does: the filter lets every event through, and no Python code runs on
other threads (overriding ``QApplication.notify`` would run Python for worker threads' events too, and a
worker that holds a Qt lock while it waits for the GIL deadlocks the GUI thread).
"""

from __future__ import annotations

import gc
import threading
import time
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QAbstractEventDispatcher, QEvent, QObject
from PySide6.QtWidgets import QApplication, QWidget

STALL_LIMIT_S = 0.050


@dataclass(frozen=True)
class Stall:
    cpu_s: float
    what: str

    def describe(self) -> str:
        return f"{self.cpu_s * 1000:.0f} ms of GUI-thread CPU {self.what}"


class StallMeter(QObject):
    """The worst stall between :meth:`start` and :meth:`stop`."""

    def __init__(self, app: QApplication) -> None:
        super().__init__()
        self.app = app
        self.worst: Stall | None = None
        self._mark: float | None = None  # thread CPU time at the start of the piece being measured
        self._piece: tuple[QObject, QEvent.Type | None, object] | None = None  # what runs in that piece
        self._dispatcher: QAbstractEventDispatcher | None = None
        self._gui_thread = threading.get_ident()
        self._gc_cpu = 0.0  # GUI-thread CPU time spent collecting garbage since start()
        self._gc_started: float | None = None
        self._tracks_loops = False  # see track_loops
        self._loop_depth = 0

    def start(self) -> None:
        self.worst = None
        self._mark = None
        self._gc_cpu = 0.0
        gc.callbacks.append(self._on_gc)
        self._dispatcher = QAbstractEventDispatcher.instance(self.app.thread())
        if self._dispatcher is not None:
            self._dispatcher.aboutToBlock.connect(self._about_to_block)
            self._dispatcher.awake.connect(self._awake)
        self.app.installEventFilter(self)

    def stop(self) -> None:
        gc.callbacks.remove(self._on_gc)
        self.app.removeEventFilter(self)
        if self._dispatcher is not None:
            self._dispatcher.aboutToBlock.disconnect(self._about_to_block)
            self._dispatcher.awake.disconnect(self._awake)
            self._dispatcher = None
        self._close_piece(time.thread_time())
        self._mark = None
        self._piece = None  # let go of the last receiver

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if self._tracks_loops and self._loop_depth <= 0:
            return False  # sent by the test's own code, between waits
        now = time.thread_time()
        self._close_piece(now)
        kind = event.type()
        callbacks = getattr(watched, "_SimpleTimer__callbacks", None)  # qasync runs each callback as a timer
        handle = (
            callbacks.get(event.timerId()) if callbacks is not None and kind == QEvent.Type.Timer else None
        )  # type: ignore[attr-defined]
        self._piece = (watched, kind, handle)
        self._mark = now - self._gc_cpu
        return False

    def _about_to_block(self) -> None:
        now = time.thread_time()
        self._close_piece(now)
        self._piece = None
        self._mark = now - self._gc_cpu

    def _on_gc(self, phase: str, _info: dict[str, Any]) -> None:
        if threading.get_ident() != self._gui_thread:
            return
        if phase == "start":
            self._gc_started = time.thread_time()
        elif self._gc_started is not None:
            self._gc_cpu += time.thread_time() - self._gc_started
            self._gc_started = None

    def _awake(self) -> None:
        self._close_piece(time.thread_time())
        self._mark = None

    def track_loops(self) -> None:
        """The harness reports every nested event loop (:meth:`loop_entered`, :meth:`loop_returned`): an
        event sent outside them (a child added by the test's own code, sent at once rather than posted)
        starts no piece."""
        self._tracks_loops = True

    def loop_entered(self) -> None:
        """A nested event loop (a ``qtbot`` wait) starts: from now on events are the window's work."""
        self._loop_depth += 1

    def loop_returned(self) -> None:
        """That loop has returned to its caller, the test: the piece its last event started ends here, and
        what the test does next is not an event of the window's."""
        self._loop_depth -= 1
        self._awake()

    def _close_piece(self, now: float) -> None:
        if self._mark is None:
            return
        spent = now - self._gc_cpu - self._mark  # marks are kept net of garbage collection
        if spent > STALL_LIMIT_S and (self.worst is None or spent > self.worst.cpu_s):
            self.worst = Stall(spent, _describe(self._piece))


def _describe(piece: tuple[QObject, QEvent.Type | None, object] | None) -> str:
    if piece is None:
        return "in the event loop itself"
    receiver, kind, handle = piece
    event = getattr(kind, "name", str(kind))
    if handle is not None:
        return f"in {_describe_callback(handle)} ({event} event)"
    return f"handling a {event} event for a {type(receiver).__name__}{_where(receiver)}"


def _where(receiver: QObject) -> str:
    """Which widget got the event: its own name, or its nearest named ancestor's (a view's viewport is a
    plain QWidget), so a stall in a big window points at the part that was slow."""
    try:
        node: QObject | None = receiver
        while node is not None:
            name = node.accessibleName() if isinstance(node, QWidget) else ""
            name = name or node.objectName()
            if name:
                return f" in {type(node).__name__} {name!r}"
            node = node.parent()
    except RuntimeError:  # deleted since
        pass
    return ""


def _describe_callback(handle: object) -> str:
    """Name the coroutine an asyncio task step ran, and where it stands now, or the plain callback."""
    target = getattr(getattr(handle, "_callback", None), "__self__", None)
    get_coro = getattr(target, "get_coro", None)
    coro = get_coro() if callable(get_coro) else None
    if coro is None:
        return f"the asyncio callback {handle!r}"
    frame = getattr(coro, "cr_frame", None)
    where = f", now at {frame.f_code.co_filename}:{frame.f_lineno}" if frame is not None else ""
    return f"a step of the asyncio task {getattr(coro, '__qualname__', coro)!r}{where}"
