"""Settings dialog: provider keys, default model, compaction and branch summaries, project trust default.

Each field shows one declared setting (``piwork.core.settings_schema``: its bounds, choices and description)
read from the same typed settings the engine uses. Saving writes only the keys that changed, all at once,
with the engine's settings writer into the global settings.json (Pi's file); every other key is kept.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import shiboken6
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

from piwork.core.llm import ModelRegistry
from piwork.core.settings import Settings, SettingsWriteError
from piwork.core.settings_schema import (
    BRANCH_SUMMARY_RESERVE_TOKENS,
    BRANCH_SUMMARY_SKIP_PROMPT,
    COMPACTION_ENABLED,
    COMPACTION_KEEP_RECENT_TOKENS,
    COMPACTION_RESERVE_TOKENS,
    DEFAULT_MODEL,
    DEFAULT_PROJECT_TRUST,
    DEFAULT_THINKING_LEVEL,
    WORKTREES_LOCATION,
    Setting,
)
from piwork.gui.background import BackgroundTasks
from piwork.gui.inert_text import plain_label
from piwork.gui.key_status import KeyStatus
from piwork.gui.settings.providers_page import ProvidersPage
from piwork.gui.window_flags import dialog_buttons

LOCATION_LABELS = {
    "worktrees-folder": "In <repo>-worktrees/<name> beside the repository",
    "beside-repo": "In <repo>-<name> beside the repository",
}

TRUST_LABELS = {
    "ask": "Ask for each new project",
    "always": "Always trust project resources",
    "never": "Never load project resources",
}


INT_MAX = 2**31 - 1  # the largest value a QSpinBox holds


def _spin(setting: Setting[int], value: int, step: int) -> QSpinBox:
    """A spin box over the declared bounds of ``setting``, showing its description as the tooltip."""
    spin = QSpinBox()
    low = int(setting.minimum) if setting.minimum is not None else 0
    high = int(setting.maximum) if setting.maximum is not None else INT_MAX
    spin.setRange(low, high)
    spin.setSingleStep(step)
    spin.setValue(min(max(value, low), high))  # a larger value stays in the file unless the field is edited
    spin.setGroupSeparatorShown(True)
    spin.setToolTip(setting.description)
    return spin


def thinking_source_text(settings: Settings) -> str:
    """Where the thinking level new sessions of this project start at comes from."""
    source = settings.default_thinking_source()
    text = f"New sessions in this project start at {source.describe()}."
    if source.scope == "project":
        text += " It wins over the global default chosen here; edit the project's file to change it."
    return text


class SettingsDialog(QDialog):
    settingsSaved = Signal()

    def __init__(
        self,
        settings: Settings,
        keys: KeyStatus,
        registry: ModelRegistry,
        agent_dir: Path,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        dialog_buttons(self)
        self.setWindowTitle("Settings")
        self.setObjectName("settingsDialog")
        self.settings = settings
        self.registry = registry
        self.tabs = QTabWidget(self)
        self.providers_page = ProvidersPage(keys, registry, agent_dir, self)
        self.tabs.addTab(self.providers_page, "Providers")
        self.tabs.addTab(self._model_page(), "Model")
        self.providers_page.providersChanged.connect(lambda _provider: self.fill_default_models())
        self.tabs.addTab(self._compaction_page(), "Compaction")
        self.tabs.addTab(self._trust_page(), "Trust")
        self.tabs.addTab(self._worktrees_page(), "Worktrees")
        self.error = plain_label(parent=self)
        self.error.setObjectName("settingsError")
        self.error.setWordWrap(True)
        problems = [f"{p.path or p.scope}: {p.message}" for p in settings.problems]
        self.error.setText("\n".join([*problems, *settings.type_warnings]))
        self._opened_with = self._shown()
        self._tasks = BackgroundTasks()
        self.buttons = buttons = QDialogButtonBox(
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

    def fill_default_models(self) -> None:
        """The default-model choices (again after a server was added or removed on the Providers page)."""
        chosen = self.default_model.currentData() if self.default_model.count() else None
        current = chosen or (self.settings.default_provider(), self.settings.default_model())
        self.default_model.clear()
        self.default_model.addItem(
            "Automatic (first provider with a key, or a server on this computer)", None
        )
        for model in self.registry.models:
            if not model.api_supported:
                continue
            self.default_model.addItem(
                f"{model.name or model.id} — {self.registry.provider_name(model.provider)}",
                (model.provider, model.id),
            )
            if (model.provider, model.id) == tuple(current):
                self.default_model.setCurrentIndex(self.default_model.count() - 1)

    def _model_page(self) -> QWidget:
        page = QWidget(self)
        form = QFormLayout(page)
        self.default_model = QComboBox(page)
        self.default_model.setObjectName("defaultModel")
        self.fill_default_models()
        self.default_thinking = QComboBox(page)
        self.default_thinking.setObjectName("defaultThinking")
        self.default_thinking.addItem(f"Not set ({DEFAULT_THINKING_LEVEL.default})", None)
        self.default_thinking.setToolTip(DEFAULT_THINKING_LEVEL.description)
        self.default_model.setToolTip(DEFAULT_MODEL.description)
        for level in DEFAULT_THINKING_LEVEL.choices:
            self.default_thinking.addItem(level, level)
        # The box edits the global file (what Save writes); the note says what new sessions here start at.
        index = self.default_thinking.findData(self.settings.thinking_level_in("global"))
        self.default_thinking.setCurrentIndex(max(0, index))
        self.thinking_source = plain_label(thinking_source_text(self.settings), page)
        self.thinking_source.setObjectName("thinkingSource")
        self.thinking_source.setWordWrap(True)
        form.addRow("Default model", self.default_model)
        form.addRow("Default thinking level (global)", self.default_thinking)
        form.addRow(self.thinking_source)
        return page

    def _compaction_page(self) -> QWidget:
        page = QWidget(self)
        form = QFormLayout(page)
        self.compaction_enabled = QCheckBox(COMPACTION_ENABLED.description, page)
        self.compaction_enabled.setAccessibleDescription(
            "Summarise older messages when the context is nearly full (compaction.enabled)"
        )
        self.compaction_enabled.setChecked(self.settings.compaction_enabled())
        self.reserve_tokens = _spin(
            COMPACTION_RESERVE_TOKENS, self.settings.compaction_reserve_tokens(), 1024
        )
        self.keep_recent = _spin(
            COMPACTION_KEEP_RECENT_TOKENS, self.settings.compaction_keep_recent_tokens(), 1000
        )
        branch = self.settings.branch_summary_settings()
        self.branch_reserve = _spin(BRANCH_SUMMARY_RESERVE_TOKENS, int(branch["reserveTokens"]), 1024)
        self.skip_branch_prompt = QCheckBox(
            "Don't ask when moving in the tree: always move without a summary", page
        )
        self.skip_branch_prompt.setObjectName("skipBranchPrompt")
        self.skip_branch_prompt.setToolTip(
            f"{BRANCH_SUMMARY_SKIP_PROMPT.description}. Set by “Don't ask again” in the dialog shown when "
            "you move to another point of the session tree."
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
        self.default_trust.setToolTip(DEFAULT_PROJECT_TRUST.description)
        for value in DEFAULT_PROJECT_TRUST.choices:
            self.default_trust.addItem(TRUST_LABELS.get(value, value), value)
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

    def _worktrees_page(self) -> QWidget:
        page = QWidget(self)
        form = QFormLayout(page)
        self.worktree_location = QComboBox(page)
        self.worktree_location.setObjectName("worktreeLocation")
        self.worktree_location.setToolTip(WORKTREES_LOCATION.description)
        for value in WORKTREES_LOCATION.choices:
            self.worktree_location.addItem(LOCATION_LABELS.get(value, value), value)
        current = self.settings.values.value(WORKTREES_LOCATION)
        self.worktree_location.setCurrentIndex(max(0, self.worktree_location.findData(current)))
        form.addRow("New worktrees", self.worktree_location)
        note = QLabel("Where Session → New Session in a Worktree… puts the worktree of a new branch.", page)
        note.setWordWrap(True)
        form.addRow(note)
        return page

    # ---- saving ------------------------------------------------------------------------------

    def _shown(self) -> dict[str, Any]:
        """The value each field holds, by settings key (``None``: the key is not set)."""
        model = self.default_model.currentData()
        return {
            "defaultProvider": model[0] if model else None,
            "defaultModel": model[1] if model else None,
            "defaultThinkingLevel": self.default_thinking.currentData(),
            "compaction.enabled": self.compaction_enabled.isChecked(),
            "compaction.reserveTokens": self.reserve_tokens.value(),
            "compaction.keepRecentTokens": self.keep_recent.value(),
            "branchSummary.reserveTokens": self.branch_reserve.value(),
            "branchSummary.skipPrompt": self.skip_branch_prompt.isChecked(),
            "defaultProjectTrust": self.default_trust.currentData(),
            WORKTREES_LOCATION.key: self.worktree_location.currentData(),
        }

    def changes(self) -> dict[str, Any]:
        """Keys whose field the user changed (``None`` deletes the key); untouched keys are never written.

        Comparing with what the fields showed when the dialog opened (not with the files) keeps a value
        the dialog cannot show — a model it does not list, a refused value — as it is in the file.
        """
        return {key: value for key, value in self._shown().items() if self._opened_with[key] != value}

    def save(self) -> asyncio.Task[bool]:
        """Write the changed keys (in a worker: a locked read-modify-write of settings.json), then close;
        the task's result says whether they were written. The dialog says what it is doing meanwhile."""
        return self._tasks.spawn(self._save(self.changes()))

    async def _save(self, changes: dict[str, Any]) -> bool:
        self.buttons.setEnabled(False)
        shown = self.error.text()
        if changes:
            self.error.setText("Saving settings.json…")
        try:  # one locked, atomic write of the changed keys only
            await asyncio.to_thread(self.settings.set_values, changes, "global")
        except (SettingsWriteError, OSError) as err:
            if shiboken6.isValid(self):  # else closed (and deleted) meanwhile
                self.buttons.setEnabled(True)
                self.error.setText(str(err))
            return False
        if not shiboken6.isValid(self):
            return True
        self.buttons.setEnabled(True)
        self.error.setText(shown)
        self.settingsSaved.emit()
        self.accept()
        return True
