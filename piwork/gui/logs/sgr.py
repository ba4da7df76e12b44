"""ANSI escape handling for log lines: SGR (colour/weight) codes become styled spans, every other
escape sequence (cursor moves, OSC titles/hyperlinks, charset switches) is dropped.

Pure Python: the delegate maps each `SgrStyle` to Qt colours and fonts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

# A colour is an index into the 256-colour xterm table or an (r, g, b) triple; None is the default.
Colour = int | tuple[int, int, int] | None

_ESCAPE = re.compile(
    r"\x1b\[(?P<params>[0-?]*)[ -/]*(?P<final>[@-~])"  # CSI ... final byte
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC ... BEL or ST
    r"|\x1b[P^_X][^\x1b]*(?:\x1b\\)?"  # DCS/PM/APC/SOS strings
    r"|\x1b[ -/]*[0-~]?"  # two-byte escapes (charset selection, keypad modes, ...)
)


@dataclass(frozen=True, slots=True)
class SgrStyle:
    fg: Colour = None
    bg: Colour = None
    bold: bool = False
    dim: bool = False
    italic: bool = False
    underline: bool = False
    inverse: bool = False
    strike: bool = False


PLAIN = SgrStyle()


@dataclass(frozen=True, slots=True)
class Span:
    text: str
    style: SgrStyle


def strip_ansi(text: str) -> str:
    """The text without any escape sequence (what search results and copies use)."""
    if "\x1b" not in text:
        return text
    return _ESCAPE.sub("", text)


def parse_sgr_spans(text: str, style: SgrStyle = PLAIN) -> list[Span]:
    """Split `text` into styled spans, starting from `style` (styles do not carry across lines here)."""
    if "\x1b" not in text:
        return [Span(text, style)] if text else []
    spans: list[Span] = []
    pos = 0
    for match in _ESCAPE.finditer(text):
        if match.start() > pos:
            spans.append(Span(text[pos : match.start()], style))
        pos = match.end()
        if match.group("final") == "m":
            style = apply_sgr(style, match.group("params") or "")
    if pos < len(text):
        spans.append(Span(text[pos:], style))
    return _merge(spans)


def _merge(spans: list[Span]) -> list[Span]:
    merged: list[Span] = []
    for span in spans:
        if merged and merged[-1].style == span.style:
            merged[-1] = Span(merged[-1].text + span.text, span.style)
        else:
            merged.append(span)
    return merged


def _codes(params: str) -> list[int]:
    codes: list[int] = []
    for part in re.split(r"[;:]", params):
        try:
            codes.append(int(part) if part else 0)
        except ValueError:
            codes.append(-1)
    return codes or [0]


def _extended_colour(codes: list[int], i: int) -> tuple[Colour, int]:
    """Read `38;5;n` / `38;2;r;g;b` starting at the code after 38/48; returns (colour, next index)."""
    if i < len(codes) and codes[i] == 5 and i + 1 < len(codes):
        n = codes[i + 1]
        return (n if 0 <= n <= 255 else None), i + 2
    if i < len(codes) and codes[i] == 2 and i + 3 < len(codes):
        r, g, b = (max(0, min(255, c)) for c in codes[i + 1 : i + 4])
        return (r, g, b), i + 4
    return None, len(codes)


def apply_sgr(style: SgrStyle, params: str) -> SgrStyle:
    """Apply one `ESC[...m` parameter list to `style`."""
    codes = _codes(params)
    i = 0
    while i < len(codes):
        code = codes[i]
        i += 1
        if code == 0:
            style = PLAIN
        elif code == 1:
            style = replace(style, bold=True)
        elif code == 2:
            style = replace(style, dim=True)
        elif code == 3:
            style = replace(style, italic=True)
        elif code == 4:
            style = replace(style, underline=True)
        elif code == 7:
            style = replace(style, inverse=True)
        elif code == 9:
            style = replace(style, strike=True)
        elif code == 22:
            style = replace(style, bold=False, dim=False)
        elif code == 23:
            style = replace(style, italic=False)
        elif code == 24:
            style = replace(style, underline=False)
        elif code == 27:
            style = replace(style, inverse=False)
        elif code == 29:
            style = replace(style, strike=False)
        elif 30 <= code <= 37:
            style = replace(style, fg=code - 30)
        elif code == 39:
            style = replace(style, fg=None)
        elif 40 <= code <= 47:
            style = replace(style, bg=code - 40)
        elif code == 49:
            style = replace(style, bg=None)
        elif 90 <= code <= 97:
            style = replace(style, fg=code - 90 + 8)
        elif 100 <= code <= 107:
            style = replace(style, bg=code - 100 + 8)
        elif code in (38, 48):
            colour, i = _extended_colour(codes, i)
            style = replace(style, fg=colour) if code == 38 else replace(style, bg=colour)
    return style


_BASE16 = [
    (0, 0, 0), (205, 49, 49), (13, 188, 121), (229, 229, 16),
    (36, 114, 200), (188, 63, 188), (17, 168, 205), (229, 229, 229),
    (102, 102, 102), (241, 76, 76), (35, 209, 139), (245, 245, 67),
    (59, 142, 234), (214, 112, 214), (41, 184, 219), (255, 255, 255),
]  # fmt: skip


def colour_rgb(colour: Colour) -> tuple[int, int, int] | None:
    """The RGB value of a colour from the xterm 256-colour table (None for the default colour)."""
    if colour is None or isinstance(colour, tuple):
        return colour
    if colour < 16:
        return _BASE16[colour]
    if colour < 232:
        n = colour - 16
        steps = (0, 95, 135, 175, 215, 255)
        return steps[n // 36], steps[(n // 6) % 6], steps[n % 6]
    level = 8 + (colour - 232) * 10
    return level, level, level
