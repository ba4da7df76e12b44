"""Paints chat rows: bubbles, Markdown text, collapsible thinking, tool cards with status and badges.

Row bodies come from :class:`RowDocuments` (cached documents and thumbnails). Heights are cached by row
revision and width, so laying out hundreds of rows costs a dict lookup each; clicks on headers and badges are
hit-tested with the same geometry the painter uses.

Laying out a row's text exactly costs about half a millisecond, so a layout pass over a freshly opened
conversation (a few hundred rows, twice when the scroll bar appears) would hold the GUI thread for a few
hundred milliseconds. Instead a row not measured yet at the current width gets a cheap estimate from its text
length (the view has the rows it shows measured exactly first) and is measured exactly
a few milliseconds at a time on later event-loop turns; ``heightsSettled`` then asks the view to lay out again.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from PySide6.QtCore import (
    QEvent,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QPoint,
    QRect,
    QRectF,
    QSize,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import (
    QAbstractTextDocumentLayout,
    QColor,
    QFont,
    QFontMetrics,
    QHelpEvent,
    QMouseEvent,
    QPainter,
    QPalette,
    QPixmap,
    QTextDocument,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QToolTip,
)

from piwork.gui.chat.answer_header import head_label, head_tooltip
from piwork.gui.chat.chat_model import ChatModel, RowRole
from piwork.gui.chat.code_copy import CopyButtons
from piwork.gui.chat.row_documents import IMAGE_MAX_HEIGHT, RowDocuments
from piwork.gui.chat.rows import ChatRow, RowKind, body_shown
from piwork.gui.chat.text_selection import selection_format
from piwork.gui.chat.tool_views import Badge, CardAction, view_for
from piwork.gui.inert_text import plain_tip
from piwork.gui.theme import Theme, load_theme

if TYPE_CHECKING:
    from piwork.gui.chat.tool_card import ToolCard

MARGIN_X = 10
MARGIN_Y = 4
PAD = 8
STREAM_ROOM_MIN = 60  # px kept ahead of a streaming row's text
IMAGE_ESTIMATE = IMAGE_MAX_HEIGHT + 4  # a row's thumbnails and the gap above them
COLLAPSED_TOOL_LINES = 9  # about what a closed tool card shows of its output
MEASURE_BUDGET_S = 0.008  # GUI-thread time per event-loop turn for measuring estimated rows exactly
AHEAD_BUDGET_S = 0.004  # the same, for estimating the rows behind "show earlier" ahead (idle work)

STATUS_GLYPHS = {
    "preparing": ("…", "running"),
    "pending": ("○", "running"),
    "running": ("◐", "running"),
    "done": ("✓", "ok"),
    "error": ("✗", "fail"),
    "aborted": ("■", "fail"),
}

Index = QModelIndex | QPersistentModelIndex


@dataclass
class RowGeometry:
    card: QRect
    header: QRect
    body: QRect
    badges: list[tuple[QRect, Badge]]  # a tool card's badges, right to left
    images: list[QRect]
    head: QRect = field(default_factory=QRect)  # an answer's model and time, above its first row
    mark: QRect = field(default_factory=QRect)  # an incomplete answer's note, below its last row

    @property
    def badge(self) -> QRect:
        """The rightmost badge (a null rect when there is none)."""
        return self.badges[0][0] if self.badges else QRect()


def format_duration(seconds: float | None) -> str:
    if seconds is None:
        return ""
    if seconds < 1:
        return f"{int(seconds * 1000)} ms"
    if seconds < 60:
        return f"{seconds:.1f} s"
    return f"{int(seconds // 60)} min {int(seconds % 60)} s"


class ChatDelegate(QStyledItemDelegate):
    toggleRequested = Signal(object)  # ChatRow
    openLogRequested = Signal(str)  # full output path
    approvalAnswered = Signal(object, str)  # ToolCard waiting for approval, CardAction value
    showEarlierRequested = Signal()
    rowRendered = Signal(int)  # row key whose final document replaced the plain placeholder
    heightsSettled = Signal()  # rows laid out with estimated heights now have exact ones

    def __init__(self, view: QAbstractItemView, theme: Theme | None = None) -> None:
        super().__init__(view)
        self._view = view
        self.theme = theme or load_theme("light")
        self.documents = RowDocuments(view, self.theme)
        self.documents.rendered.connect(self._on_rendered)
        self._heights: dict[int, tuple[int, int, int]] = {}  # key -> (revision, width, height)
        self._estimates: dict[int, tuple[int, int, int]] = {}  # the same, for heights only estimated
        self._font_metrics: tuple[int, int, int] | None = None
        self._unmeasured: dict[int, ChatRow] = {}  # rows laid out with an estimate, in the order met
        self._measurer = QTimer(self)
        self._measurer.setSingleShot(True)
        self._measurer.setInterval(0)
        self._measurer.timeout.connect(self._measure_some)
        # Rows behind "show earlier" get their estimates ahead, on idle turns once the shown rows are all
        # measured: revealing a thousand of them at once then costs the layout pass a lookup each.
        self._ahead: dict[int, tuple[int, int, int]] = {}  # key -> (revision, width, estimated height)
        self._ahead_next: int | None = None  # position of the next hidden row to estimate (None: newest)
        self._ahead_width = 0  # the viewport width the estimates ahead are for
        self._estimator = QTimer(self)
        self._estimator.setSingleShot(True)
        self._estimator.setInterval(0)
        self._estimator.timeout.connect(self._estimate_ahead)
        # The characters of a row's body the view's text selection covers, given the row and its length.
        self.selected_span: Callable[[ChatRow, int], tuple[int, int] | None] = lambda _row, _length: None
        self._meta_height: int | None = None  # of an answer's head or incomplete-note line
        self.copy_buttons = CopyButtons(view, self)

    def set_theme(self, theme: Theme) -> None:
        self.theme = theme
        self.documents.set_theme(theme)
        self._heights.clear()
        self._estimates.clear()
        self._forget_ahead()
        self._font_metrics = None
        self._meta_height = None

    # ---- geometry ----------------------------------------------------------------------------

    def _content_width(self) -> int:
        return max(120, self._view.viewport().width() - 2 * MARGIN_X - 2 * PAD)

    def _header_height(self, row: ChatRow) -> int:
        if row.kind in (RowKind.TEXT,):
            return 0
        return QFontMetrics(self._view.font()).height() + 6

    def _meta_lines(self, row: ChatRow) -> tuple[int, int]:
        """Heights of the answer's head line above the row and its incomplete note below (0: none)."""
        if row.head is None and row.mark is None:
            return 0, 0
        if self._meta_height is None:
            self._meta_height = QFontMetrics(self.small_font()).height() + 6
        return (self._meta_height if row.head else 0), (self._meta_height if row.mark else 0)

    def _has_body(self, row: ChatRow) -> bool:
        return body_shown(row)

    def geometry(self, row: ChatRow, rect: QRect) -> RowGeometry:
        head_h, mark_h = self._meta_lines(row)
        card = rect.adjusted(MARGIN_X, MARGIN_Y + head_h, -MARGIN_X, -MARGIN_Y - mark_h)
        header_h = self._header_height(row)
        header = QRect(card.left() + PAD, card.top() + PAD // 2, card.width() - 2 * PAD, header_h)
        body_top = header.bottom() + 1 + PAD // 2
        body_h = self._doc(row).size().height() if self._has_body(row) else 0
        body = QRect(card.left() + PAD, body_top, card.width() - 2 * PAD, int(body_h))
        badges = []
        if row.tool is not None:
            fm = QFontMetrics(self._small_font())
            right = header.right() - 90  # the duration's room
            for badge in view_for(row.tool.name).badges(row.tool):
                w = fm.horizontalAdvance(badge.text) + 12
                badges.append((QRect(right - w, header.top() + 2, w, header_h - 4), badge))
                right -= w + 6
        images = []
        x, y = body.left(), body.bottom() + 1 + (4 if body_h else 0)
        for pixmap in self._pixmaps_for(row):
            images.append(QRect(x, y, pixmap.width(), pixmap.height()))
            x += pixmap.width() + 6
        head = QRect(card.left() + PAD, card.top() - head_h, card.width() - 2 * PAD, head_h)
        mark = QRect(card.left() + PAD, card.bottom() + 1, card.width() - 2 * PAD, mark_h)
        return RowGeometry(card, header, body, badges, images, head, mark)

    def _height(self, row: ChatRow, width: int) -> int:
        cached = self._heights.get(row.key)
        if cached and cached[0] == row.revision and cached[1] == width:
            return cached[2]
        geo = self.geometry(row, QRect(0, 0, width, 10_000))
        bottom = geo.body.bottom() if geo.body.height() else geo.header.bottom()
        if geo.images:
            bottom = max(r.bottom() for r in geo.images)
        height = bottom + PAD // 2 + MARGIN_Y + (PAD // 2 if row.kind is not RowKind.TEXT else 0)
        height += geo.mark.height()
        if row.streaming and cached and cached[1] == width:
            # A growing row keeps some room ahead, so the view re-lays out every few flushes, not each one.
            if height <= cached[2]:
                height = cached[2]
            else:
                room = min(
                    max(STREAM_ROOM_MIN, height // 5),
                    max(STREAM_ROOM_MIN, self._view.viewport().height() // 4),
                )
                height += room
        self._heights[row.key] = (row.revision, width, height)
        return height

    def laid_out_height(self, row: ChatRow) -> int | None:
        """The height last handed to the view for ``row`` (None when it was never sized)."""
        estimate = self._estimates.get(row.key)  # dropped whenever an exact height is handed out
        if estimate:
            return estimate[2]
        cached = self._heights.get(row.key)
        return cached[2] if cached else None

    def exact_height(self, row: ChatRow) -> int:
        """``row``'s exact height at the view's current width (laid out now if it was only estimated); the
        view's next layout pass uses it."""
        self._estimates.pop(row.key, None)
        self._unmeasured.pop(row.key, None)
        return self._height(row, self._view.viewport().width())

    def forget_estimates(self) -> None:
        """The rows were replaced: stop measuring the old ones."""
        self._estimates.clear()
        self._unmeasured.clear()
        self._measurer.stop()
        self._forget_ahead()

    def rows_prepended(self, count: int) -> None:
        """``count`` rows came before the hidden ones: the estimates ahead go on through them too."""
        if self._ahead_next is not None:
            self._ahead_next += count  # the same row's position now
            self._estimator.start()

    def _forget_ahead(self) -> None:
        self._ahead.clear()
        self._ahead_next = None
        self._estimator.stop()

    def measured(self, row: ChatRow, width: int) -> bool:
        cached = self._heights.get(row.key)
        return bool(cached and cached[0] == row.revision and cached[1] == width)

    def sizeHint(self, option: QStyleOptionViewItem, index: Index) -> QSize:
        # Called for every row on each layout pass: read the row straight from the chat model.
        model = index.model()
        row = model.row_at(index.row()) if isinstance(model, ChatModel) else index.data(RowRole)
        if not isinstance(row, ChatRow):
            return QSize(0, 0)
        width = self._view.viewport().width()
        cached = self._heights.get(row.key)
        if cached is not None and cached[0] == row.revision and cached[1] == width and not row.streaming:
            return QSize(width, cached[2])  # measured (an estimate is dropped when its row is measured)
        if row.streaming or row.kind is RowKind.MORE:
            self._estimates.pop(row.key, None)
            return QSize(width, self._height(row, width))
        return QSize(width, self._estimated_height(row, width))

    # ---- estimates ---------------------------------------------------------------------------

    def _estimated_height(self, row: ChatRow, width: int) -> int:
        """A height from the row's text length alone, remembered; the row is queued to be measured."""
        cached = self._estimates.get(row.key)
        if cached and cached[0] == row.revision and cached[1] == width:
            height = cached[2]
        else:
            ahead = self._ahead.pop(row.key, None)
            fresh = ahead is not None and ahead[0] == row.revision and ahead[1] == width
            height = ahead[2] if ahead is not None and fresh else self._estimate(row, width)
            self._estimates[row.key] = (row.revision, width, height)
        if not self._unmeasured:  # the first row queued starts the measuring (it runs until none is left)
            self._measurer.start()
        self._unmeasured[row.key] = row
        return height

    def _metrics(self) -> tuple[int, int, int]:
        """(header height, average character width, line spacing) of the view's font, for estimates."""
        if self._font_metrics is None:
            fm = QFontMetrics(self._view.font())
            self._font_metrics = (fm.height() + 6, max(1, fm.averageCharWidth()), fm.lineSpacing())
        return self._font_metrics

    def _estimate(self, row: ChatRow, width: int) -> int:
        # Runs for every row a layout pass meets unmeasured (all the rows "show earlier" reveals at
        # once): kept to plain arithmetic on the row's fields.
        header_height, char_width, line_spacing = self._metrics()
        text_row = row.kind is RowKind.TEXT
        head, mark = self._meta_lines(row)
        height = 2 * MARGIN_Y + PAD + head + mark + (0 if text_row else header_height + PAD)
        tool = row.tool
        if body_shown(row):
            per_line = max(1, (width - 2 * MARGIN_X - 2 * PAD) // char_width)
            if tool is not None and row.collapsed:  # only its first lines show: count no further
                shown = tool.result_text[: COLLAPSED_TOOL_LINES * per_line]
                lines = min(wrapped_lines(shown, per_line), COLLAPSED_TOOL_LINES)
            else:
                lines = wrapped_lines(tool.result_text if tool is not None else row.text, per_line)
            height += lines * line_spacing
        return height + (IMAGE_ESTIMATE if row.images else 0)

    def pending_rows(self) -> int:
        """Rows laid out with an estimate and not measured yet."""
        return len(self._unmeasured)

    def _measure_some(self) -> None:
        """Measure estimated rows exactly for a few milliseconds: the rows on screen first, then from the
        newest up (the conversation is read from its end); ``heightsSettled`` once all are measured, or
        at once when rows on screen changed."""
        width = self._view.viewport().width()
        deadline = time.perf_counter() + MEASURE_BUDGET_S
        on_screen = set(self._rows_on_screen())
        order = [k for k in self._unmeasured if k in on_screen] + [
            k for k in reversed(self._unmeasured) if k not in on_screen
        ]
        changed_on_screen = False
        for key in order:
            row = self._unmeasured.pop(key)
            estimate = self._estimates.pop(key, None)
            if estimate and estimate[0] == row.revision and estimate[1] == width:
                exact = self._height(row, width)
                changed_on_screen |= key in on_screen and exact != estimate[2]
            if time.perf_counter() > deadline:
                break
        if self._unmeasured:
            self._measurer.start()
        else:
            self._estimator.start()
        if changed_on_screen or not self._unmeasured:
            self.heightsSettled.emit()

    def estimating_ahead(self) -> bool:
        """Whether rows behind "show earlier" still wait for their estimates ahead."""
        width = self._view.viewport().width()
        return self._ahead_next is None or self._ahead_next >= 0 or self._ahead_width != width

    def estimated_ahead(self, row: ChatRow) -> bool:
        """Whether hidden ``row`` has its estimate at the view's current width already."""
        ahead = self._ahead.get(row.key)
        width = self._view.viewport().width()
        return ahead is not None and ahead[0] == row.revision and ahead[1] == width

    def _estimate_ahead(self) -> None:
        """Estimate the rows behind "show earlier" for a few milliseconds, from the newest hidden one up;
        stops when all are or shown rows wait to be measured (they come first)."""
        model = self._view.model()
        if not isinstance(model, ChatModel) or self._unmeasured:
            return
        width = self._view.viewport().width()
        if width != self._ahead_width:  # resized: the estimates made ahead are for another width
            self._ahead.clear()
            self._ahead_next = None
            self._ahead_width = width
        deadline = time.perf_counter() + AHEAD_BUDGET_S
        position = model.hidden_count - 1 if self._ahead_next is None else self._ahead_next
        position = min(position, model.hidden_count - 1)
        while position >= 0 and time.perf_counter() < deadline:
            for row in model.rows_between(max(0, position - 63), position):
                if row.key not in self._ahead and not self.measured(row, width):
                    self._ahead[row.key] = (row.revision, width, self._estimate(row, width))
            position -= 64
        self._ahead_next = position
        if position >= 0:
            self._estimator.start()

    def _rows_on_screen(self) -> list[int]:
        view = self._view
        model = view.model()
        if not isinstance(model, ChatModel) or not model.rowCount():
            return []
        top = view.indexAt(QPoint(1, 1))
        bottom = view.indexAt(QPoint(1, view.viewport().height() - 2))
        first = top.row() if top.isValid() else 0
        last = bottom.row() if bottom.isValid() else model.rowCount() - 1
        return [model.row_at(i).key for i in range(first, last + 1)]

    # ---- documents ---------------------------------------------------------------------------

    def _doc(self, row: ChatRow) -> QTextDocument:
        return self.documents.document(row, self._content_width())

    def body_document(self, row: ChatRow) -> QTextDocument | None:
        """The document ``row``'s body is painted from (None when it shows no body): text selections count
        their offsets in it."""
        return self._doc(row) if self._has_body(row) else None

    def _pixmaps_for(self, row: ChatRow) -> list[QPixmap]:
        return self.documents.pixmaps(row)

    def _on_rendered(self, key: int) -> None:
        self._heights.pop(key, None)
        self.rowRendered.emit(key)

    def _small_font(self) -> QFont:
        font = QFont(self._view.font())
        font.setPointSizeF(max(6.0, font.pointSizeF() * 0.85))
        return font

    def small_font(self) -> QFont:
        return self._small_font()

    # ---- painting ----------------------------------------------------------------------------

    def _background(self, row: ChatRow, palette: QPalette) -> QColor | None:
        if row.kind is RowKind.USER:
            return self.theme.accent("user")
        if row.kind is RowKind.TOOL:
            return self.theme.accent("tool")
        if row.kind is RowKind.ERROR:
            return self.theme.accent("error")
        if row.kind in (RowKind.NOTICE, RowKind.SKILL):
            return self.theme.accent("notice")
        if row.kind is RowKind.MORE:
            return palette.color(QPalette.ColorRole.AlternateBase)
        return None

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        row = index.data(RowRole)
        if not isinstance(row, ChatRow):
            return
        palette = option.palette
        rect: QRect = option.rect
        geo = self.geometry(row, rect)
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        background = self._background(row, palette)
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        if background is not None:
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(background)
            painter.drawRoundedRect(geo.card, 8, 8)
        if selected:
            painter.setPen(palette.color(QPalette.ColorRole.Highlight))
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawRoundedRect(geo.card.adjusted(0, 0, -1, -1), 8, 8)
        self._paint_header(painter, row, geo, palette)
        if geo.body.height():
            self._paint_doc(painter, row, geo.body.topLeft(), palette)
        for pixmap, target in zip(self._pixmaps_for(row), geo.images, strict=False):
            painter.drawPixmap(target.topLeft(), pixmap)
        self._paint_meta(painter, row, geo, palette)
        self.copy_buttons.paint(painter, row, rect, palette)
        painter.restore()

    def _paint_meta(self, painter: QPainter, row: ChatRow, geo: RowGeometry, palette: QPalette) -> None:
        """An answer's head line (model · time) and an incomplete answer's note: small, in the muted text
        colour, one line each."""
        if row.head is None and row.mark is None:
            return
        font = self._small_font()
        fm = QFontMetrics(font)
        muted = palette.color(QPalette.ColorRole.PlaceholderText)
        painter.setFont(font)
        align = Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft
        if row.head is not None and geo.head.height():
            painter.setPen(muted)
            label = fm.elidedText(head_label(row.head), Qt.TextElideMode.ElideRight, geo.head.width())
            painter.drawText(geo.head.adjusted(0, 2, 0, 0), align, label)
        if row.mark is not None and geo.mark.height():
            note, hint = row.mark.note, row.mark.hint
            bold = QFont(font)
            bold.setBold(True)
            painter.setFont(bold)
            painter.setPen(self.theme.accent("badge"))
            note_rect = geo.mark.adjusted(0, 0, 0, -2)
            painter.drawText(
                note_rect, align, fm.elidedText(note, Qt.TextElideMode.ElideRight, note_rect.width())
            )
            if hint:
                offset = QFontMetrics(bold).horizontalAdvance(note)
                rest = note_rect.adjusted(offset, 0, 0, 0)
                painter.setFont(font)
                painter.setPen(muted)
                text = fm.elidedText(f" — {hint}", Qt.TextElideMode.ElideRight, max(0, rest.width()))
                painter.drawText(rest, align, text)

    def _paint_doc(self, painter: QPainter, row: ChatRow, origin: QPoint, palette: QPalette) -> None:
        doc = self._doc(row)
        painter.save()
        # Only the part of a (possibly very tall) row that is on screen is drawn.
        visible = self._view.viewport().rect().translated(-origin)
        painter.translate(origin)
        painter.setClipRect(visible)
        context = QAbstractTextDocumentLayout.PaintContext()
        context.clip = QRectF(visible)
        text_color = palette.color(QPalette.ColorRole.Text)
        if row.kind is RowKind.THINKING:
            text_color = self.theme.accent("thinking")
        context.palette.setColor(QPalette.ColorRole.Text, text_color)
        span = self.selected_span(row, max(0, doc.characterCount() - 1))
        if span is not None:
            context.selections = [selection_format(doc, span, palette)]
        doc.documentLayout().draw(painter, context)
        painter.restore()

    def _paint_header(self, painter: QPainter, row: ChatRow, geo: RowGeometry, palette: QPalette) -> None:
        if not geo.header.height():
            return
        header = geo.header
        text_color = palette.color(QPalette.ColorRole.Text)
        painter.setFont(self._view.font())
        if row.kind is RowKind.USER:
            label = "You"
        elif row.kind is RowKind.MORE:
            model = self._view.model()
            label = model.more_label() if isinstance(model, ChatModel) else "Show earlier messages"
        elif row.kind is RowKind.THINKING:
            arrow = "▸" if row.collapsed else "▾"
            first = row.text.strip().splitlines()[0] if row.text.strip() else ""
            label = f"{arrow} Thinking" + (f" — {first}" if row.collapsed and first else "")
            text_color = self.theme.accent("thinking")
        elif row.kind is RowKind.SKILL:
            label = skill_title(row)
        elif row.kind is RowKind.TOOL and row.tool is not None:
            self._paint_tool_header(painter, row, row.tool, geo, palette)
            return
        else:
            label = row.title or str(row.kind).capitalize()
            if row.kind is RowKind.ERROR:
                text_color = self.theme.accent("fail")
            if row.kind is RowKind.NOTICE and len(row.text) > 400:
                label = ("▸ " if row.collapsed else "▾ ") + label
        bold = QFont(self._view.font())
        bold.setBold(row.kind in (RowKind.USER, RowKind.ERROR, RowKind.NOTICE, RowKind.SKILL))
        painter.setFont(bold)
        painter.setPen(text_color)
        elided = QFontMetrics(bold).elidedText(label, Qt.TextElideMode.ElideRight, header.width())
        painter.drawText(header, Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft, elided)

    def _paint_tool_header(
        self, painter: QPainter, row: ChatRow, card: ToolCard, geo: RowGeometry, palette: QPalette
    ) -> None:
        """Status glyph, name, summary line, badges and duration, as the tool's view words them."""
        view = view_for(card.name)
        header = geo.header
        glyph, colour_key = STATUS_GLYPHS.get(card.status, ("?", "running"))
        painter.setPen(self.theme.accent(colour_key))
        painter.drawText(header, Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft, glyph)
        header = header.adjusted(QFontMetrics(self._view.font()).horizontalAdvance(glyph) + 6, 0, 0, 0)
        duration = format_duration(card.duration)
        if duration:
            painter.setPen(palette.color(QPalette.ColorRole.PlaceholderText))
            painter.setFont(self._small_font())
            painter.drawText(header, Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignRight, duration)
        for rect, badge in geo.badges:
            self._paint_badge(painter, rect, badge.text, badge.primary)
        bold = QFont(self._view.font())
        bold.setBold(True)
        painter.setFont(bold)
        painter.setPen(palette.color(QPalette.ColorRole.Text))
        name = view.title(card, row.title, row.collapsed)
        painter.drawText(header, Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft, name)
        painter.setFont(self._view.font())
        painter.setPen(palette.color(QPalette.ColorRole.PlaceholderText))
        args_rect, summary = self._tool_summary(row, card, geo)
        painter.drawText(args_rect, Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft, summary)

    def _tool_summary(self, row: ChatRow, card: ToolCard, geo: RowGeometry) -> tuple[QRect, str]:
        """Where a tool header's summary line goes (after the glyph and name, before the badges and the
        duration) and its text, elided to fit."""
        view = view_for(card.name)
        header, right = geo.header, geo.header.right()
        fm = QFontMetrics(self._view.font())
        glyph = STATUS_GLYPHS.get(card.status, ("?", "running"))[0]
        if format_duration(card.duration):
            right -= 90
        for rect, _badge in geo.badges:
            right = rect.left() - 6
        bold = QFont(self._view.font())
        bold.setBold(True)
        left = header.left() + fm.horizontalAdvance(glyph) + 6
        left += QFontMetrics(bold).horizontalAdvance(view.title(card, row.title, row.collapsed)) + 8
        args_rect = QRect(left, header.top(), max(0, right - left), header.height())
        summary = fm.elidedText(
            view.summary(card).replace("\n", " "), Qt.TextElideMode.ElideRight, args_rect.width()
        )
        return args_rect, summary

    def tool_summary_span(self, row: ChatRow, geo: RowGeometry) -> tuple[int, int]:
        """(x where a tool header's summary text ends, x its room ends): a copy button goes after it."""
        if row.tool is None:
            return geo.header.right(), geo.header.right()
        args_rect, summary = self._tool_summary(row, row.tool, geo)
        end = args_rect.left() + QFontMetrics(self._view.font()).horizontalAdvance(summary)
        return end, args_rect.right()

    def _paint_badge(self, painter: QPainter, rect: QRect, text: str, primary: bool = False) -> None:
        painter.save()
        colour = self.theme.accent("running" if primary else "badge")
        painter.setPen(colour)
        painter.setBrush(colour if primary else Qt.BrushStyle.NoBrush)
        painter.drawRoundedRect(rect, 6, 6)
        painter.setFont(self._small_font())
        if primary:
            painter.setPen(QColor("#ffffff"))
        painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, text)
        painter.restore()

    def helpEvent(
        self, event: QHelpEvent, view: QAbstractItemView, option: QStyleOptionViewItem, index: Index
    ) -> bool:
        """Over an answer's head line: the provider, the model and the full date and time."""
        row = index.data(RowRole)
        head = row.head if isinstance(row, ChatRow) else None
        tip = event.type() == QEvent.Type.ToolTip
        if head is not None and tip and self.geometry(row, option.rect).head.contains(event.pos()):
            QToolTip.showText(event.globalPos(), plain_tip(head_tooltip(head)), view)
            return True
        return super().helpEvent(event, view, option, index)

    # ---- clicks ------------------------------------------------------------------------------

    def editorEvent(self, event: QEvent, model: object, option: QStyleOptionViewItem, index: Index) -> bool:
        if event.type() != QEvent.Type.MouseButtonRelease or not isinstance(event, QMouseEvent):
            return False
        if event.button() != Qt.MouseButton.LeftButton:
            return False
        row = index.data(RowRole)
        if not isinstance(row, ChatRow):
            return False
        return self.click(row, option.rect, event.position().toPoint())

    def click(self, row: ChatRow, rect: QRect, pos: QPoint) -> bool:
        """Act on a click at ``pos`` inside ``rect`` (the row's rect); True when it did something."""
        if row.kind is RowKind.MORE:
            self.showEarlierRequested.emit()
            return True
        geo = self.geometry(row, rect)
        for badge_rect, badge in geo.badges:
            if badge_rect.contains(pos) and row.tool is not None and badge.action is not None:
                self.act(badge.action, row.tool)
                return True
        toggles = row.kind in (RowKind.THINKING, RowKind.TOOL, RowKind.SKILL) or (
            row.kind is RowKind.NOTICE and len(row.text) > 400
        )
        if toggles and geo.header.contains(pos):
            self.toggleRequested.emit(row)
            return True
        return False

    def act(self, action: CardAction, card: ToolCard) -> None:
        """Do what a tool card's badge or menu entry asks."""
        if action is CardAction.OPEN_LOG:
            self.openLogRequested.emit(card.full_output_path or "")
        elif card.approval is not None:  # Approve, Deny…, Always allow…
            self.approvalAnswered.emit(card, action.value)


def skill_title(row: ChatRow) -> str:
    """A skill card's header: the arrow, the skill's name and the file it came from."""
    return ("▸ " if row.collapsed else "▾ ") + f"Skill: {row.title} — {row.hint}"


def tool_title(row: ChatRow) -> str:
    """A tool card's name, with the arrow that says it opens (▸) or closes (▾) on a click."""
    assert row.tool is not None
    return view_for(row.tool.name).title(row.tool, row.title, row.collapsed)


def forget_row_caches(delegate: QObject, row: ChatRow) -> None:
    if isinstance(delegate, ChatDelegate):
        delegate.documents.forget(row)
        delegate._heights.pop(row.key, None)
        delegate._estimates.pop(row.key, None)
        delegate._ahead.pop(row.key, None)


def wrapped_lines(text: str, per_line: int) -> int:
    """How many lines ``text`` takes when each of its lines wraps every ``per_line`` characters (an empty
    line takes one). Counted without a pass in Python over the short lines: this runs for every row an
    estimate lays out."""
    parts = text.split("\n")
    if len(text) <= per_line:
        return len(parts)
    return len(parts) + sum((n - 1) // per_line for n in map(len, parts) if n > per_line)
