"""Model and thinking-level pickers (combo boxes) shown under the composer."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QComboBox, QWidget

from piwork.core.llm.types import THINKING_LEVELS, Model

ModelKey = tuple[str, str]  # (provider, model id)


class ModelPicker(QComboBox):
    """Lists models as "name — provider"; models without credentials are shown but marked."""

    modelPicked = Signal(str, str)  # provider, model id

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("modelPicker")
        self.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.setMinimumContentsLength(30)  # "Claude Sonnet 4.5 — anthropic" reads in full
        self.setToolTip("Model for the next message (Ctrl+M)")
        self._updating = False
        self.activated.connect(self._on_activated)
        self.set_models([], set())

    def set_models(
        self, models: Sequence[Model], available: set[ModelKey], current: ModelKey | None = None
    ) -> None:
        self._updating = True
        self.clear()
        if not models:
            self.addItem("No models configured", None)
            self.setEnabled(False)
            self._updating = False
            return
        self.setEnabled(True)
        for model in models:
            key = (model.provider, model.id)
            label = f"{model.name or model.id} — {model.provider}"
            if key not in available:
                label += "  (no API key)"
            self.addItem(label, key)
            self.setItemData(self.count() - 1, f"{model.provider}/{model.id}", Qt.ItemDataRole.ToolTipRole)
        if current is not None:
            self.select(current)
        self.view().setMinimumWidth(self.view().sizeHintForColumn(0) + 24)  # the popup shows whole names
        self._updating = False

    def select(self, key: ModelKey) -> None:
        for i in range(self.count()):
            if self.itemData(i) == key:
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
        for level in THINKING_LEVELS:
            self.addItem(f"thinking: {level}", level)
        self.activated.connect(lambda i: self.levelPicked.emit(str(self.itemData(i))))

    def select(self, level: str) -> None:
        index = self.findData(level)
        if index >= 0:
            self.setCurrentIndex(index)

    def cycle(self) -> str:
        """Move to the next level (wrapping) and announce it."""
        index = (self.currentIndex() + 1) % self.count()
        self.setCurrentIndex(index)
        level = str(self.itemData(index))
        self.levelPicked.emit(level)
        return level
