"""Time stamps as Pi writes and reads them: ISO strings for entries, epoch milliseconds for messages.

``js_date_ms`` reproduces ``new Date(value).getTime()`` for the values session files hold: ISO 8601
strings (the forms JavaScript engines accept), numbers, ``null`` and absent values. Anything that
JavaScript would turn into an invalid date gives ``nan``.
"""

from __future__ import annotations

import math
import re
import time
from datetime import UTC, datetime
from typing import Any

_MAX_TIME_MS = 8.64e15
_ISO = re.compile(
    r"([+-]\d{6}|\d{4})(?:-(\d{2})(?:-(\d{2}))?)?"
    r"(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?([Zz]|[+-]\d{2}:\d{2})?)?"
)


def _days_from_civil(year: int, month: int, day: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date (month 1-12, day may overflow)."""
    y = year - (1 if month <= 2 else 0)
    era = (y if y >= 0 else y - 399) // 400
    yoe = y - era * 400
    mp = (month + 9) % 12
    doy = (153 * mp + 2) // 5
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468 + (day - 1)


def _time_clip(ms: float) -> float:
    if not math.isfinite(ms) or abs(ms) > _MAX_TIME_MS:
        return math.nan
    return float(math.trunc(ms)) + 0.0


def parse_iso_ms(text: str) -> float:
    """``Date.parse`` for ISO-style date strings; ``nan`` for anything else."""
    match = _ISO.fullmatch(text)
    if match is None:
        return math.nan
    year_s, month_s, day_s, hour_s, minute_s, second_s, frac_s, zone = match.groups()
    if year_s == "-000000":
        return math.nan
    year = int(year_s)
    month = int(month_s) if month_s else 1
    day = int(day_s) if day_s else 1
    hour = int(hour_s) if hour_s else 0
    minute = int(minute_s) if minute_s else 0
    second = int(second_s) if second_s else 0
    millis = int((frac_s + "00")[:3]) if frac_s else 0
    if not (1 <= month <= 12 and 1 <= day <= 31 and minute <= 59 and second <= 59):
        return math.nan
    if hour > 24 or (hour == 24 and (minute or second or millis)):
        return math.nan
    offset_min = 0
    if zone and zone not in ("Z", "z"):
        sign = -1 if zone[0] == "-" else 1
        zh, zm = int(zone[1:3]), int(zone[4:6])
        if zh > 23 or zm > 59:
            return math.nan
        offset_min = sign * (zh * 60 + zm)
    days = _days_from_civil(year, month, day)
    ms = ((days * 24 + hour) * 60 + minute - offset_min) * 60_000 + second * 1000 + millis
    return _time_clip(ms)


def js_date_ms(value: Any) -> float:
    """``new Date(value).getTime()``: milliseconds since the epoch, ``nan`` when invalid or absent."""
    if value is None:
        return 0.0
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float)):
        return _time_clip(float(value))
    if isinstance(value, str):
        return parse_iso_ms(value)
    if isinstance(value, list):
        return parse_iso_ms(",".join("" if v is None else str(v) for v in value))
    return math.nan


def iso_from_ms(ms: int) -> str:
    """``new Date(ms).toISOString()``: ``2024-12-03T14:00:01.000Z``."""
    moment = datetime.fromtimestamp(ms / 1000, tz=UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def iso_now() -> str:
    return iso_from_ms(now_ms())


def file_timestamp(iso: str) -> str:
    """The header time stamp as it appears in a session file name (``:`` and ``.`` become ``-``)."""
    return iso.replace(":", "-").replace(".", "-")
