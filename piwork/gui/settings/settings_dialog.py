"""Settings dialog: provider keys, default model, compaction and branch summaries, project trust default.

Values are written with the engine's settings writer into the global settings.json (Pi's file), one key at a
time, so everything else in the file is kept.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QSpinBox,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from piwork.core.llm.credentials import CredentialStore
from piwork.core.llm.models import ModelRegistry
from piwork.core.settings import THINKING_LEVELS, Settings, SettingsWriteError
from piwork.gui.settings.providers_page import ProvidersPage

TRUST_CHOICES = (
    ("ask", "Ask for each new project"),
    ("always", "Always trust project resources"),
    ("never", "Never load project resources"),
)


def _spin(value: int, maximum: int, step: int) -> QSpinBox:
    spin = QSpinBox()
    spin.setRange(0, maximum)
    spin.setSingleStep(step)
    spin.setValue(value)
    spin.setGroupSeparatorShown(True)
    return spin


class SettingsDialog(QDialog):
    settingsSaved = Signal()

    def __init__(
        self,
        settings: Settings,
        credentials: CredentialStore,
        registry: ModelRegistry,
        agent_dir: Path,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Settings")
        self.setObjectName("settingsDialog")
        self.settings = settings
        self.registry = registry
        self.tabs = QTabWidget(self)
        self.providers_page = ProvidersPage(credentials, registry, agent_dir, self)
        self.tabs.addTab(self.providers_page, "Providers")
        self.tabs.addTab(self._model_page(), "Model")
        self.tabs.addTab(self._compaction_page(), "Compaction")
        self.tabs.addTab(self._trust_page(), "Trust")
        self.error = QLabel(self)
        self.error.setObjectName("settingsError")
        self.error.setWordWrap(True)
        problems = [f"{p.path or p.scope}: {p.message}" for p in settings.problems]
        self.error.setText("\n".join(problems))
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel, self
        )
        buttons.accepted.connect(self.save)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.tabs, 1)
        layout.addWidget(self.error)
        layout.addWidget(buttons)
        self.resize(640, 520)

    # ---- pages -------------------------------------------------------------------------------

    def _model_page(self) -> QWidget:
        page = QWidget(self)
        form = QFormLayout(page)
        self.default_model = QComboBox(page)
        self.default_model.setObjectName("defaultModel")
        self.default_model.addItem("Automatic (first provider with a key)", None)
        current = (self.settings.default_provider(), self.settings.default_model())
        for model in self.registry.models:
            if not model.api_supported:
                continue
            self.default_model.addItem(
                f"{model.name or model.id} — {model.provider}", (model.provider, model.id)
            )
            if (model.provider, model.id) == current:
                self.default_model.setCurrentIndex(self.default_model.count() - 1)
        self.default_thinking = QComboBox(page)
        self.default_thinking.setObjectName("defaultThinking")
        self.default_thinking.addItem("Not set (off)", None)
        for level in THINKING_LEVELS:
            self.default_thinking.addItem(level, level)
        index = self.default_thinking.findData(self.settings.default_thinking_level())
        self.default_thinking.setCurrentIndex(max(0, index))
        form.addRow("Default model", self.default_model)
        form.addRow("Default thinking level", self.default_thinking)
        return page

    def _compaction_page(self) -> QWidget:
        page = QWidget(self)
        form = QFormLayout(page)
        self.compaction_enabled = QCheckBox("Compact automatically when the context is nearly full", page)
        self.compaction_enabled.setChecked(self.settings.compaction_enabled())
        self.reserve_tokens = _spin(self.settings.compaction_reserve_tokens(), 1_000_000, 1024)
        self.keep_recent = _spin(self.settings.compaction_keep_recent_tokens(), 1_000_000, 1000)
        branch = self.settings.branch_summary_settings()
        self.branch_reserve = _spin(int(branch["reserveTokens"]), 1_000_000, 1024)
        self.skip_branch_prompt = QCheckBox(
            "Don't ask when moving in the tree: always move without a summary", page
        )
        self.skip_branch_prompt.setObjectName("skipBranchPrompt")
        self.skip_branch_prompt.setToolTip(
            "Set by “Don't ask again” in the dialog shown when you move to another point of the session tree."
        )
        self.skip_branch_prompt.setChecked(bool(branch["skipPrompt"]))
        form.addRow(self.compaction_enabled)
        form.addRow("Reserve tokens (room kept for the reply)", self.reserve_tokens)
        form.addRow("Keep recent tokens (not summarised)", self.keep_recent)
        form.addRow(QLabel("<b>Branch summaries</b>", page))
        form.addRow("Reserve tokens", self.branch_reserve)
        form.addRow(self.skip_branch_prompt)
        return page

    def _trust_page(self) -> QWidget:
        page = QWidget(self)
        form = QFormLayout(page)
        self.default_trust = QComboBox(page)
        self.default_trust.setObjectName("defaultTrust")
        for value, label in TRUST_CHOICES:
            self.default_trust.addItem(label, value)
        self.default_trust.setCurrentIndex(
            max(0, self.default_trust.findData(self.settings.default_project_trust()))
        )
        form.addRow("Project resources", self.default_trust)
        note = QLabel(
            "Decisions saved for a folder (Project → Trust…) win over this default. "
            "It is read from your global settings only, never from a project.",
            page,
        )
        note.setWordWrap(True)
        form.addRow(note)
        return page

    # ---- saving ------------------------------------------------------------------------------

    def changes(self) -> dict[str, Any]:
        """Keys whose value differs from the current settings (``None`` deletes the key)."""
        wanted: dict[str, Any] = {}
        model = self.default_model.currentData()
        wanted["defaultProvider"] = model[0] if model else None
        wanted["defaultModel"] = model[1] if model else None
        wanted["defaultThinkingLevel"] = self.default_thinking.currentData()
        wanted["compaction.enabled"] = self.compaction_enabled.isChecked()
        wanted["compaction.reserveTokens"] = self.reserve_tokens.value()
        wanted["compaction.keepRecentTokens"] = self.keep_recent.value()
        wanted["branchSummary.reserveTokens"] = self.branch_reserve.value()
        wanted["branchSummary.skipPrompt"] = self.skip_branch_prompt.isChecked()
        wanted["defaultProjectTrust"] = self.default_trust.currentData()
        current = {
            "defaultProvider": self.settings.default_provider(),
            "defaultModel": self.settings.default_model(),
            "defaultThinkingLevel": self.settings.default_thinking_level(),
            "compaction.enabled": self.settings.compaction_enabled(),
            "compaction.reserveTokens": self.settings.compaction_reserve_tokens(),
            "compaction.keepRecentTokens": self.settings.compaction_keep_recent_tokens(),
            "branchSummary.reserveTokens": self.settings.branch_summary_settings()["reserveTokens"],
            "branchSummary.skipPrompt": self.settings.branch_summary_settings()["skipPrompt"],
            "defaultProjectTrust": self.settings.default_project_trust(),
        }
        return {key: value for key, value in wanted.items() if current[key] != value}

    def save(self) -> None:
        try:
            for key, value in self.changes().items():
                self.settings.set_value(key, value, "global")
        except (SettingsWriteError, OSError) as err:
            self.error.setText(str(err))
            return
        self.settingsSaved.emit()
        self.accept()
