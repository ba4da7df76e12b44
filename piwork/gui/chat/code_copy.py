"""Copy buttons on a message's code blocks and on a tool call's command.

Hovering a code block shows a small "Copy" at its top right; hovering a tool card's header shows one at the
end of its summary. A click copies the block's code as written (from the Markdown source: see
``code_fences``) or the call's main argument in full (a bash command, a path), and the button says "Copied" a
moment. The same copies are in the row's context menu, the keyboard's way to them.

Only the row under the pointer is looked at: its code blocks' places come from its laid-out document (cached
by row revision and width), so nothing is computed for rows the pointer does not visit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

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
from piwork.gui.theme import Theme

COPY = "Copy"
COPIED = "Copied"
COPIED_MS = 1200  # how long a button says "Copied"
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
    label: str  # the context menu's entry


def code_targets(doc: QTextDocument, source: str) -> list[CopyTarget]:
    """The code blocks of ``doc`` (rendered from the Markdown ``source``), each with its code as written;
    a block the source does not account for (an indented one) gives its rendered text."""
    sources = [block for block in fenced_code(source) if block.lines]
    layout = doc.documentLayout()
    targets: list[CopyTarget] = []
    at_source = 0
    for run in _code_runs(doc):
        at = 0
        while at < len(run) and at_source < len(sources):
            code = sources[at_source]
            if at + code.lines > len(run) or not _same_start(code, run[at]):
                break
            targets.append(_target(layout, run[at], run[at + code.lines - 1], code.code, code.language))
            at += code.lines
            at_source += 1
        if at < len(run):
            text = "\n".join(block.text() for block in run[at:])
            targets.append(_target(layout, run[at], run[-1], text, _language(run[at]) or ""))
    return targets


def _target(layout: object, first: QTextBlock, last: QTextBlock, text: str, language: str) -> CopyTarget:
    top = layout.blockBoundingRect(first)  # type: ignore[attr-defined]
    bottom = layout.blockBoundingRect(last)  # type: ignore[attr-defined]
    area = top.united(bottom).toAlignedRect()
    first_line = text.strip().split("\n")[0].strip()
    what = f"{language}: {first_line}" if language else first_line
    return CopyTarget(area, text, what[:40] + ("…" if len(what) > 40 else ""))


def _same_start(code: FencedCode, block: QTextBlock) -> bool:
    first = code.code.split("\n")[0]
    return "".join(first.split()) == "".join(block.text().split())  # Qt turns tabs into spaces


def _language(block: QTextBlock) -> str | None:
    value = block.blockFormat().property(QTextFormat.Property.BlockCodeLanguage)
    return None if value is None else str(value)


def _code_runs(doc: QTextDocument) -> list[list[QTextBlock]]:
    """Consecutive fenced code lines of one language."""
    runs: list[list[QTextBlock]] = []
    previous: str | None = None
    block = doc.begin()
    while block.isValid():
        fence = block.blockFormat().property(QTextFormat.Property.BlockCodeFence)
        language = _language(block) if fence is not None else None
        if language is not None:
            if language == previous and runs:
                runs[-1].append(block)
            else:
                runs.append([block])
        previous = language
        block = block.next()
    return runs


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
        self._cache: dict[int, tuple[int, int, int, list[CopyTarget]]] = {}  # key -> (doc, rev, width, ...)
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
        cached = self._cache.get(row.key)
        if cached is None or cached[:3] != (id(doc), row.revision, width):
            source = row.text if row.kind is not RowKind.NOTICE else row.text + "\n\n" + row.hint
            found = code_targets(doc, source) if ("```" in source or "~~~" in source) else []
            cached = (id(doc), row.revision, width, found)
            self._cache[row.key] = cached
            if len(self._cache) > 64:
                self._cache.pop(next(iter(self._cache)))
        origin = geo.body.topLeft()
        return [CopyTarget(t.area.translated(origin), t.text, t.label) for t in cached[3]]

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
        return [(f"Copy code block {n} ({t.label})", t.text) for n, t in enumerate(targets, 1)]

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
