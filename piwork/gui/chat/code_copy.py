"""Copy buttons on a message's code blocks and on a tool call's command.

Hovering a code block shows a small "Copy" at its top right; hovering a tool card's header shows one at the
end of its summary. A click copies the block's code as written (from the Markdown source: see
``code_fences``) or the call's main argument in full (a bash command, a path), and the button says "Copied" a
moment. The same copies are in the row's context menu, the keyboard's way to them.

Only the row under the pointer is looked at: its code blocks' places come from its laid-out document (cached
by row revision and width), so nothing is computed for rows the pointer does not visit.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from PySide6.QtCore import QEvent, QObject, QPoint, QRect, Qt, QTimer
from PySide6.QtGui import (
    QColor,
    QCursor,
    QFont,
    QFontMetrics,
    QGuiApplication,
    QMouseEvent,
    QPainter,
    QPalette,
    QTextBlock,
    QTextDocument,
    QTextFormat,
)
from PySide6.QtWidgets import QAbstractItemView

from piwork.gui.chat.chat_model import ChatModel
from piwork.gui.chat.code_fences import FencedCode, fenced_code
from piwork.gui.chat.rows import ChatRow, RowKind
from piwork.gui.chat.tool_views import view_for

if TYPE_CHECKING:
    from piwork.gui.theme import Theme

COPY = "Copy"
COPIED = "Copied"
COPIED_MS = 1200  # how long a button says "Copied"
PAUSE_BLOCKS = 400  # blocks read between checks of the time spent
READ_BUDGET_S = 0.008  # GUI-thread time per event-loop turn for finding a long message's code blocks
_MARKDOWN_KINDS = (RowKind.TEXT, RowKind.USER, RowKind.SKILL, RowKind.NOTICE)


class _RowGeometry(Protocol):
    @property
    def header(self) -> QRect: ...

    @property
    def body(self) -> QRect: ...


class _Delegate(Protocol):
    theme: Theme

    def geometry(self, row: ChatRow, rect: QRect) -> _RowGeometry: ...

    def body_document(self, row: ChatRow) -> QTextDocument | None: ...

    def small_font(self) -> QFont: ...

    def tool_summary_span(self, row: ChatRow, geo: Any) -> tuple[int, int]: ...


@dataclass(frozen=True, slots=True)
class CopyTarget:
    """Something a button copies: where it is in the row's body document, and its text."""

    area: QRect  # in the document's coordinates (a tool command's: the row's)
    text: str
    label: str  # what the context menu calls it: a code block's language, a command's entry


def code_targets(doc: QTextDocument, source: str) -> list[CopyTarget]:
    """The code blocks of ``doc`` (rendered from the Markdown ``source``), each with its code as written;
    a block the source does not account for (an indented one) gives its rendered text."""
    found: list[CopyTarget] = []
    for _pause in read_code_targets(doc, source, found):
        pass
    return found


def read_code_targets(doc: QTextDocument, source: str, found: list[CopyTarget]) -> Iterator[None]:
    """:func:`code_targets` a step at a time: appends to ``found`` and pauses every few hundred blocks,
    so a message of thousands of code blocks is read over several event-loop turns."""
    sources = [block for block in fenced_code(source) if block.lines]
    yield
    layout = doc.documentLayout()
    at_source = 0
    for run in _code_runs(doc):
        if run is None:
            yield
            continue
        at = 0
        while at < len(run) and at_source < len(sources):
            code = sources[at_source]
            if at + code.lines > len(run) or not _same_start(code, run[at]):
                break
            found.append(_target(layout, run[at], run[at + code.lines - 1], code.code, code.language))
            at += code.lines
            at_source += 1
        if at < len(run):
            text = "\n".join(block.text() for block in run[at:])
            found.append(_target(layout, run[at], run[-1], text, _language(run[at]) or ""))


def _target(layout: object, first: QTextBlock, last: QTextBlock, text: str, language: str) -> CopyTarget:
    top = layout.blockBoundingRect(first)  # type: ignore[attr-defined]
    if last != first:
        top = top.united(layout.blockBoundingRect(last))  # type: ignore[attr-defined]
    return CopyTarget(top.toAlignedRect(), text, language)


def block_entry(target: CopyTarget) -> str:
    """A code block's words in the context menu: its language and the start of its first line."""
    first_line = target.text.strip().split("\n", 1)[0].strip()
    what = f"{target.label}: {first_line}" if target.label else first_line
    return what[:40] + ("…" if len(what) > 40 else "")


def _same_start(code: FencedCode, block: QTextBlock) -> bool:
    first = code.code.split("\n")[0]
    return "".join(first.split()) == "".join(block.text().split())  # Qt turns tabs into spaces


def _language(block: QTextBlock) -> str | None:
    value = block.blockFormat().property(QTextFormat.Property.BlockCodeLanguage)
    return None if value is None else str(value)


def _code_runs(doc: QTextDocument) -> Iterator[list[QTextBlock] | None]:
    """Consecutive fenced code lines of one language, each run once it ends; None now and then (a pause)."""
    run: list[QTextBlock] = []
    previous: object = None
    fence_key, language_key = QTextFormat.Property.BlockCodeFence, QTextFormat.Property.BlockCodeLanguage
    block = doc.begin()
    count = 0
    while block.isValid():
        fmt = block.blockFormat()
        language = fmt.property(language_key) if fmt.hasProperty(fence_key) else None
        if run and language != previous:
            yield run
            run = []
        if language is not None:
            run.append(block)
        previous = language
        block = block.next()
        count += 1
        if count % PAUSE_BLOCKS == 0:
            yield None
    if run:
        yield run


@dataclass(eq=False)
class _Found:
    """The code blocks found so far in one laid-out document of a row."""

    doc: QTextDocument  # kept alive while it is read
    revision: int
    width: int
    targets: list[CopyTarget] = field(default_factory=list)
    steps: Iterator[None] | None = None  # the rest of the reading; None once it is done


def command_label(row: ChatRow) -> str:
    """The context menu's entry for copying a tool call's main argument ("" when it has none)."""
    if row.tool is None:
        return ""
    key, value = view_for(row.tool.name).main_argument(row.tool)
    if not value:
        return ""
    return {
        "command": "Copy command",
        "pattern": "Copy pattern",
        "query": "Copy query",
        "url": "Copy URL",
    }.get(key, "Copy path" if "path" in key else f"Copy {key}")


def copy_text(text: str) -> None:
    QGuiApplication.clipboard().setText(text)


class CopyButtons(QObject):
    """Hover, paint and click handling of the copy buttons of one chat view (an event filter on its
    viewport, so a click on a button neither selects the row nor opens the card)."""

    def __init__(self, view: QAbstractItemView, delegate: _Delegate) -> None:
        super().__init__(view)
        self._view = view
        self._delegate = delegate
        self._found: dict[int, _Found] = {}  # row key -> the code blocks found in its document
        self._last_pos: QPoint | None = None  # where the pointer last moved in the viewport
        self._reader = QTimer(self)
        self._reader.setSingleShot(True)
        self._reader.setInterval(0)
        self._reader.timeout.connect(self._read_on)
        self.hovered: tuple[int, int] | None = None  # (row key, target number) under the pointer
        self.copied: tuple[int, int] | None = None  # the button saying "Copied"
        self._pressed: tuple[int, int] | None = None
        self._pointing = False  # the pointer is a hand (over a button)
        self._copied_timer = QTimer(self)
        self._copied_timer.setSingleShot(True)
        self._copied_timer.setInterval(COPIED_MS)
        self._copied_timer.timeout.connect(self._copied_over)
        view.viewport().setMouseTracking(True)
        view.viewport().installEventFilter(self)

    # ---- what a row offers -------------------------------------------------------------------

    def targets(self, row: ChatRow, rect: QRect) -> list[CopyTarget]:
        """The row's copy targets, their areas in view coordinates (``rect``: the row's rect)."""
        geo = self._delegate.geometry(row, rect)
        if row.tool is not None:
            _key, value = view_for(row.tool.name).main_argument(row.tool)
            if not value:
                return []
            return [CopyTarget(self._command_button(row, geo), value, command_label(row))]
        if row.kind not in _MARKDOWN_KINDS or row.streaming or not geo.body.height():
            return []
        doc = self._delegate.body_document(row)
        if doc is None:
            return []
        width = int(doc.textWidth())
        found = self._found.get(row.key)
        if found is None or found.doc is not doc or (found.revision, found.width) != (row.revision, width):
            source = row.text if row.kind is not RowKind.NOTICE else row.text + "\n\n" + row.hint
            found = _Found(doc, row.revision, width)
            if "```" in source or "~~~" in source:
                found.steps = read_code_targets(doc, source, found.targets)
            self._found[row.key] = found
            if len(self._found) > 16:
                self._found.pop(next(iter(self._found)))
        if found.steps is not None:
            self._read(found)
        origin = geo.body.topLeft()
        return [CopyTarget(t.area.translated(origin), t.text, t.label) for t in found.targets]

    def _read(self, found: _Found) -> None:
        """Find more of a message's code blocks for a few milliseconds; the rest on later turns."""
        if found.steps is None:
            return
        deadline = time.perf_counter() + READ_BUDGET_S
        for _pause in found.steps:
            if time.perf_counter() > deadline:
                self._reader.start()
                return
        found.steps = None

    def _read_on(self) -> None:
        for found in list(self._found.values()):
            self._read(found)
        if self._last_pos is not None and not self._reader.isActive():
            hit = self._hit(self._last_pos)  # the block under the pointer may have been found now
            spot = (hit[0].key, hit[1]) if hit is not None else None
            self._set_hovered(spot, hit is not None and self.button(hit[2], hit[0]).contains(self._last_pos))

    def _command_button(self, row: ChatRow, geo: _RowGeometry) -> QRect:
        """Where a tool header's button sits: just after its summary (the command), within the summary's
        room (before the badges and the duration)."""
        end, room_end = self._delegate.tool_summary_span(row, geo)
        size = self._button_size(COPIED)
        left = min(end + 8, room_end - size.width())
        header = geo.header
        return QRect(left, header.center().y() - size.height() // 2 + 1, size.width(), size.height())

    def button(self, target: CopyTarget, row: ChatRow) -> QRect:
        """The button's rect for ``target`` (a code block's: inside its top right corner)."""
        if row.tool is not None:
            return target.area
        size = self._button_size(COPIED)
        area = target.area
        return QRect(area.right() - size.width() - 3, area.top() + 3, size.width(), size.height())

    def _button_size(self, text: str) -> QRect:
        fm = QFontMetrics(self._delegate.small_font())
        return QRect(0, 0, fm.horizontalAdvance(text) + 14, fm.height() + 4)

    def menu_entries(self, row: ChatRow, rect: QRect, pos: QPoint | None) -> list[tuple[str, str]]:
        """(label, text) for the row's context menu: the code block under ``pos`` as "Copy code block";
        else each code block of the row; a tool call's command."""
        targets = self.targets(row, rect)
        if row.tool is not None:
            return [(t.label, t.text) for t in targets]
        under = [t for t in targets if pos is not None and t.area.contains(pos)]
        if under or len(targets) == 1:
            return [("Copy code block", (under or targets)[0].text)]
        return [(f"Copy code block {n} ({block_entry(t)})", t.text) for n, t in enumerate(targets, 1)]

    # ---- pointer -----------------------------------------------------------------------------

    def _hit(self, pos: QPoint) -> tuple[ChatRow, int, CopyTarget] | None:
        """The row and target whose area (a code block; a tool card's header) is under ``pos``."""
        index = self._view.indexAt(pos)
        model = self._view.model()
        if not index.isValid() or not isinstance(model, ChatModel):
            return None
        row = model.row_at(index.row())
        rect = self._view.visualRect(index)
        for number, target in enumerate(self.targets(row, rect)):
            over = self._delegate.geometry(row, rect).header if row.tool is not None else target.area
            if over.contains(pos):
                return row, number, target
        return None

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kind = event.type()
        if kind == QEvent.Type.Leave:
            self._last_pos = None
            self._set_hovered(None, False)
            return False
        if not isinstance(event, QMouseEvent):
            return False
        pos = event.position().toPoint()
        hit = None
        if kind == QEvent.Type.MouseMove or event.button() == Qt.MouseButton.LeftButton:
            hit = self._hit(pos)
        on_button = hit is not None and self.button(hit[2], hit[0]).contains(pos)
        spot = (hit[0].key, hit[1]) if hit is not None else None
        if kind == QEvent.Type.MouseMove:
            self._last_pos = pos
            if event.buttons() == Qt.MouseButton.NoButton:
                self._set_hovered(spot, on_button)
            return False
        if event.button() != Qt.MouseButton.LeftButton:
            return False
        if kind in (QEvent.Type.MouseButtonPress, QEvent.Type.MouseButtonDblClick):
            self._pressed = spot if on_button else None
            return self._pressed is not None
        if kind == QEvent.Type.MouseButtonRelease and self._pressed is not None:
            pressed, self._pressed = self._pressed, None
            if hit is not None and on_button and spot == pressed:
                self.copy(hit[0], hit[1], hit[2].text)
            return True
        return False

    def copy(self, row: ChatRow, number: int, text: str) -> None:
        copy_text(text)
        self.copied = (row.key, number)
        self._copied_timer.start()
        self._update_row(row.key)

    def _copied_over(self) -> None:
        key = self.copied[0] if self.copied else None
        self.copied = None
        if key is not None:
            self._update_row(key)

    def _set_hovered(self, spot: tuple[int, int] | None, on_button: bool) -> None:
        viewport = self._view.viewport()
        if on_button != self._pointing:
            self._pointing = on_button
            if on_button:
                viewport.setCursor(QCursor(Qt.CursorShape.PointingHandCursor))
            else:
                viewport.unsetCursor()
        if spot == self.hovered:
            return
        old, self.hovered = self.hovered, spot
        for changed in (old, spot):
            if changed is not None:
                self._update_row(changed[0])

    def _update_row(self, key: int) -> None:
        model = self._view.model()
        if not isinstance(model, ChatModel):
            return
        visible = model.visible_index_of_key(key)
        if visible is not None:
            self._view.viewport().update(self._view.visualRect(model.index(visible)))

    # ---- painting ----------------------------------------------------------------------------

    def paint(self, painter: QPainter, row: ChatRow, rect: QRect, palette: QPalette) -> None:
        """The hovered (or just copied) button of ``row``, if it has one."""
        shown = [state for state in (self.copied, self.hovered) if state is not None and state[0] == row.key]
        if not shown:
            return
        targets = self.targets(row, rect)
        number = shown[0][1]
        if number >= len(targets):
            return
        copied = self.copied == (row.key, number)
        self._paint_button(painter, self.button(targets[number], row), COPIED if copied else COPY, palette)

    def _paint_button(self, painter: QPainter, rect: QRect, text: str, palette: QPalette) -> None:
        painter.save()
        base = QColor(palette.color(QPalette.ColorRole.Base))
        border = QColor(palette.color(QPalette.ColorRole.PlaceholderText))
        border.setAlpha(140)
        painter.setPen(border)
        painter.setBrush(base)
        painter.drawRoundedRect(rect.adjusted(0, 0, -1, -1), 5, 5)
        painter.setFont(self._delegate.small_font())
        colour = (
            self._delegate.theme.accent("ok") if text == COPIED else palette.color(QPalette.ColorRole.Text)
        )
        painter.setPen(colour)
        painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, text)
        painter.restore()
