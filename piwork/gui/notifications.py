"""The one path every unexpected error takes to the screen: a visible message with a details button.

``NotificationCenter.install()`` hooks ``sys.excepthook``, ``threading.excepthook`` and the asyncio loop's
exception handler, and hands every log record at ERROR or above from a ``piwork.*`` logger to the screen
too (a record whose error is already shown carries ``extra={NOTIFIED: True}`` and is not shown twice). Errors raised on worker threads are forwarded to the GUI thread through a queued signal,
so no widget is touched off the GUI thread. Engine errors (``PiworkError``) show their message as is;
anything else is labelled as an unexpected error, with the traceback behind "Show Details...".
"""

from __future__ import annotations

import asyncio
import logging
import sys
import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QMessageBox, QWidget

from piwork.core.errors import PiworkError
from piwork.gui.inert_text import plain_tip

log = logging.getLogger(__name__)

MAX_OPEN_BOXES = 3  # a burst of errors must not bury the window under dialogs
NOTIFIED = "piwork_notified"  # a log record's attribute: what it reports is already on the screen
LOGGERS = "piwork"  # the loggers (and their children) whose errors are shown


@dataclass(frozen=True)
class Notification:
    title: str
    text: str
    details: str = ""
    level: str = "error"  # "error" | "warning" | "info"


def describe_exception(exc: BaseException, tb: TracebackType | None = None) -> Notification:
    details = "".join(traceback.format_exception(type(exc), exc, tb or exc.__traceback__))
    if isinstance(exc, PiworkError):
        return Notification("piwork", str(exc), details)
    summary = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return Notification(
        "Unexpected error",
        f"Something went wrong inside piwork and the action did not finish.\n\n{summary}\n\n"
        "Your session file is not affected. If this keeps happening, copy the details into a bug report.",
        details,
    )


def describe_view_failure(part: str, what: str, exc: BaseException) -> Notification:
    """One view of the window failed on one thing it was showing; the session itself goes on."""
    details = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    summary = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return Notification(
        f"{part[:1].upper()}{part[1:]} could not show something",
        f"{part[:1].upper()}{part[1:]} failed while showing {what}: {summary}\n\n"
        "The session goes on: what it records and sends is not affected, and the other views keep "
        "following it. This view may miss that part until the session is reopened. If this keeps "
        "happening, copy the details into a bug report.",
        details,
    )


def describe_record(record: logging.LogRecord) -> Notification:
    """A log record at ERROR or above as a notification (its traceback behind the details)."""
    message = record.getMessage()
    details = f"{record.name}: {message}"
    summary = ""
    if record.exc_info and record.exc_info[1] is not None:
        exc_type, exc, tb = record.exc_info
        details += "\n\n" + "".join(traceback.format_exception(exc_type, exc, tb))
        summary = f"\n\n{type(exc).__name__}: {exc}" if str(exc) else f"\n\n{type(exc).__name__}"
    return Notification(
        "Something went wrong",
        f"piwork reported a problem: {message}{summary}\n\n"
        "What it was doing may not have finished. If this keeps happening, copy the details into a bug report.",
        details,
    )


class ErrorLogHandler(logging.Handler):
    """Shows each record at ERROR or above in the notification centre (records come from any thread)."""

    def __init__(self, center: NotificationCenter) -> None:
        super().__init__(logging.ERROR)
        self.center = center

    def emit(self, record: logging.LogRecord) -> None:
        if getattr(record, NOTIFIED, False):
            return
        try:
            self.center.post(describe_record(record))
        except Exception:  # a broken notification must not break the code that logged
            self.handleError(record)


class NotificationCenter(QObject):
    """Shows notifications as non-modal message boxes and keeps a history (the log panel may read it)."""

    posted = Signal(object)  # Notification, after it is shown
    _from_any_thread = Signal(object)  # Notification; queued into the GUI thread

    def __init__(self, parent_widget: QWidget | None = None) -> None:
        super().__init__(parent_widget)
        self._parent_widget = parent_widget
        self.history: list[Notification] = []
        self.open_boxes: list[QMessageBox] = []
        self.suppressed = 0
        self._restore: list[Callable[[], None]] = []
        self._from_any_thread.connect(self.show, Qt.ConnectionType.QueuedConnection)

    # ---- hooks -------------------------------------------------------------------------------

    def install(self, loop: asyncio.AbstractEventLoop | None = None) -> None:
        previous_sys = sys.excepthook
        previous_thread = threading.excepthook
        sys.excepthook = self._sys_hook
        threading.excepthook = self._thread_hook
        self._restore.append(lambda: setattr(sys, "excepthook", previous_sys))
        self._restore.append(lambda: setattr(threading, "excepthook", previous_thread))
        handler = ErrorLogHandler(self)
        logger = logging.getLogger(LOGGERS)
        logger.addHandler(handler)
        self._restore.append(lambda: logger.removeHandler(handler))
        if loop is not None:
            previous_loop = loop.get_exception_handler()
            loop.set_exception_handler(self._loop_hook)
            self._restore.append(lambda: loop.set_exception_handler(previous_loop))

    def uninstall(self) -> None:
        while self._restore:
            self._restore.pop()()

    def _sys_hook(self, exc_type: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
        if issubclass(exc_type, KeyboardInterrupt):
            sys.__excepthook__(exc_type, exc, tb)
            return
        log.error("unhandled exception", exc_info=(exc_type, exc, tb), extra={NOTIFIED: True})
        self.post(describe_exception(exc, tb))

    def _thread_hook(self, args: threading.ExceptHookArgs) -> None:
        if args.exc_value is None:
            return
        log.error(
            "unhandled exception in thread %s", args.thread, exc_info=args.exc_value, extra={NOTIFIED: True}
        )
        self.post(describe_exception(args.exc_value, args.exc_traceback))

    def _loop_hook(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        exc = context.get("exception")
        if isinstance(exc, asyncio.CancelledError):
            return
        if exc is None:
            message = str(context.get("message", "asyncio reported a problem"))
            log.error("asyncio: %s", message, extra={NOTIFIED: True})
            self.post(Notification("Unexpected error", message, repr(context)))
            return
        log.error("unhandled exception in a background task", exc_info=exc, extra={NOTIFIED: True})
        self.post(describe_exception(exc))

    # ---- showing -----------------------------------------------------------------------------

    def post(self, notification: Notification) -> None:
        """Show ``notification``; safe to call from any thread."""
        if threading.current_thread() is threading.main_thread():
            self.show(notification)
        else:
            self._from_any_thread.emit(notification)

    def show(self, notification: Notification) -> None:
        self.history.append(notification)
        self.open_boxes = [box for box in self.open_boxes if box.isVisible()]
        if len(self.open_boxes) >= MAX_OPEN_BOXES:
            self.suppressed += 1
            self.posted.emit(notification)
            return
        icon = {
            "error": QMessageBox.Icon.Critical,
            "warning": QMessageBox.Icon.Warning,
        }.get(notification.level, QMessageBox.Icon.Information)
        # Created with its parent so Qt owns it from the start (re-parenting a Python-owned box and then
        # deleting it on close frees it twice).
        box = QMessageBox(
            icon,
            notification.title,
            plain_tip(notification.text),
            QMessageBox.StandardButton.Ok,
            self._parent_widget,
        )
        box.setWindowModality(Qt.WindowModality.NonModal)
        if notification.details:
            box.setDetailedText(notification.details)
        box.finished.connect(self._on_box_finished)
        self.open_boxes.append(box)
        box.show()
        self.posted.emit(notification)

    def _on_box_finished(self, _result: int) -> None:
        box = self.sender()
        self.open_boxes = [b for b in self.open_boxes if b is not box]

    def close_all(self) -> None:
        for box in list(self.open_boxes):
            box.close()
        self.open_boxes.clear()
