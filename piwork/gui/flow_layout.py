"""A layout that places its items in a row and wraps them onto further rows when the row is too narrow.

For toolbars and button rows inside docks: a narrow dock shows every control on two or three rows instead
of cutting the last ones off (or making the whole panel scroll sideways). On each row, the room left over
goes to the items that expand horizontally (a search field, a stretch), so a wide row looks like a box
layout's row.
"""

from __future__ import annotations

from PySide6.QtCore import QMargins, QRect, QSize, Qt
from PySide6.QtWidgets import QLayout, QLayoutItem, QSizePolicy, QSpacerItem, QWidget, QWidgetItem


class FlowLayout(QLayout):
    def __init__(self, parent: QWidget | None = None, spacing: int = 6) -> None:
        super().__init__(parent)
        self._items: list[QLayoutItem] = []
        self.setSpacing(spacing)

    # ---- items -----------------------------------------------------------------------------

    def addItem(self, item: QLayoutItem) -> None:
        self._items.append(item)
        self.invalidate()

    def addWidget(self, widget: QWidget, stretch: int = 0) -> None:
        """Add ``widget``; a non-zero ``stretch`` lets it take the room left on its row."""
        self.addChildWidget(widget)
        item = QWidgetItem(widget)
        if stretch:
            policy = widget.sizePolicy()
            policy.setHorizontalPolicy(QSizePolicy.Policy.Expanding)
            widget.setSizePolicy(policy)
        self.addItem(item)

    def addStretch(self, _stretch: int = 1) -> None:
        """Room that pushes the items after it to the right end of their row."""
        self.addItem(QSpacerItem(0, 0, QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Minimum))

    def count(self) -> int:
        return len(self._items)

    def itemAt(self, index: int) -> QLayoutItem | None:
        return self._items[index] if 0 <= index < len(self._items) else None

    def takeAt(self, index: int) -> QLayoutItem | None:
        if not 0 <= index < len(self._items):
            return None
        item = self._items.pop(index)
        self.invalidate()
        return item

    # ---- sizes -----------------------------------------------------------------------------

    def expandingDirections(self) -> Qt.Orientation:
        return Qt.Orientation(0)

    def hasHeightForWidth(self) -> bool:
        return True

    def heightForWidth(self, width: int) -> int:
        return self._arrange(QRect(0, 0, width, 0), move=False)

    def sizeHint(self) -> QSize:
        """Everything on one row."""
        shown = self._shown()
        width = sum(i.sizeHint().width() for i in shown) + self.spacing() * max(0, len(shown) - 1)
        height = max((i.sizeHint().height() for i in shown), default=0)
        return self._with_margins(QSize(width, height))

    def minimumSize(self) -> QSize:
        """As narrow as the widest single item (every item on a row of its own)."""
        size = QSize()
        for item in self._shown():
            size = size.expandedTo(item.minimumSize())
        return self._with_margins(size)

    def setGeometry(self, rect: QRect) -> None:
        super().setGeometry(rect)
        self._arrange(rect, move=True)

    # ---- placing ---------------------------------------------------------------------------

    def _shown(self) -> list[QLayoutItem]:
        return [i for i in self._items if not i.isEmpty() or isinstance(i, QSpacerItem)]

    def _with_margins(self, size: QSize) -> QSize:
        margins: QMargins = self.contentsMargins()
        return QSize(
            size.width() + margins.left() + margins.right(), size.height() + margins.top() + margins.bottom()
        )

    def _rows(self, width: int) -> list[list[QLayoutItem]]:
        rows: list[list[QLayoutItem]] = [[]]
        used = 0
        for item in self._shown():
            wanted = item.sizeHint().width()
            if rows[-1] and used + self.spacing() + wanted > width:
                rows.append([])
                used = 0
            used += (self.spacing() if rows[-1] else 0) + wanted
            rows[-1].append(item)
        return [row for row in rows if row]

    def _arrange(self, rect: QRect, move: bool) -> int:
        """Lay the items out in ``rect`` (only measure unless ``move``); returns the height used."""
        margins = self.contentsMargins()
        area = rect.adjusted(margins.left(), margins.top(), -margins.right(), -margins.bottom())
        y = area.y()
        for row in self._rows(area.width()):
            widths = self._widths(row, area.width())
            heights = [_height(item, width) for item, width in zip(row, widths, strict=True)]
            height = max(heights)
            if move:
                x = area.x()
                for item, width, item_height in zip(row, widths, heights, strict=True):
                    if item.expandingDirections() & Qt.Orientation.Vertical:
                        item_height = height
                    item.setGeometry(QRect(x, y + (height - item_height) // 2, width, item_height))
                    x += width + self.spacing()
            y += height + self.spacing()
        used = y - self.spacing() - area.y() if y > area.y() else 0
        return used + margins.top() + margins.bottom()

    def _widths(self, row: list[QLayoutItem], width: int) -> list[int]:
        """Each item's width on its row: its wish (at most the row), plus a share of the room left over
        for the items that expand."""
        widths = [min(item.sizeHint().width(), width) for item in row]
        spare = width - sum(widths) - self.spacing() * (len(row) - 1)
        growing = [n for n, item in enumerate(row) if item.expandingDirections() & Qt.Orientation.Horizontal]
        for n in growing:
            widths[n] += spare // len(growing) if spare > 0 else 0
        return widths


def _height(item: QLayoutItem, width: int) -> int:
    """The height ``item`` needs at ``width`` (more than its wish when it wraps, as a nested flow does)."""
    if item.hasHeightForWidth():
        return max(item.heightForWidth(width), item.minimumSize().height())
    return max(item.sizeHint().height(), item.minimumSize().height())
