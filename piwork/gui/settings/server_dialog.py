"""Add or edit an OpenAI-compatible server (Ollama, llama.cpp, vLLM, LM Studio, a proxy...).

The dialog asks the server for its models (``GET <base URL>/models``) on the qasync loop, so the window
stays responsive, and says exactly what failed when it cannot. Saving writes the provider into
models.json (other providers and unknown keys kept) and the key, when one is given, into the keyring —
or, without a keyring, keeps it for this session and names the environment variable to set. models.json
is written (a locked read-modify-write) and read back into the model registry's next contents in a worker;
the keyring is only ever asked in a worker (``KeyStatus``): the dialog says "checking" or "saving" meanwhile.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import shiboken6
from PySide6.QtCore import QEvent, QObject, Qt, Signal, Slot
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from piwork.core.llm import (
    NO_KEY_NEEDED,
    OPENAI_COMPLETIONS_API,
    CredentialError,
    ModelListing,
    ModelRegistry,
    ModelsFileChange,
    ModelsFileError,
    RegistryState,
    env_vars_for,
    list_models,
    save_provider,
)
from piwork.gui.background import BackgroundTasks
from piwork.gui.inert_text import plain_label
from piwork.gui.key_status import KeyStatus
from piwork.gui.settings.compat_switches import CompatForm
from piwork.gui.window_flags import dialog_buttons

PRESETS: tuple[tuple[str, str], ...] = (
    ("Ollama", "http://localhost:11434/v1"),
    ("llama.cpp server", "http://localhost:8080/v1"),
    ("vLLM", "http://localhost:8000/v1"),
    ("LM Studio", "http://localhost:1234/v1"),
)
"""The usual base URLs of local OpenAI-compatible servers, offered under "Start from" to fill in the name and
address. Only this dialog uses them: the engine knows a server by its models.json entry alone. The README's
table of local servers lists the same addresses (a test holds it to this list)."""


def provider_id_for(name: str) -> str:
    """A models.json id from a display name: lower case, words joined by dashes."""
    slug = re.sub(r"[^a-z0-9]+", "-", name.strip().lower()).strip("-")
    return slug or "server"


class ServerDialog(QDialog):
    saved = Signal(str, str)  # provider id, message for people

    def __init__(
        self,
        models_path: Path,
        keys: KeyStatus,
        existing_ids: set[str],
        provider_id: str | None = None,
        entry: dict[str, Any] | None = None,
        parent: QWidget | None = None,
        registry: ModelRegistry | None = None,
    ) -> None:
        super().__init__(parent)
        dialog_buttons(self)
        self.setObjectName("serverDialog")
        self.setWindowTitle("Edit Server" if provider_id else "Add OpenAI-Compatible Server")
        self.models_path = models_path
        self.keys = keys
        self.saving = BackgroundTasks()  # models.json written, then the key going into the keyring
        self.registry = registry  # read back in the same worker once models.json is written
        self.registry_state: RegistryState | None = None  # what it read, for the page to apply
        self.existing_ids = existing_ids - ({provider_id} if provider_id else set())
        self.editing = provider_id
        self.entry = dict(entry or {})
        self.saved_entry: dict[str, Any] = {}
        self.listing: ModelListing | None = None
        self._task: asyncio.Task[None] | None = None

        self.preset = QComboBox(self)
        self.preset.setObjectName("serverPreset")
        self.preset.addItem("Choose a common server…", None)
        for name, url in PRESETS:
            self.preset.addItem(f"{name} — {url}", (name, url))
        self.preset.setAccessibleName("Common servers")
        self.preset.setAccessibleDescription("Fills in the usual name and base URL of a local model server.")
        self.name_edit = QLineEdit(self)
        self.name_edit.setObjectName("serverName")
        self.name_edit.setPlaceholderText("My server")
        self.id_edit = QLineEdit(self)
        self.id_edit.setObjectName("serverId")
        self.id_edit.setToolTip(
            "The provider's id in models.json and in session files; it cannot change later."
        )
        self.url_edit = QLineEdit(self)
        self.url_edit.setObjectName("serverBaseUrl")
        self.url_edit.setPlaceholderText("http://localhost:11434/v1")
        self.url_edit.setToolTip("The address before /chat/completions; for most servers it ends in /v1.")
        self.key_edit = QLineEdit(self)
        self.key_edit.setObjectName("serverKey")
        self.key_edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.show_key_state()
        keys.changed.connect(self.show_key_state)
        # A server elsewhere on the network may need no key either: this marks it usable without one.
        self.no_key_box = QCheckBox("This server needs &no key", self)
        self.no_key_box.setObjectName("serverNoKey")
        self.no_key_box.setAccessibleDescription(
            "Offer this server's models without an API key (servers on this computer never need one)."
        )
        self.no_key_box.toggled.connect(lambda keyless: self.key_edit.setEnabled(not keyless))
        self.test_button = QPushButton("&Test Connection", self)
        self.test_button.setObjectName("testConnection")
        self.test_button.setToolTip("Ask the server for its models (GET <base URL>/models)")
        self.test_result = plain_label(parent=self)
        self.test_result.setObjectName("testResult")
        self.test_result.setWordWrap(True)
        self.test_result.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.models = QListWidget(self)
        self.models.setObjectName("serverModels")
        self.models.setMinimumHeight(90)
        self.model_id_edit = QLineEdit(self)
        self.model_id_edit.setObjectName("manualModelId")
        self.model_id_edit.setPlaceholderText("Or type a model id, e.g. qwen2.5-coder:7b")
        self.add_model_button = QPushButton("Add &Model", self)
        self.add_model_button.setObjectName("addModelId")
        # the model's window and output limit: the meter, the marks and compaction count on them, and a
        # local server rarely says (an 8K model taken for 128K overflows before anything warns)
        self.window_spin = _token_spin(self, "serverContextWindow", "from the server, else 128,000")
        self.output_spin = _token_spin(self, "serverOutputLimit", "default, 16,384")
        self.compat = CompatForm(self)
        # A switch that shows the compat settings: most servers never need them.
        self.compat_box = QCheckBox(
            "Show &compatibility settings (only when the server rejects requests)", self
        )
        self.compat_box.setObjectName("compatBox")
        self.compat_box.setAccessibleDescription(
            "Request details some servers need changed; Automatic chooses by the server's address."
        )
        self.compat_scroll = QScrollArea(self)
        self.compat_scroll.setWidgetResizable(True)
        self.compat_scroll.setWidget(self.compat)
        self.compat_scroll.setMinimumHeight(160)
        self.compat_scroll.setVisible(False)
        self.compat_box.toggled.connect(self.compat_scroll.setVisible)
        self.error = plain_label(parent=self)
        self.error.setObjectName("serverError")
        self.error.setWordWrap(True)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel, self
        )
        save = self.buttons.button(QDialogButtonBox.StandardButton.Save)
        save.setAccessibleDescription("Write this server into models.json (and its key into the keyring)")
        cancel = self.buttons.button(QDialogButtonBox.StandardButton.Cancel)
        cancel.setAccessibleDescription("Close without changing anything")

        for label, widget, description in (
            ("Name", self.name_edit, "The name shown in the model picker."),
            ("Id", self.id_edit, self.id_edit.toolTip()),
            ("Base URL", self.url_edit, self.url_edit.toolTip()),
            ("API key", self.key_edit, "Saved in the system keyring, never in models.json."),
            (
                "Models",
                self.models,
                "Models of this server to offer in the model picker; checked ones are saved.",
            ),
            (
                "Model id",
                self.model_id_edit,
                "A model id to add by hand when the server cannot list its models.",
            ),
            (
                "Context window",
                self.window_spin,
                "Tokens the checked models take in; 0 leaves it to what the server lists, else 128,000.",
            ),
            (
                "Output limit",
                self.output_spin,
                "Most tokens the checked models write in one reply; 0 leaves the usual default.",
            ),
        ):
            widget.setAccessibleName(label)
            widget.setAccessibleDescription(description)
        self.test_button.setAccessibleDescription(self.test_button.toolTip())
        self.add_model_button.setAccessibleDescription("Add the typed model id to the list")

        form = QFormLayout()
        form.addRow("Start from", self.preset)
        form.addRow("&Name", self.name_edit)
        form.addRow("&Id", self.id_edit)
        form.addRow("&Base URL", self.url_edit)
        form.addRow("API &key", self.key_edit)
        form.addRow("", self.no_key_box)
        form.addRow("Context &window", self.window_spin)
        form.addRow("&Output limit", self.output_spin)
        test_row = QHBoxLayout()
        test_row.addWidget(self.test_button)
        test_row.addWidget(self.test_result, 1)
        manual_row = QHBoxLayout()
        manual_row.addWidget(self.model_id_edit, 1)
        manual_row.addWidget(self.add_model_button)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addLayout(test_row)
        layout.addWidget(QLabel("Models to offer:", self))
        layout.addWidget(self.models, 1)
        layout.addLayout(manual_row)
        layout.addWidget(self.compat_box)
        layout.addWidget(self.compat_scroll)
        layout.addWidget(self.error)
        layout.addWidget(self.buttons)

        self.preset.activated.connect(self._apply_preset)
        self._id_touched = False
        self.id_edit.textEdited.connect(lambda _t: setattr(self, "_id_touched", True))
        self.name_edit.textChanged.connect(self._name_edited)
        self.test_button.clicked.connect(self.test_connection)
        self.add_model_button.clicked.connect(self._add_typed_model)
        # Return in the model id field adds the model; it must not also press Save and close the dialog
        self.model_id_edit.installEventFilter(self)
        self.buttons.accepted.connect(self.save)
        self.buttons.rejected.connect(self.reject)
        self.finished.connect(lambda _r: self.cancel_test())
        self._load(provider_id)
        self.resize(620, 560)

    # ---- filling ------------------------------------------------------------------------------

    @Slot()
    def show_key_state(self) -> None:
        """The key field's hint: whether the server already has a key (known without the keyring)."""
        has_key = self.keys.has_key(self.editing) if self.editing else False
        if has_key is None:
            text = "Checking for a saved key…"
        elif has_key:
            text = "A key is set — type a new one to replace it"
        else:
            text = "Optional: local servers need none"
        self.key_edit.setPlaceholderText(text)

    def _load(self, provider_id: str | None) -> None:
        entry = self.entry
        self.name_edit.setText(str(entry.get("name") or provider_id or ""))
        self.id_edit.setText(provider_id or "")
        self.id_edit.setReadOnly(provider_id is not None)
        self.url_edit.setText(str(entry.get("baseUrl") or ""))
        self.no_key_box.setChecked(entry.get("apiKey") == NO_KEY_NEEDED)
        compat = entry.get("compat") if isinstance(entry.get("compat"), dict) else {}
        self.compat.set_values(dict(compat or {}))
        if any(key in (compat or {}) for key in self.compat.known_keys()):
            self.compat_box.setChecked(True)
        for model in entry.get("models") or []:
            if isinstance(model, dict) and isinstance(model.get("id"), str):
                self._add_model(model["id"], checked=True)
        models = [m for m in entry.get("models") or [] if isinstance(m, dict)]
        for spin, key in ((self.window_spin, "contextWindow"), (self.output_spin, "maxTokens")):
            values = {m.get(key) for m in models}
            value = values.pop() if len(values) == 1 else None  # one figure the models share
            if isinstance(value, int) and not isinstance(value, bool) and 0 < value <= spin.maximum():
                spin.setValue(value)
        self.name_edit.setFocus()

    def _apply_preset(self, index: int) -> None:
        data = self.preset.itemData(index)
        if not data:
            return
        name, url = data
        if not self.name_edit.text().strip() or self.name_edit.text() in {n for n, _ in PRESETS}:
            self.name_edit.setText(name)
        self.url_edit.setText(url)

    def _name_edited(self, text: str) -> None:
        if self.editing is None and not self._id_touched:
            self.id_edit.setText(provider_id_for(text))

    def _add_model(self, model_id: str, checked: bool) -> QListWidgetItem:
        for row in range(self.models.count()):
            item = self.models.item(row)
            if item.data(Qt.ItemDataRole.UserRole) == model_id:
                return item
        item = QListWidgetItem(model_id)
        item.setData(Qt.ItemDataRole.UserRole, model_id)
        item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
        item.setCheckState(Qt.CheckState.Checked if checked else Qt.CheckState.Unchecked)
        self.models.addItem(item)
        return item

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if (
            watched is self.model_id_edit
            and isinstance(event, QKeyEvent)
            and event.type() == QEvent.Type.KeyPress
            and event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
        ):
            self._add_typed_model()
            return True
        return super().eventFilter(watched, event)

    def _add_typed_model(self) -> None:
        model_id = self.model_id_edit.text().strip()
        if model_id:
            self._add_model(model_id, checked=True).setCheckState(Qt.CheckState.Checked)
            self.model_id_edit.clear()

    def checked_models(self) -> list[str]:
        return [
            str(self.models.item(row).data(Qt.ItemDataRole.UserRole))
            for row in range(self.models.count())
            if self.models.item(row).checkState() == Qt.CheckState.Checked
        ]

    # ---- testing the connection ---------------------------------------------------------------

    async def _key_for_test(self, typed: str) -> str | None:
        """The typed key, else the server's saved one (read in a worker: the keyring may be slow)."""
        if self.no_key_box.isChecked():
            return None
        if typed:
            return typed
        return await self.keys.api_key(self.editing) if self.editing else None

    def test_connection(self) -> None:
        url = self.url_edit.text().strip()
        if not url:
            self.test_result.setText("Type the server's base URL first.")
            return
        self.cancel_test()
        self.test_button.setEnabled(False)
        self.test_result.setText(f"Asking {url.rstrip('/')}/models …")
        self._task = asyncio.ensure_future(self._run_test(url, self.key_edit.text().strip()))

    async def _run_test(self, url: str, typed: str) -> None:
        try:
            listing = await list_models(url, await self._key_for_test(typed))
        finally:
            if shiboken6.isValid(self):
                self.test_button.setEnabled(True)
        self.show_listing(listing)

    def show_listing(self, listing: ModelListing) -> None:
        self.listing = listing
        if not listing.ok:
            self.test_result.setText("✗ " + listing.problem)
            self.test_result.setProperty("failed", True)
            return
        self.test_result.setProperty("failed", False)
        had_checked = bool(self.checked_models())
        for model in listing.models:
            self._add_model(model.id, checked=not had_checked and len(listing.models) == 1)
        count = len(listing.models)
        if count == 0:
            self.test_result.setText(
                f"✓ Connected to {listing.url}, but the server lists no models. Type a model id below."
            )
        elif count == 1:
            self.test_result.setText(f"✓ Connected: the server offers {listing.models[0].id}.")
        else:
            self.test_result.setText(f"✓ Connected: {count} models. Check the ones to offer.")

    def cancel_test(self) -> None:
        if self._task is not None and not self._task.done():
            self._task.cancel()
        self._task = None
        self.test_button.setEnabled(True)

    @property
    def testing(self) -> bool:
        return self._task is not None and not self._task.done()

    # ---- saving -------------------------------------------------------------------------------

    def _entry(self) -> dict[str, Any]:
        known = {m.id: m for m in self.listing.models} if self.listing and self.listing.ok else {}
        previous = {
            m["id"]: m
            for m in self.entry.get("models") or []
            if isinstance(m, dict) and isinstance(m.get("id"), str)
        }
        models: list[dict[str, Any]] = []
        for model_id in self.checked_models():
            model = dict(previous.get(model_id) or {"id": model_id})
            listed = known.get(model_id)
            if "contextWindow" not in model and listed is not None and listed.context_window:
                model["contextWindow"] = listed.context_window
            if self.window_spin.value() > 0:
                model["contextWindow"] = self.window_spin.value()
            if self.output_spin.value() > 0:
                model["maxTokens"] = self.output_spin.value()
            models.append(model)
        old_compat = self.entry.get("compat") if isinstance(self.entry.get("compat"), dict) else {}
        compat = {k: v for k, v in dict(old_compat or {}).items() if k not in self.compat.known_keys()}
        compat.update(self.compat.values())
        entry = {
            "name": self.name_edit.text().strip(),
            "baseUrl": self.url_edit.text().strip(),
            "api": self.entry.get("api") or OPENAI_COMPLETIONS_API,
            "compat": compat or None,
            "models": models,
        }
        # A key the user wrote into models.json themselves is kept; only the no-key mark is set or taken.
        if self.no_key_box.isChecked():
            entry["apiKey"] = NO_KEY_NEEDED
        elif self.entry.get("apiKey") == NO_KEY_NEEDED:
            entry["apiKey"] = None
        return entry

    def problem(self) -> str | None:
        provider_id = self.id_edit.text().strip()
        url = self.url_edit.text().strip()
        if not self.name_edit.text().strip():
            return "Give the server a name."
        if not provider_id:
            return "Give the server an id."
        if provider_id in self.existing_ids:
            return f"There is already a provider called {provider_id}; choose another id."
        if not url.startswith(("http://", "https://")):
            return "The base URL must start with http:// or https://."
        if not self.checked_models():
            return "Choose at least one model: test the connection to list them, or type a model id."
        return None

    def save(self) -> None:
        """Check the form, then write models.json in a worker ("Saving…" meanwhile, buttons still); the
        dialog closes with ``saved`` once the file (and a typed key) is written, or shows why it could not."""
        if self.saving.running:
            return
        problem = self.problem()
        if problem:
            self.error.setText(problem)
            return
        provider_id = self.id_edit.text().strip()
        self.saved_entry = self._entry()  # what models.json holds for it once saved
        key = "" if self.no_key_box.isChecked() else self.key_edit.text().strip()
        self.key_edit.clear()
        name = self.name_edit.text().strip()
        self.error.setText(f"Saving {name} in models.json…")
        self.buttons.setEnabled(False)
        self.saving.spawn(self._save(provider_id, name, dict(self.saved_entry), key))

    async def _save(self, provider_id: str, name: str, entry: dict[str, Any], key: str) -> None:
        path, registry = self.models_path, self.registry

        def write() -> tuple[ModelsFileChange, RegistryState | None]:
            change = save_provider(path, provider_id, entry)
            return change, registry.read_state() if registry is not None else None

        try:
            change, self.registry_state = await asyncio.to_thread(write)
        except ModelsFileError as err:
            if shiboken6.isValid(self):
                self.error.setText(str(err))
                self.buttons.setEnabled(True)
            return
        if not shiboken6.isValid(self):
            return
        notes = [f"Saved {name} in {change.path}."]
        if self.listing is not None and not self.listing.ok:  # saved as asked, but not without a word
            notes.append(f"Its connection test failed: {self.listing.problem}")
        if change.backup_reason:
            notes.append(change.backup_reason[0].upper() + change.backup_reason[1:] + ".")
        try:
            if key:  # models.json is written; the key follows, the dialog waits for it with its buttons still
                self.error.setText("Saving the key in the system keyring…")
                notes.append(await self._store_key(provider_id, key))
        finally:
            if shiboken6.isValid(self):
                self.buttons.setEnabled(True)
        if shiboken6.isValid(self):
            self.saved.emit(provider_id, " ".join(notes))
            self.accept()

    async def _store_key(self, provider_id: str, key: str) -> str:
        snapshot = self.keys.snapshot
        if snapshot is not None and not snapshot.keyring.usable:
            reason = "No system keyring is available."
        else:
            try:
                await self.keys.store_key(provider_id, key)
                return "The key is saved in the system keyring."
            except CredentialError as err:
                reason = str(err)
        self.keys.set_session_key(provider_id, key)
        variable = env_vars_for(provider_id)[-1]
        return f"{reason} The key is used until piwork closes; to keep it, set {variable} in the environment."

    def reject(self) -> None:
        if self.saving.running:  # models.json or the key is being written: the dialog closes once it is
            return
        super().reject()


def _token_spin(parent: QWidget, name: str, unset: str) -> QSpinBox:
    """A token count for the checked models; 0 (shown as ``unset``) writes nothing."""
    spin = QSpinBox(parent)
    spin.setObjectName(name)
    spin.setRange(0, 10_000_000)
    spin.setSingleStep(1024)
    spin.setGroupSeparatorShown(True)
    spin.setSpecialValueText(unset)
    spin.setSuffix(" tokens")
    return spin
