"""TrustDialog: asks whether piwork may load a project folder's trust-gated resources.

Startup use (the engine decides when to ask): give the GUI's asker to the engine's resolver,
which writes the chosen option's updates to trust.json itself::

    resolver = TrustResolver(store, default_policy, ask=lambda request: ask_trust(request, window))

`ask_trust` opens the dialog window-modally and resolves to the chosen `TrustOption`, or None when
the user dismissed it (the engine then treats the project as untrusted and saves nothing).

Settings use (Pi's /trust): `TrustDialog.for_saved_decision(cwd, store)` offers trust / trust parent /
do not trust, pre-selects the saved decision, names where it is inherited from, and writes the
choice through `TrustStore.set_many` when the user picks one. A corrupt trust.json is reported and
can be backed up and reset from the dialog; it is never overwritten silently.

Fingerprints (asking again when gated resources changed): `TrustPrompter` wraps the startup asker
and records, through the engine's `FingerprintStore`, a fingerprint of the resources the user decided
on. `TrustPrompter.recheck(state)` takes a saved decision and, when those resources changed since,
asks again (naming the changed situation) and writes the new answer through `TrustStore`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Sequence

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QDialog,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from piwork.core.errors import PiworkError
from piwork.core.resources.trust import (
    TrustOption,
    TrustRequest,
    TrustState,
    trust_options,
    trust_resources,
)
from piwork.core.resources.trust_fingerprint import FingerprintStore, compute_fingerprint
from piwork.core.resources.trust_store import TrustEntry, TrustStore, TrustStoreError, strict_canonical

PREVIEW_BYTES = 64 * 1024
PREVIEW_FILES = 200
PATH_ROLE = Qt.ItemDataRole.UserRole + 1

_EXPLANATION = (
    "Trusting this folder lets piwork load its <code>.pi</code> settings and resources (skills, prompt "
    "templates, SYSTEM.md / APPEND_SYSTEM.md), its <code>.agents/skills</code>, run project plugins and use "
    "project packages. Context files such as AGENTS.md are read either way. Trust is not a sandbox: tools "
    "still run with your permissions. Only trust folders whose contents you know."
)


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def preview_text(path: str) -> str:
    """A bounded preview of a gated resource: a file's beginning or a folder's file list."""
    try:
        if os.path.isdir(path):
            names: list[str] = []
            for root, dirs, files in os.walk(path):
                dirs.sort()
                for name in sorted(files):
                    names.append(os.path.relpath(os.path.join(root, name), path))
                    if len(names) >= PREVIEW_FILES:
                        return "\n".join(names) + "\n… (more files not listed)"
            return "\n".join(names) if names else "(empty folder)"
        with open(path, "rb") as handle:
            data = handle.read(PREVIEW_BYTES + 1)
    except OSError as exc:
        return f"Cannot read {path}: {exc.strerror or exc}"
    text = data[:PREVIEW_BYTES].decode("utf-8", errors="replace")
    return text + ("\n… (preview cut at 64 KB)" if len(data) > PREVIEW_BYTES else "")


class TrustDialog(QDialog):
    def __init__(
        self,
        request: TrustRequest,
        parent: QWidget | None = None,
        *,
        saved: TrustEntry | None = None,
        store: TrustStore | None = None,
        store_error: str | None = None,
        changed: Sequence[str] = (),
    ) -> None:
        super().__init__(parent)
        self.request = request
        self.chosen: TrustOption | None = None
        self._store = store  # when given, the dialog writes the choice itself (settings use)
        self.option_buttons: dict[str, QPushButton] = {}
        self.setWindowTitle("Trust this project folder?")
        folder = request.folder
        header = QLabel(
            f"<b>{_escape(os.path.basename(folder) or folder)}</b><br><code>{_escape(folder)}</code>"
            f"<p>{_EXPLANATION}</p>"
        )
        header.setWordWrap(True)
        header.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout = QVBoxLayout(self)
        layout.addWidget(header)
        if changed:
            note = QLabel(
                "The resources that need trust changed since your last decision, so piwork asks again:<br>"
                + "<br>".join(f"<code>{_escape(p)}</code>" for p in changed)
            )
            note.setWordWrap(True)
            layout.addWidget(note)
        self.saved_label = QLabel(self._saved_text(saved))
        self.saved_label.setVisible(store is not None or saved is not None)
        layout.addWidget(self.saved_label)
        self.reload_note = QLabel(
            "A new decision takes effect on reload: piwork reloads the project's resources as soon as you "
            "choose (a reply already running keeps what it started with)."
        )
        self.reload_note.setWordWrap(True)
        self.reload_note.setVisible(store is not None)
        layout.addWidget(self.reload_note)
        if store_error:
            layout.addWidget(self._store_error_row(store_error))

        self.resource_list = QListWidget()
        for resource in request.resources:
            item = QListWidgetItem(f"{resource.kind}: {resource.path}")
            item.setData(PATH_ROLE, resource.path)
            item.setToolTip(resource.path)
            self.resource_list.addItem(item)
        self.preview = QPlainTextEdit(readOnly=True)
        self.preview.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.preview.setPlaceholderText("Select a resource to preview it.")
        self.resource_list.currentItemChanged.connect(self._show_preview)
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(self.resource_list)
        splitter.addWidget(self.preview)
        layout.addWidget(QLabel(f"Resources that need trust ({len(request.resources)}):"))
        layout.addWidget(splitter, 1)

        buttons = QHBoxLayout()
        for option in request.options:
            button = QPushButton(option.label)
            button.setToolTip(self._option_tooltip(option))
            button.clicked.connect(lambda _checked=False, o=option: self.choose(o))
            buttons.addWidget(button)
            self.option_buttons[option.kind] = button
        layout.addLayout(buttons)
        self._preselect(saved)
        self.resize(760, 560)

    @classmethod
    def for_saved_decision(cls, cwd: str, store: TrustStore, parent: QWidget | None = None) -> TrustDialog:
        """The settings form: options that save, with the current saved decision shown."""
        folder = strict_canonical(cwd) or cwd
        saved: TrustEntry | None = None
        error: str | None = None
        try:
            saved = store.lookup(folder)
        except TrustStoreError as exc:
            error = str(exc)
        request = TrustRequest(folder, tuple(trust_resources(folder)), tuple(trust_options(folder)))
        return cls(request, parent, saved=saved, store=store, store_error=error)

    def _saved_text(self, saved: TrustEntry | None) -> str:
        if saved is None:
            return "Saved decision: none"
        word = "trusted" if saved.decision else "untrusted"
        inherited = f" (inherited from {saved.path})" if saved.path != self.request.folder else ""
        return f"Saved decision: {word} ({saved.path}){inherited}"

    @staticmethod
    def _option_tooltip(option: TrustOption) -> str:
        if not option.updates:
            return "Applies to this session only; nothing is saved."
        return "Saves: " + ", ".join(
            f"{u.path} → {'removed' if u.decision is None else ('trusted' if u.decision else 'untrusted')}"
            for u in option.updates
        )

    def _preselect(self, saved: TrustEntry | None) -> None:
        if saved is None:
            return
        if not saved.decision:
            kind = "distrust"
        else:
            kind = "trust" if saved.path == self.request.folder else "trust-parent"
        button = self.option_buttons.get(kind)
        if button is not None:
            button.setDefault(True)
            button.setFocus()

    def _store_error_row(self, message: str) -> QWidget:
        row = QWidget()
        box = QHBoxLayout(row)
        box.setContentsMargins(0, 0, 0, 0)
        label = QLabel(f"<b>trust.json cannot be used:</b> {_escape(message)}")
        label.setWordWrap(True)
        box.addWidget(label, 1)
        if self._store is not None:
            reset = QPushButton("Back up and reset")
            reset.clicked.connect(self._backup_and_reset)
            box.addWidget(reset)
        self.store_error_label = label
        return row

    def _backup_and_reset(self) -> None:
        assert self._store is not None
        try:
            backup = self._store.backup_and_reset()
        except OSError as exc:
            self.store_error_label.setText(f"Backing up trust.json failed: {_escape(str(exc))}")
            return
        self.store_error_label.setText(
            f"trust.json was moved to {_escape(str(backup))}; you can decide again."
        )

    def _show_preview(self, current: QListWidgetItem | None, _previous: QListWidgetItem | None) -> None:
        self.preview.setPlainText(preview_text(current.data(PATH_ROLE)) if current is not None else "")

    def choose(self, option: TrustOption) -> None:
        if self._store is not None and option.updates:
            try:
                self._store.set_many(option.updates)
            except (TrustStoreError, OSError) as exc:
                QMessageBox.warning(self, "Trust not saved", f"The decision could not be saved: {exc}")
                return
        self.chosen = option
        self.accept()


async def ask_trust(request: TrustRequest, parent: QWidget | None = None) -> TrustOption | None:
    """Show the dialog without blocking the event loop; the chosen option, or None if dismissed."""
    return await _show(TrustDialog(request, parent))


async def _show(dialog: TrustDialog) -> TrustOption | None:
    modal = Qt.WindowModality.WindowModal if dialog.parent() else Qt.WindowModality.ApplicationModal
    dialog.setWindowModality(modal)
    future: asyncio.Future[TrustOption | None] = asyncio.get_running_loop().create_future()

    def settle(_result: int) -> None:
        if not future.done():
            future.set_result(dialog.chosen)

    dialog.finished.connect(settle)
    dialog.open()
    try:
        return await future
    finally:
        dialog.close()
        dialog.deleteLater()


class TrustPrompter:
    """The GUI's trust asker with fingerprints: give `prompter.ask` to the engine's TrustResolver."""

    def __init__(
        self, store: TrustStore, fingerprints: FingerprintStore, parent: QWidget | None = None
    ) -> None:
        self.store = store
        self.fingerprints = fingerprints
        self.parent = parent

    async def ask(self, request: TrustRequest, changed: Sequence[str] = ()) -> TrustOption | None:
        option = await _show(TrustDialog(request, self.parent, changed=changed))
        if option is not None and option.updates:
            self._record(request)
        return option

    def record(self, request: TrustRequest) -> None:
        """Remember what `request` listed, so a later change to those resources asks again."""
        self._record(request)

    def _record(self, request: TrustRequest) -> None:
        # Without a fingerprint piwork simply will not notice later changes; the decision still holds.
        with contextlib.suppress(OSError, PiworkError):
            self.fingerprints.record(request.folder, compute_fingerprint(request.resources))

    def needs_recheck(self, state: TrustState) -> bool:
        """A saved decision whose gated resources changed since the user last decided."""
        return state.source == "saved" and self.fingerprints.changed(state.cwd, state.resources)

    async def recheck(self, state: TrustState) -> TrustState:
        """Ask again if `needs_recheck`; the answer is saved through the engine's store."""
        if not self.needs_recheck(state):
            return state
        request = TrustRequest(
            state.cwd, state.resources, tuple(trust_options(state.cwd, include_session_only=True))
        )
        paths = [resource.path for resource in state.resources]
        option = await self.ask(request, changed=paths)
        if option is None:
            return TrustState(state.cwd, False, "dismissed", None, state.resources, state.warnings)
        if not option.updates:
            return TrustState(
                state.cwd, option.trusted, "session-only", None, state.resources, state.warnings
            )
        try:
            self.store.set_many(option.updates)
        except (TrustStoreError, OSError) as exc:
            warnings = (*state.warnings, f"The trust decision could not be saved: {exc}")
            return TrustState(state.cwd, option.trusted, "prompt", None, state.resources, warnings)
        return TrustState(
            state.cwd, option.trusted, "prompt", option.saved_path, state.resources, state.warnings
        )
