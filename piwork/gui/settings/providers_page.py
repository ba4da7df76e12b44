"""Provider keys: where each key comes from, save to the OS keyring, session-only keys, env-var alternative."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from piwork.core.llm.credentials import CredentialError, CredentialStore, KeySource, env_vars_for
from piwork.core.llm.models import ModelRegistry

SOURCE_TEXT = {
    KeySource.SESSION: "key for this session only",
    KeySource.KEYRING: "key saved in the system keyring",
    KeySource.ENVIRONMENT: "key from the environment ({detail})",
    KeySource.MODELS_JSON: "key from models.json",
}


class ProvidersPage(QWidget):
    keysChanged = Signal()

    def __init__(
        self,
        credentials: CredentialStore,
        registry: ModelRegistry,
        agent_dir: Path,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.credentials = credentials
        self.registry = registry
        self.agent_dir = agent_dir
        state = credentials.keyring_state()
        self.keyring_banner = QLabel(state.message, self)
        self.keyring_banner.setObjectName("keyringBanner")
        self.keyring_banner.setWordWrap(True)
        self.providers = QListWidget(self)
        self.providers.setObjectName("providerList")
        self.status = QLabel(self)
        self.status.setObjectName("keyStatus")
        self.status.setWordWrap(True)
        self.key_edit = QLineEdit(self)
        self.key_edit.setObjectName("keyEdit")
        self.key_edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.key_edit.setPlaceholderText("Paste an API key")
        self.save_button = QPushButton("Save in Keyring", self)
        self.save_button.setEnabled(state.usable)
        self.save_button.setToolTip(state.message)
        self.session_button = QPushButton("Use for This Session Only", self)
        self.remove_button = QPushButton("Remove Saved Key", self)
        self.remove_button.setEnabled(state.usable)
        self.import_button = QPushButton("Import Keys from Pi (auth.json)…", self)
        self.import_button.setEnabled(state.usable and (agent_dir / "auth.json").is_file())
        self.message = QLabel(self)
        self.message.setObjectName("providerMessage")
        self.message.setWordWrap(True)

        buttons = QHBoxLayout()
        for button in (self.save_button, self.session_button, self.remove_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addWidget(self.keyring_banner)
        layout.addWidget(self.providers, 1)
        layout.addWidget(self.status)
        layout.addWidget(self.key_edit)
        layout.addLayout(buttons)
        layout.addWidget(self.import_button, 0, Qt.AlignmentFlag.AlignLeft)
        layout.addWidget(self.message)

        for provider in registry.providers():
            item = QListWidgetItem(registry.provider_name(provider))
            item.setData(Qt.ItemDataRole.UserRole, provider)
            self.providers.addItem(item)
        self.providers.currentItemChanged.connect(lambda *_: self._show_status())
        self.save_button.clicked.connect(self.save_key)
        self.session_button.clicked.connect(self.use_for_session)
        self.remove_button.clicked.connect(self.remove_key)
        self.import_button.clicked.connect(self.import_from_pi)
        if self.providers.count():
            self.providers.setCurrentRow(0)
        self.refresh_labels()

    def current_provider(self) -> str | None:
        item = self.providers.currentItem()
        return str(item.data(Qt.ItemDataRole.UserRole)) if item is not None else None

    def select_provider(self, provider: str) -> bool:
        for row in range(self.providers.count()):
            if self.providers.item(row).data(Qt.ItemDataRole.UserRole) == provider:
                self.providers.setCurrentRow(row)
                return True
        return False

    def describe(self, provider: str) -> str:
        resolved = self.credentials.resolve(provider)
        if resolved is None:
            names = " or ".join(env_vars_for(provider))
            return f"No key. Save one here, or set {names} in the environment."
        text = SOURCE_TEXT[resolved.source].format(detail=resolved.detail)
        return text[0].upper() + text[1:] + "."

    def refresh_labels(self) -> None:
        for row in range(self.providers.count()):
            item = self.providers.item(row)
            provider = str(item.data(Qt.ItemDataRole.UserRole))
            has = self.credentials.has_credentials(provider)
            item.setText(f"{'●' if has else '○'}  {self.registry.provider_name(provider)}")
            item.setToolTip(self.describe(provider))
        self._show_status()

    def _show_status(self) -> None:
        provider = self.current_provider()
        self.status.setText(self.describe(provider) if provider else "")

    def _take_key(self) -> str:
        key = self.key_edit.text().strip()
        self.key_edit.clear()  # the key does not linger in the widget
        return key

    def save_key(self) -> None:
        provider = self.current_provider()
        if provider is None:
            return
        try:
            self.credentials.store_key(provider, self._take_key())
        except CredentialError as err:
            self.message.setText(str(err))
            return
        self.message.setText(f"Saved the key for {self.registry.provider_name(provider)} in the keyring.")
        self.refresh_labels()
        self.keysChanged.emit()

    def use_for_session(self) -> None:
        provider = self.current_provider()
        key = self._take_key()
        if provider is None or not key:
            self.message.setText("Paste a key first.")
            return
        self.credentials.set_session_key(provider, key)
        self.message.setText("The key is used until piwork closes; it is not saved anywhere.")
        self.refresh_labels()
        self.keysChanged.emit()

    def remove_key(self) -> None:
        provider = self.current_provider()
        if provider is None:
            return
        try:
            self.credentials.delete_key(provider)
        except CredentialError as err:
            self.message.setText(str(err))
            return
        self.credentials.clear_session_key(provider)
        self.message.setText(f"Removed the saved key for {self.registry.provider_name(provider)}.")
        self.refresh_labels()
        self.keysChanged.emit()

    def import_from_pi(self) -> None:
        report = self.credentials.import_from_pi(self.agent_dir / "auth.json")
        parts = []
        if report.imported:
            parts.append("Imported: " + ", ".join(report.imported) + ".")
        if report.skipped:
            parts.append("Skipped (not API keys): " + ", ".join(report.skipped) + ".")
        parts.extend(report.problems)
        self.message.setText(" ".join(parts) or "Nothing to import.")
        self.refresh_labels()
        self.keysChanged.emit()
