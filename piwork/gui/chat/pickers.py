"""Model and thinking-level pickers (combo boxes) shown under the composer."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QPaintEvent, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import QComboBox, QStyle, QStyleOptionComboBox, QStylePainter, QWidget

from piwork.core.vocabulary import THINKING_LEVELS
from piwork.gui.inert_text import plain_tip
from piwork.gui.key_status import CHECKING_TEXT

if TYPE_CHECKING:
    from piwork.core.llm import Model

ModelKey = tuple[str, str]  # (provider, model id)


class ModelPicker(QComboBox):
    """Lists models as "name — provider". Models that cannot answer (no API key) are listed, greyed out and
    not selectable, with the reason beside them and in their tooltip; so are, for a moment, models whose
    key the keyring is still being asked about."""

    modelPicked = Signal(str, str)  # provider, model id

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("modelPicker")
        self.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        # Wide enough for most names without widening the window; the open list shows whole names.
        self.setMinimumContentsLength(16)
        self.setToolTip("Model for the next message (Ctrl+M)")
        self.setAccessibleName("Model")
        self.setAccessibleDescription("The model that answers the next message. Ctrl+M opens the list.")
        self._updating = False
        self.activated.connect(self._on_activated)
        # the closed box may elide a long name: its tooltip has the whole of it
        self.currentIndexChanged.connect(
            lambda _i: self.setToolTip(
                plain_tip(f"{self.currentText()}\nModel for the next message (Ctrl+M)")
            )
        )
        self.set_models([], set())

    def show_checking(self) -> None:
        """Before the models are read (the window's first frame, its session's parts still loading): what
        the box says while the keyring has not answered, as it says once they are read."""
        self._updating = True
        self.clear()
        self.addItem(CHECKING_TEXT, None)
        self._disable(0, "Pick a model that has a key, or add one in Settings → Providers (Ctrl+,).")
        self.setEnabled(True)
        self._updating = False

    def set_models(
        self,
        models: Sequence[Model],
        available: set[ModelKey],
        current: ModelKey | None = None,
        provider_names: Mapping[str, str] | None = None,
        checking: set[ModelKey] | frozenset[ModelKey] = frozenset(),
    ) -> None:
        """``provider_names``: display names of providers (models.json ``name``), shown instead of their ids.
        ``checking``: models whose provider's key the keyring has not answered about yet (shown greyed,
        as being checked — not as lacking a key)."""
        names = provider_names or {}
        self._updating = True
        self.clear()
        if not models:
            self.addItem("No models configured", None)
            self.setEnabled(False)
            self._updating = False
            return
        self.setEnabled(True)
        if current is None or (current not in available and current not in checking):
            # short: the box is narrow
            text = "Choose a model…" if available else (CHECKING_TEXT if checking else "Set up a model…")
            self.addItem(text, None)
            self._disable(0, "Pick a model that has a key, or add one in Settings → Providers (Ctrl+,).")
        from piwork.core.llm import env_vars_for

        usable = [m for m in models if (m.provider, m.id) in available]
        items: list[QStandardItem] = []
        for model in usable + [m for m in models if (m.provider, m.id) not in available]:
            key = (model.provider, model.id)
            label = f"{model.name or model.id} — {names.get(model.provider, model.provider)}"
            tip = f"{model.provider}/{model.id}"
            if key in checking:
                label += "  (checking key…)"
                tip += ": checking whether its provider has a key (the system keyring has not answered yet)."
            elif key not in available:
                label += "  (no API key)"
                variables = " or ".join(env_vars_for(model.provider))
                tip += f": cannot answer, no API key. Add one in Settings → Providers or set {variables}."
            item = QStandardItem(label)
            item.setData(key, Qt.ItemDataRole.UserRole)
            item.setToolTip(plain_tip(tip))
            item.setEnabled(key in available)
            items.append(item)
        store = self.model()
        if isinstance(store, QStandardItemModel):
            store.invisibleRootItem().appendRows(items)  # in one go: the box reacts once, not per model
        else:
            for item in items:
                self.addItem(item.text(), item.data(Qt.ItemDataRole.UserRole))
        if current is not None and current in available:
            self.select(current)
        elif current is not None and current in checking:  # shown (greyed) until its key is known
            self.setCurrentIndex(self.findData(current))
        else:
            self.setCurrentIndex(0)
        # the popup shows whole names: measured from the labels' text (asking the view to lay out every
        # row would take the GUI thread a long while with a long catalog)
        metrics = self.view().fontMetrics()
        widest = max((metrics.horizontalAdvance(self.itemText(i)) for i in range(self.count())), default=0)
        self.view().setMinimumWidth(widest + 3 * metrics.averageCharWidth() + 24)
        self._updating = False

    def paintEvent(self, event: QPaintEvent) -> None:
        """A long name is elided ("…") in the closed box rather than cut; the open list shows it whole."""
        painter = QStylePainter(self)
        option = QStyleOptionComboBox()
        self.initStyleOption(option)
        painter.drawComplexControl(QStyle.ComplexControl.CC_ComboBox, option)
        field = self.style().subControlRect(
            QStyle.ComplexControl.CC_ComboBox, option, QStyle.SubControl.SC_ComboBoxEditField, self
        )
        option.currentText = self.fontMetrics().elidedText(
            option.currentText, Qt.TextElideMode.ElideRight, field.width()
        )
        painter.drawControl(QStyle.ControlElement.CE_ComboBoxLabel, option)

    def _disable(self, row: int, tip: str | None = None) -> None:
        model = self.model()
        if isinstance(model, QStandardItemModel):
            item = model.item(row)
            if item is not None:
                item.setEnabled(False)
        if tip:
            self.setItemData(row, plain_tip(tip), Qt.ItemDataRole.ToolTipRole)

    def is_selectable(self, row: int) -> bool:
        model = self.model()
        item = model.item(row) if isinstance(model, QStandardItemModel) else None
        return item is not None and item.isEnabled()

    def select(self, key: ModelKey) -> None:
        for i in range(self.count()):
            if self.itemData(i) == key and self.is_selectable(i):
                self.setCurrentIndex(i)
                return

    def current_key(self) -> ModelKey | None:
        data = self.currentData()
        return tuple(data) if isinstance(data, tuple | list) else None

    def _on_activated(self, index: int) -> None:
        data = self.itemData(index)
        if not self._updating and isinstance(data, tuple | list):
            self.modelPicked.emit(str(data[0]), str(data[1]))


class ThinkingPicker(QComboBox):
    levelPicked = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("thinkingPicker")
        self.setToolTip("Thinking level (Ctrl+Shift+M cycles)")
        self.setAccessibleName("Thinking level")
        self.setAccessibleDescription("How much the model thinks before answering. Ctrl+Shift+M cycles.")
        for level in THINKING_LEVELS:
            self.addItem(f"thinking: {level}", level)
        self.activated.connect(lambda i: self.levelPicked.emit(str(self.itemData(i))))

    def select(self, level: str) -> None:
        index = self.findData(level)
        if index >= 0:
            self.setCurrentIndex(index)

    def explain_model(self, model: Model | None, default_source: str | None = None) -> None:
        """The tooltip says what the current model can do with the level, that the level shown is the one
        the next request uses, and where the default new sessions start at comes from (``default_source``,
        e.g. ``low, from this project's .pi/settings.json``)."""
        level = self.currentData()
        tip = (
            f"Thinking level of this session: {level}, the level its next request uses (Ctrl+Shift+M cycles)."
        )
        if model is not None and not model.reasoning:
            tip += f" {model.id} does not think: its level stays off."
        if default_source:
            tip += f"\nNew sessions here start at {default_source}."
        self.setToolTip(tip)
        self.setAccessibleDescription(f"How much the model thinks before answering. {tip}")

    def cycle(self) -> str:
        """Move to the next level (wrapping) and announce it."""
        index = (self.currentIndex() + 1) % self.count()
        self.setCurrentIndex(index)
        level = str(self.itemData(index))
        self.levelPicked.emit(level)
        return level


def thinking_clamp_text(model: Model | None, asked: str, effective: str) -> str:
    """Why a picked thinking level did not take: the model cannot think, or not that much."""
    name = model.id if model is not None else "This model"
    if effective == "off":
        return f"{name} does not think, so the thinking level stays off (asked: {asked})."
    return f"{name} thinks at most at {effective} (asked: {asked})."
