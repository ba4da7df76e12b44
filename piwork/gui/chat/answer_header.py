"""The words of the line heading an answer: "claude-sonnet-4 · 14:32", with the date when it is not today,
in the locale's short formats."""

from __future__ import annotations

from datetime import date
from functools import lru_cache
from typing import TYPE_CHECKING

from PySide6.QtCore import QDate, QDateTime, QLocale

if TYPE_CHECKING:
    from piwork.gui.chat.answer_meta import AnswerHead

SEPARATOR = " · "


def head_label(head: AnswerHead, today: date | None = None) -> str:
    """The heading's text; ``today`` (the local date by default) decides whether the date is shown."""
    return _label(head, today or date.today())


@lru_cache(maxsize=1024)  # painted on every repaint of the row: formatted once
def _label(head: AnswerHead, today: date) -> str:
    parts = [head.model or head.provider]
    if head.timestamp is not None:
        parts.append(when(head.timestamp, today))
    return SEPARATOR.join(part for part in parts if part)


def when(timestamp_ms: int, today: date) -> str:
    """The local time of ``timestamp_ms``; the short date before it when that is not ``today``."""
    moment = QDateTime.fromMSecsSinceEpoch(timestamp_ms).toLocalTime()
    locale = QLocale()
    time_text = locale.toString(moment.time(), QLocale.FormatType.ShortFormat)
    day = moment.date()
    if day == QDate(today.year, today.month, today.day):
        return time_text
    if locale.language() == QLocale.Language.C:  # no locale set: the C locale's short date is "3 12 2024"
        return f"{locale.toString(day, 'd MMM yyyy')} {time_text}"
    return f"{locale.toString(day, QLocale.FormatType.ShortFormat)} {time_text}"


def head_tooltip(head: AnswerHead) -> str:
    """The head line's tooltip: provider and model, and the full local date and time (plain text)."""
    who = " / ".join(part for part in (head.provider, head.model) if part)
    if head.timestamp is None:
        return who
    moment = QDateTime.fromMSecsSinceEpoch(head.timestamp).toLocalTime()
    return f"{who}\n{QLocale().toString(moment, QLocale.FormatType.LongFormat)}"
