"""Providers: add, edit and remove OpenAI-compatible servers (models.json), and each provider's key —
where it comes from, saved in the OS keyring, for this session only, or the environment variable to set.

The page never asks the keyring itself: it shows what the window knows (``KeyStatus``; "checking" until
the keyring has answered) and runs saving, removing and importing keys in a worker, saying what it is
doing meanwhile and then what came of it. models.json is changed in a worker as well (by the server
dialog when saving, here when removing), which then reads it back into the registry's next contents; the
page swaps them into the shared registry in one step on the GUI thread, where the pickers read it."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import shiboken6
from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from piwork.core.llm import (
    BUILTIN_MODELS,
    CredentialError,
    KeySource,
    ModelRegistry,
    ModelsFileChange,
    ModelsFileError,
    RegistryState,
    env_vars_for,
    is_loopback,
    read_providers,
    remove_provider,
)
from piwork.gui.background import BackgroundTasks
from piwork.gui.inert_text import plain_label, plain_tip
from piwork.gui.key_status import CHECKING_TEXT, KeyStatus
from piwork.gui.settings.server_dialog import ServerDialog

SOURCE_TEXT = {
    KeySource.SESSION: "key for this session only",
    KeySource.KEYRING: "key saved in the system keyring",
    KeySource.ENVIRONMENT: "key from the environment ({detail})",
    KeySource.MODELS_JSON: "key from models.json",
}


BUILTIN_PROVIDERS = frozenset(str(m["provider"]) for m in BUILTIN_MODELS)
CHECKING_BANNER = "Checking the system keyring… Keys can be saved once it answers."
READING_TEXT = "Reading models.json…"


class ProvidersPage(QWidget):
    keysChanged = Signal()
    providersChanged = Signal(str)  # the provider added or changed ("" when one was removed)

    def __init__(
        self,
        keys: KeyStatus,
        registry: ModelRegistry,
        agent_dir: Path,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.keys = keys
        self.credentials = keys.credentials
        self.registry = registry
        self.agent_dir = agent_dir
        self.tasks = BackgroundTasks()  # key writes: saving, removing, importing
        self.reading_task = BackgroundTasks()  # models.json and auth.json, read when the page opens
        self.server_tasks = BackgroundTasks()  # removing a server from models.json
        self._removing = False  # cleared by the removal itself, in the step that gives the buttons back
        self.keyring_banner = plain_label(parent=self)
        self.keyring_banner.setObjectName("keyringBanner")
        self.keyring_banner.setWordWrap(True)
        self.providers = QListWidget(self)
        self.providers.setObjectName("providerList")
        self.providers.setAccessibleName("Providers")
        self.providers.setAccessibleDescription("Model providers; a filled dot means a key is available.")
        self.add_server_button = QPushButton("&Add Server…", self)
        self.add_server_button.setObjectName("addServer")
        self.add_server_button.setToolTip(
            "Add an OpenAI-compatible server: Ollama, llama.cpp, vLLM, LM Studio…"
        )
        self.edit_server_button = QPushButton("&Edit Server…", self)
        self.edit_server_button.setObjectName("editServer")
        self.edit_server_button.setToolTip("Change the address, models and compatibility of this server")
        self.remove_server_button = QPushButton("Re&move Server", self)
        self.remove_server_button.setObjectName("removeServer")
        self.remove_server_button.setToolTip("Remove this server from models.json")
        self.server_dialog: ServerDialog | None = None
        self.reading_note = QLabel(READING_TEXT, self)  # shown until models.json has been read
        self.reading_note.setObjectName("readingModelsJson")
        self.reading_note.setEnabled(False)  # drawn dimmed: a passing state, not a message
        self.status = plain_label(parent=self)
        self.status.setObjectName("keyStatus")
        self.status.setWordWrap(True)
        self.key_edit = QLineEdit(self)
        self.key_edit.setObjectName("keyEdit")
        self.key_edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.key_edit.setPlaceholderText("Paste an API key")
        self.key_edit.setAccessibleName("API key")
        self.key_edit.setAccessibleDescription("The key of the selected provider; it is cleared once used.")
        self.save_button = QPushButton("Save in Keyring", self)
        self.session_button = QPushButton("Use for This Session Only", self)
        self.remove_button = QPushButton("Remove Saved Key", self)
        self.import_button = QPushButton("Import Keys from Pi (auth.json)…", self)
        # What the page knows of its files, read in a worker when it opens (see ``_read_files``):
        # None while reading; then models.json's own servers and whether Pi's auth.json is there.
        self._servers: dict[str, dict[str, Any]] | None = None
        self._models_problem: str | None = None
        self._has_auth_json = False
        self._after_reading: list[Callable[[], object]] = []
        # Why the import button is greyed out, beside it (also its tooltip and accessible description).
        self.import_note = plain_label(parent=self)
        self.import_note.setObjectName("importNote")
        self.import_note.setWordWrap(True)
        self.message = plain_label(parent=self)
        self.message.setObjectName("providerMessage")
        self.message.setWordWrap(True)

        for button in (
            self.add_server_button,
            self.edit_server_button,
            self.remove_server_button,
            self.save_button,
            self.session_button,
            self.remove_button,
            self.import_button,
        ):
            button.setAccessibleDescription(button.toolTip() or button.text().replace("&", ""))
        server_buttons = QHBoxLayout()
        for button in (self.add_server_button, self.edit_server_button, self.remove_server_button):
            server_buttons.addWidget(button)
        server_buttons.addWidget(self.reading_note)
        server_buttons.addStretch(1)
        buttons = QHBoxLayout()
        for button in (self.save_button, self.session_button, self.remove_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addWidget(self.keyring_banner)
        layout.addWidget(self.providers, 1)
        layout.addLayout(server_buttons)
        layout.addWidget(self.status)
        layout.addWidget(self.key_edit)
        layout.addLayout(buttons)
        import_row = QHBoxLayout()
        import_row.addWidget(self.import_button, 0, Qt.AlignmentFlag.AlignTop)
        import_row.addWidget(self.import_note, 1)
        layout.addLayout(import_row)
        layout.addWidget(self.message)

        self._fill_list()
        self.providers.currentItemChanged.connect(lambda *_: self._show_status())
        self.add_server_button.clicked.connect(lambda: self.edit_server(None))
        self.edit_server_button.clicked.connect(lambda: self.edit_server(self.current_provider()))
        self.remove_server_button.clicked.connect(self.ask_remove_server)
        self.providers.itemDoubleClicked.connect(lambda _item: self._edit_if_server())
        self.save_button.clicked.connect(self.save_key)
        self.session_button.clicked.connect(self.use_for_session)
        self.remove_button.clicked.connect(self.remove_key)
        self.import_button.clicked.connect(self.import_from_pi)
        keys.changed.connect(self.refresh_labels)
        self.destroyed.connect(lambda *_: self.tasks.cancel_all())
        self.destroyed.connect(lambda *_: self.reading_task.cancel_all())
        self.destroyed.connect(lambda *_: self.server_tasks.cancel_all())
        self.refresh_labels()
        keys.refresh(fresh=True)  # a key may have been changed outside piwork: ask again, in a worker
        self.reading_task.spawn(self._read_files())

    @property
    def loading(self) -> bool:
        """models.json and auth.json are still being read (the server buttons wait for them)."""
        return self._servers is None

    async def _read_files(self) -> None:
        """Read models.json's servers and look for Pi's auth.json in a worker, then draw the page again."""
        path, auth_json = self.models_path, self.agent_dir / "auth.json"

        def read() -> tuple[dict[str, dict[str, Any]], str | None, bool]:
            entries, problem = read_providers(path)
            return entries, problem, auth_json.is_file()

        entries, problem, has_auth = await asyncio.to_thread(read)
        if not shiboken6.isValid(self):
            return
        self._servers, self._models_problem, self._has_auth_json = entries, problem, has_auth
        self.reading_note.hide()
        self.refresh_labels()
        waiting, self._after_reading = self._after_reading, []
        for then in waiting:
            then()

    def _fill_list(self, select: str | None = None) -> None:
        select = select or self.current_provider()
        self.providers.clear()
        for provider in self.registry.providers():
            item = QListWidgetItem(self.registry.provider_name(provider))
            item.setData(Qt.ItemDataRole.UserRole, provider)
            self.providers.addItem(item)
        if not (select and self.select_provider(select)) and self.providers.count():
            self.providers.setCurrentRow(0)

    def current_provider(self) -> str | None:
        item = self.providers.currentItem()
        return str(item.data(Qt.ItemDataRole.UserRole)) if item is not None else None

    def select_provider(self, provider: str) -> bool:
        for row in range(self.providers.count()):
            if self.providers.item(row).data(Qt.ItemDataRole.UserRole) == provider:
                self.providers.setCurrentRow(row)
                return True
        return False

    def _local_only(self, provider: str) -> bool:
        """Every model of ``provider`` is on this machine (no key needed)."""
        models = [m for m in self.registry.models if m.provider == provider]
        return bool(models) and all(is_loopback(m.base_url) for m in models)

    def describe(self, provider: str) -> str:
        snapshot = self.keys.snapshot
        known = snapshot is not None and snapshot.checked(provider)
        info = snapshot.key_info(provider) if snapshot is not None else None
        if info is None and self._local_only(provider):  # whatever the keyring says, none is needed
            return "No key needed: the server is on this computer. Add a key if it asks for one."
        if not known:
            return CHECKING_TEXT[:-1] + ": the system keyring has not answered yet."
        if info is None:
            names = " or ".join(env_vars_for(provider))
            return f"No key. Save one here, or set {names} in the environment."
        if info.no_key_needed:
            return "No key needed: this server is marked so (Edit Server to change it)."
        text = SOURCE_TEXT[info.source].format(detail=info.detail)
        return text[0].upper() + text[1:] + "."

    @Slot()
    def refresh_labels(self) -> None:
        """Draw the page from what is known about keys (called again whenever that changes)."""
        for row in range(self.providers.count()):
            item = self.providers.item(row)
            provider = str(item.data(Qt.ItemDataRole.UserRole))
            has = self.keys.has_key(provider)
            mark = "●" if has or self._local_only(provider) else ("◌" if has is None else "○")
            item.setText(f"{mark}  {self.registry.provider_name(provider)}")
            item.setToolTip(plain_tip(self.describe(provider)))
        self._show_keyring_state()
        self._show_status()

    def _show_keyring_state(self) -> None:
        snapshot = self.keys.snapshot
        self.keyring_banner.setText(snapshot.keyring.message if snapshot is not None else CHECKING_BANNER)
        usable = snapshot is not None and snapshot.keyring.usable
        writing = self.tasks.running
        self.save_button.setEnabled(usable and not writing)
        self.save_button.setToolTip(plain_tip(self.keyring_banner.text()))
        self.remove_button.setEnabled(usable and not writing)
        reason = self._import_unavailable(writing)
        self.import_button.setEnabled(reason is None)
        auth_json = self.agent_dir / "auth.json"
        tip = reason or f"Copy the API keys saved by Pi in {auth_json} into the system keyring."
        self.import_button.setToolTip(plain_tip(tip))
        self.import_button.setAccessibleDescription(tip)
        self.import_note.setText(reason or "")
        self.import_note.setVisible(reason is not None)
        self.session_button.setEnabled(not writing)

    def _import_unavailable(self, writing: bool) -> str | None:
        """Why keys cannot be imported from Pi's auth.json now, or None when they can."""
        snapshot = self.keys.snapshot
        if self._servers is None:
            return "Looking for Pi's auth.json…"
        if not self._has_auth_json:
            return f"Nothing to import: no auth.json found at {self.agent_dir / 'auth.json'}."
        if snapshot is None:
            return "Waiting for the system keyring to answer before importing."
        if not snapshot.keyring.usable:
            return "Keys are imported into the system keyring, and no usable keyring was found."
        if writing:
            return "Wait until the key being written is saved."
        return None

    def _show_status(self) -> None:
        provider = self.current_provider()
        self.status.setText(self.describe(provider) if provider else "")
        server = self._is_server(provider) and not self.removing
        self.edit_server_button.setEnabled(server)
        self.remove_server_button.setEnabled(server)

    # ---- servers (models.json) ----------------------------------------------------------------

    @property
    def models_path(self) -> Path:
        return self.registry.path or self.agent_dir / "models.json"

    def _is_server(self, provider: str | None) -> bool:
        """A provider the page can edit: defined in models.json with its own models, not a built-in."""
        if not provider or provider in BUILTIN_PROVIDERS or self._servers is None:
            return False
        return provider in self._servers

    def _edit_if_server(self) -> None:
        if self._is_server(self.current_provider()):
            self.edit_server(self.current_provider())

    def edit_server(self, provider: str | None) -> ServerDialog | None:
        """The Add (``None``) or Edit Server dialog. Editing asked for while models.json is still being
        read opens once it has been (returning None now); adding opens at once and is told what the file
        says when it has been read."""
        if self._servers is None and provider is not None:
            self._after_reading.append(lambda: self.edit_server(provider))
            return None
        entries = self._servers or {}
        existing = set(self.registry.providers()) | set(entries)
        dialog = ServerDialog(
            self.models_path,
            self.keys,
            existing,
            provider,
            entries.get(provider) if provider else None,
            self,
            registry=self.registry,
        )
        if self._servers is None:
            self._after_reading.append(lambda: self._tell_dialog(dialog))
        else:
            self._tell_dialog(dialog)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.saved.connect(self._server_saved)
        self.server_dialog = dialog
        dialog.destroyed.connect(lambda *_: setattr(self, "server_dialog", None))
        dialog.open()
        return dialog

    def _tell_dialog(self, dialog: ServerDialog) -> None:
        """What models.json says that the server dialog needs: the ids taken, and a file it cannot read."""
        if not shiboken6.isValid(dialog) or self._servers is None:
            return
        dialog.existing_ids |= set(self._servers) - ({dialog.editing} if dialog.editing else set())
        if self._models_problem and not dialog.error.text():
            note = " Saving keeps it aside as a backup and starts a new file."
            dialog.error.setText(self._models_problem + note)

    def _server_saved(self, provider: str, message: str) -> None:
        dialog = self.server_dialog
        if self._servers is not None and dialog is not None:  # what was just written, without reading it
            merged = {**self._servers.get(provider, {}), **dialog.saved_entry}  # as save_provider merges
            self._servers[provider] = {k: v for k, v in merged.items() if v is not None}
            self._models_problem = None  # an unreadable file was set aside and a new one written
        state = dialog.registry_state if dialog is not None else None
        if state is not None:  # models.json as written, read back in the dialog's worker: swapped in at once
            self.registry.apply(state)
        self.keys.refresh()  # a new provider is asked about in a worker
        self._fill_list(provider)
        self.refresh_labels()
        self.message.setText(message)
        self.providersChanged.emit(provider)
        self.keysChanged.emit()

    def ask_remove_server(self) -> QMessageBox | None:
        provider = self.current_provider()
        if not self._is_server(provider):
            return None
        name = self.registry.provider_name(provider or "")
        box = QMessageBox(
            QMessageBox.Icon.Question,
            "Remove Server",
            plain_tip(
                f"Remove {name} from models.json? Its models leave the model picker; sessions that used them "
                "keep their history."
            ),
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
            self,
        )
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.finished.connect(
            lambda result: (
                self.remove_server(provider or "") if result == QMessageBox.StandardButton.Yes else None
            )
        )
        box.open()
        return box

    @property
    def removing(self) -> bool:
        return self._removing

    def remove_server(self, provider: str) -> bool:
        """Remove ``provider`` from models.json in a worker ("Removing…" meanwhile), then read the file
        back into the registry there too; the page swaps the registry's contents in once both are done."""
        if self.removing:
            return False
        name = self.registry.provider_name(provider)
        self.message.setText(f"Removing {name} from models.json…")
        self._removing = True
        self.server_tasks.spawn(self._remove_server(provider, name))
        self._show_status()
        return True

    async def _remove_server(self, provider: str, name: str) -> None:
        # The buttons come back in the same step as the outcome: a task's own done state comes a loop turn
        # before its done callbacks, when the page would still show the removal as running.
        try:
            await self._remove_server_now(provider, name)
        finally:
            self._removing = False
            if shiboken6.isValid(self):
                self._show_status()

    async def _remove_server_now(self, provider: str, name: str) -> None:
        path, registry = self.models_path, self.registry

        def write() -> tuple[ModelsFileChange, RegistryState]:
            return remove_provider(path, provider), registry.read_state()

        try:
            change, state = await asyncio.to_thread(write)
        except ModelsFileError as err:
            if shiboken6.isValid(self):
                self.message.setText(str(err))
            return
        if not shiboken6.isValid(self):
            return
        if self._servers is not None:
            self._servers.pop(provider, None)
            self._models_problem = None
        note = (
            f" {change.backup_reason[0].upper()}{change.backup_reason[1:]}." if change.backup_reason else ""
        )
        self.registry.apply(state)
        self._fill_list()
        self.refresh_labels()
        self.providersChanged.emit("")
        # its key goes too: a key kept for a provider that no longer exists would be forgotten there
        self.keys.clear_session_key(provider)
        snapshot = self.keys.snapshot
        if snapshot is not None and not snapshot.keyring.usable:
            self.message.setText(f"Removed {name} from models.json.{note}")
            self.keysChanged.emit()
            return
        self._write(
            f"Removed {name} from models.json.{note} Removing its saved key…",
            self._forget_key(provider, f"Removed {name} from models.json.{note}"),
        )

    async def _forget_key(self, provider: str, done: str) -> str:
        snapshot = self.keys.snapshot or await self.keys.refresh()
        if not snapshot.keyring.usable:
            return done
        try:
            await self.keys.delete_key(provider)
        except CredentialError as err:
            return f"{done} {err}"
        return done

    def _take_key(self) -> str:
        key = self.key_edit.text().strip()
        self.key_edit.clear()  # the key does not linger in the widget
        return key

    # ---- keys: written in a worker, with what is happening said meanwhile ------------------------

    @property
    def writing(self) -> bool:
        return self.tasks.running

    def _write(self, progress: str, work: Coroutine[Any, Any, str]) -> None:
        """Say ``progress``, keep the key buttons still until ``work`` is done, then show its outcome."""
        self.message.setText(progress)
        task = self.tasks.spawn(self._finish_write(work))
        task.add_done_callback(lambda _task: self._written())  # after the task has left ``tasks``
        self._show_keyring_state()

    async def _finish_write(self, work: Coroutine[Any, Any, str]) -> None:
        try:
            outcome = await work
        except CredentialError as err:
            outcome = str(err)  # never contains the key
        if shiboken6.isValid(self):
            self.message.setText(outcome)

    def _written(self) -> None:
        if shiboken6.isValid(self):
            self.refresh_labels()
            self.keysChanged.emit()

    def save_key(self) -> None:
        provider = self.current_provider()
        if provider is None or self.writing:
            return
        name = self.registry.provider_name(provider)
        self._write(
            f"Saving the key for {name} in the keyring…", self._save(provider, self._take_key(), name)
        )

    async def _save(self, provider: str, key: str, name: str) -> str:
        await self.keys.store_key(provider, key)
        return f"Saved the key for {name} in the keyring."

    def use_for_session(self) -> None:
        provider = self.current_provider()
        key = self._take_key()
        if provider is None or not key:
            self.message.setText("Paste a key first.")
            return
        self.keys.set_session_key(provider, key)
        self.message.setText("The key is used until piwork closes; it is not saved anywhere.")
        self.keysChanged.emit()

    def remove_key(self) -> None:
        provider = self.current_provider()
        if provider is None or self.writing:
            return
        name = self.registry.provider_name(provider)
        self._write(f"Removing the saved key for {name}…", self._remove(provider, name))

    async def _remove(self, provider: str, name: str) -> str:
        await self.keys.delete_key(provider)
        self.keys.clear_session_key(provider)
        return f"Removed the saved key for {name}."

    def import_from_pi(self) -> None:
        if self.writing:
            return
        self._write("Importing keys from Pi's auth.json into the keyring…", self._import())

    async def _import(self) -> str:
        report = await self.keys.import_from_pi(self.agent_dir / "auth.json")
        parts = []
        if report.imported:
            parts.append("Imported: " + ", ".join(report.imported) + ".")
        if report.skipped:
            parts.append("Skipped (not API keys): " + ", ".join(report.skipped) + ".")
        parts.extend(report.problems)
        return " ".join(parts) or "Nothing to import."
