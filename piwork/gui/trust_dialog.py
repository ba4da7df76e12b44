"""TrustDialog: asks whether piwork may load a project folder's trust-gated resources.

Startup use (the engine decides when to ask): give a `TrustPrompter`'s asker to the engine's resolver,
which writes the chosen option's updates to trust.json itself::

    prompter = TrustPrompter(store, fingerprints, window)
    resolver = TrustResolver(store, default_policy, ask=prompter.ask)

`prompter.ask` opens the dialog window-modally without blocking the event loop and resolves to the chosen
`TrustOption`, or None when the user dismissed it (the engine then treats the project as untrusted and
saves nothing).

Every form shows what would load: a tree of each gated resource's files (listed off the GUI thread)
and the selected file's text, headed by what the agent would see it as (see `trust_review`).
"Do not trust" is the default button, so Enter never trusts.

Project → Trust (Pi's /trust): `TrustDialog.for_saved_decision(cwd, store)` offers every option
(saving, or this session only), marks the saved decision, names where it is inherited from, can
forget it, and writes the choice through `TrustStore.set_many`. A corrupt trust.json is reported and
can be backed up and reset from the dialog; it is never overwritten silently.

Asking again when gated resources changed: `TrustPrompter` wraps the startup asker and records,
after each saved decision, a fingerprint (engine's `FingerprintStore`) and a snapshot of the files
(engine's `SnapshotStore`). `TrustPrompter.recheck(state)` takes a saved decision and, when those
resources changed since, asks again with the added, removed and modified files and their diffs, and
writes the new answer through `TrustStore`.

`TrustPrompter.before_asking`, when set, is awaited before any dialog opens: the window uses it to hold the
question back (behind a bar) while the user is typing a message, so the dialog never takes their keys.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import html
import os
from collections.abc import Awaitable, Callable, Sequence

import shiboken6
from PySide6.QtCore import Qt
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QDialog,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from piwork.core import safe_read
from piwork.core.errors import PiworkError
from piwork.core.resources import (
    FileChange,
    FingerprintStore,
    Snapshot,
    SnapshotStore,
    TrustEntry,
    TrustOption,
    TrustReading,
    TrustRequest,
    TrustResource,
    TrustState,
    TrustStore,
    TrustStoreError,
    TrustUpdate,
    compare,
    display_path,
    read_for_review,
    strict_canonical,
    take_snapshot,
    trust_options,
    trust_resources,
)
from piwork.gui.background import BackgroundTasks
from piwork.gui.dialogs import tell
from piwork.gui.inert_text import plain_tip
from piwork.gui.trust_review import ResourceReview, change_summary
from piwork.gui.window_flags import dialog_buttons

PREVIEW_BYTES = 64 * 1024
PREVIEW_FILES = 200

_EXPLANATION = (
    "Trusting this folder lets piwork load its <code>.pi</code> settings and resources (skills, prompt "
    "templates, SYSTEM.md / APPEND_SYSTEM.md), its <code>.agents/skills</code>, run project plugins and use "
    "project packages. Context files such as AGENTS.md are read either way. Trust is not a sandbox: tools "
    "still run with your permissions. Only trust folders whose contents you know."
)


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
        data, _size = safe_read.read_start(path, safe_read.GATED_FILE, PREVIEW_BYTES + 1)
    except OSError as exc:
        return f"Cannot read {path}: {exc.strerror or exc}"
    text = data[:PREVIEW_BYTES].decode("utf-8", errors="replace")
    return text + ("\n… (preview cut at 64 KB)" if len(data) > PREVIEW_BYTES else "")


_SavedDecision = tuple[str, TrustEntry | None, str | None, tuple[TrustResource, ...]]


def _saved_decision(cwd: str, store: TrustStore) -> _SavedDecision:
    """The folder's canonical path, its saved decision (or why trust.json cannot be read) and its gated
    resources (blocking)."""
    folder = strict_canonical(cwd) or cwd
    saved: TrustEntry | None = None
    error: str | None = None
    try:
        saved = store.lookup(folder)
    except TrustStoreError as exc:
        error = str(exc)
    return folder, saved, error, tuple(trust_resources(folder))


class TrustDialog(QDialog):
    """Asks about one folder; shows every gated resource's files and, on a re-ask, what changed.

    ``changes`` is None for a first ask; on a re-ask it lists the files added, removed or modified
    since the last decision (``changes_unknown``: piwork has no copy of how they looked then).
    Enter never trusts: "Do not trust" is the default button.
    """

    def __init__(
        self,
        request: TrustRequest,
        parent: QWidget | None = None,
        *,
        saved: TrustEntry | None = None,
        store: TrustStore | None = None,
        store_error: str | None = None,
        changes: Sequence[FileChange] | None = None,
        changes_unknown: bool = False,
    ) -> None:
        super().__init__(parent)
        dialog_buttons(self, maximize=True)
        self.request = request
        self.chosen: TrustOption | None = None
        self.forgot = False  # the settings form's "Forget saved decision" was used
        self._store = store  # when given, the dialog writes the choice itself (settings use), in a worker
        self._saves = BackgroundTasks()
        self._saved = saved
        self.option_buttons: dict[str, QPushButton] = {}
        reasking = changes is not None or changes_unknown
        self.setWindowTitle("Trust this project folder again?" if reasking else "Trust this project folder?")
        folder = request.folder
        header = QLabel(
            f"<b>{html.escape(os.path.basename(folder) or folder, quote=False)}</b><br><code>{html.escape(folder, quote=False)}</code>"
            f"<p>{_EXPLANATION}</p>"
        )
        header.setWordWrap(True)
        header.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout = QVBoxLayout(self)
        layout.addWidget(header)
        self.changes_label = QLabel(self._changes_text(changes, changes_unknown))
        self.changes_label.setWordWrap(True)
        self.changes_label.setObjectName("trustChanges")
        self.changes_label.setVisible(reasking)
        layout.addWidget(self.changes_label)
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

        count = len(request.resources)
        layout.addWidget(
            QLabel(
                f"What would load ({count} resource{'' if count == 1 else 's'}) — select a file to read it:"
            )
        )
        self.review = ResourceReview(folder, request.resources, changes, self, request.reading)
        layout.addWidget(self.review, 1)

        buttons = QHBoxLayout()
        self.forget_button: QPushButton | None = None
        if store is not None and saved is not None:
            self.forget_button = QPushButton("Forget saved decision")
            self.forget_button.setAutoDefault(False)
            self.forget_button.setToolTip(plain_tip(self._forget_tooltip(saved)))
            self.forget_button.clicked.connect(self.forget)
            buttons.addWidget(self.forget_button)
        buttons.addStretch(1)
        for option in request.options:
            button = QPushButton(option.label)
            button.setToolTip(plain_tip(self._option_tooltip(option)))
            button.clicked.connect(lambda _checked=False, o=option: self.choose(o))
            buttons.addWidget(button)
            self.option_buttons[option.kind] = button
        layout.addLayout(buttons)
        self._mark_saved(saved)
        self._make_safe_choice_default()
        # The one reading of the gated files the question shows and a decision covers: the engine's,
        # or taken now, off the GUI thread (a choice made before it is done waits for it).
        self._reading_pending = request.reading is None
        self._waiting_choice: TrustOption | None = None
        if self._reading_pending:
            self.review.jobs.run(
                lambda: read_for_review(request.folder, request.resources), self._reading_done
            )
        self.resize(920, 660)

    def _reading_done(self, result: object) -> None:
        self._reading_pending = False
        if isinstance(result, TrustReading):
            self.request = dataclasses.replace(self.request, reading=result)
            self.review.reading = result
        waiting, self._waiting_choice = self._waiting_choice, None
        if waiting is not None:
            self.choose(waiting)

    @classmethod
    def for_saved_decision(
        cls, cwd: str, store: TrustStore, parent: QWidget | None = None, *, session_state: str | None = None
    ) -> TrustDialog:
        """The Project → Trust form: every option (saving or this session only), the saved decision
        shown and forgettable; ``session_state`` says what holds in this session (it may differ from the
        saved decision: a choice for this session only, --approve). Blocking: reads trust.json and lists
        the folder's gated resources (see ``read_saved_decision``)."""
        return cls._saved_decision_form(_saved_decision(cwd, store), store, parent, session_state)

    @classmethod
    async def read_saved_decision(
        cls, cwd: str, store: TrustStore, parent: QWidget | None = None, *, session_state: str | None = None
    ) -> TrustDialog:
        """``for_saved_decision`` with trust.json and the folder read in a worker."""
        found = await asyncio.to_thread(_saved_decision, cwd, store)
        return cls._saved_decision_form(found, store, parent, session_state)

    @classmethod
    def _saved_decision_form(
        cls, found: _SavedDecision, store: TrustStore, parent: QWidget | None, session_state: str | None
    ) -> TrustDialog:
        folder, saved, error, resources = found
        options = tuple(trust_options(folder, include_session_only=True))
        request = TrustRequest(folder, resources, options)
        dialog = cls(request, parent, saved=saved, store=store, store_error=error)
        if session_state:
            dialog.saved_label.setText(f"{dialog.saved_label.text()}\nThis session: {session_state}")
        return dialog

    @staticmethod
    def _changes_text(changes: Sequence[FileChange] | None, unknown: bool) -> str:
        if unknown:
            return (
                "<b>The resources that need trust changed since your last decision</b>, so piwork asks "
                "again. It has no copy of how they looked then, so everything is shown as it is now."
            )
        if changes is None:
            return ""
        return (
            "<b>The resources that need trust changed since your last decision</b>, so piwork asks "
            f"again: {html.escape(change_summary(changes), quote=False)}. The changed files are marked in the list; "
            "“What changed” shows their lines."
        )

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

    def _forget_tooltip(self, saved: TrustEntry) -> str:
        text = f"Removes the decision for {saved.path} from trust.json; piwork asks again on reload."
        if saved.path != self.request.folder:
            text += " That decision also covers the other folders under it."
        return text

    def _saved_kind(self, saved: TrustEntry | None) -> str | None:
        if saved is None:
            return None
        if not saved.decision:
            return "distrust"
        return "trust" if saved.path == self.request.folder else "trust-parent"

    def _mark_saved(self, saved: TrustEntry | None) -> None:
        """Show which option matches the saved decision (bold), without making it the default."""
        kind = self._saved_kind(saved) or ""
        button = self.option_buttons.get(kind)
        option = next((o for o in self.request.options if o.kind == kind), None)
        if button is not None and option is not None:
            font = button.font()
            font.setBold(True)
            button.setFont(font)
            button.setToolTip(plain_tip(self._option_tooltip(option) + "\nThis is your saved decision."))

    def _make_safe_choice_default(self) -> None:
        """Enter (and the focus a dialog opens with) lands on "Do not trust", never on a trust option."""
        safe = self.option_buttons.get("distrust") or self.option_buttons.get("distrust-session")
        for button in self.option_buttons.values():
            button.setDefault(button is safe)
        if safe is not None:
            safe.setFocus()

    def _store_error_row(self, message: str) -> QWidget:
        row = QWidget()
        box = QHBoxLayout(row)
        box.setContentsMargins(0, 0, 0, 0)
        label = QLabel(f"<b>trust.json cannot be used:</b> {html.escape(message, quote=False)}")
        label.setWordWrap(True)
        box.addWidget(label, 1)
        if self._store is not None:
            reset = QPushButton("Back up and reset")
            reset.setAutoDefault(False)
            reset.clicked.connect(self._backup_and_reset)
            box.addWidget(reset)
        self.store_error_label = label
        return row

    def _backup_and_reset(self) -> None:
        self._saves.spawn(self._back_up())

    async def _back_up(self) -> None:
        assert self._store is not None
        try:  # renames trust.json under its lock: in a worker
            backup = await asyncio.to_thread(self._store.backup_and_reset)
        except OSError as exc:
            if not shiboken6.isValid(self):
                return
            self.store_error_label.setText(
                f"Backing up trust.json failed: {html.escape(str(exc), quote=False)}"
            )
            return
        if not shiboken6.isValid(self):
            return
        self.store_error_label.setText(
            f"trust.json was moved to {html.escape(str(backup), quote=False)}; you can decide again."
        )

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self._make_safe_choice_default()  # the focus a shown dialog gives out goes to the safe choice

    def choose(self, option: TrustOption) -> None:
        if self._reading_pending and option.trusted:  # covers the reading under way: answered once done
            self._waiting_choice = option
            return
        if self._store is not None and option.updates:
            self._saves.spawn(self._save(option.updates, option))
            return
        self.chosen = option
        self.accept()

    def forget(self) -> None:
        """Remove the saved decision (where it is saved); the next reload asks again."""
        if self._store is None or self._saved is None:
            return
        self._saves.spawn(self._save([TrustUpdate(self._saved.path, None)], None))

    @property
    def saving(self) -> bool:
        """A choice is being written to trust.json (in a worker)."""
        return self._saves.running

    async def _save(self, updates: Sequence[TrustUpdate], option: TrustOption | None) -> None:
        """Write ``updates`` to trust.json in a worker (a locked read-modify-write), the buttons still
        meanwhile; then close with ``option`` chosen (None: the saved decision was forgotten)."""
        assert self._store is not None
        buttons = [*self.option_buttons.values(), *([self.forget_button] if self.forget_button else [])]
        for button in buttons:
            button.setEnabled(False)
        note = self.reload_note.text()
        self.reload_note.setText(
            "Forgetting the saved decision in trust.json…"
            if option is None
            else "Saving the decision in trust.json…"
        )
        try:
            await asyncio.to_thread(self._store.set_many, updates)
        except (TrustStoreError, OSError) as exc:
            if shiboken6.isValid(self):
                self.reload_note.setText(note)
                for button in buttons:
                    button.setEnabled(True)
                if option is None:
                    tell(self, "Decision not forgotten", f"trust.json could not be changed: {exc}")
                else:
                    tell(self, "Trust not saved", f"The decision could not be saved: {exc}")
            return
        if not shiboken6.isValid(self):
            return
        if option is None:
            self.forgot = True
        else:
            self.chosen = option
        self.accept()

    def done(self, result: int) -> None:
        self.review.shutdown()
        super().done(result)


async def _show(dialog: TrustDialog) -> tuple[TrustOption | None, TrustRequest]:
    """Show the dialog without blocking the event loop; the chosen option (None if dismissed) and the
    request as answered (with the reading it showed)."""
    modal = Qt.WindowModality.WindowModal if dialog.parent() else Qt.WindowModality.ApplicationModal
    dialog.setWindowModality(modal)
    future: asyncio.Future[tuple[TrustOption | None, TrustRequest]] = (
        asyncio.get_running_loop().create_future()
    )

    def settle(_result: int) -> None:
        if not future.done():
            future.set_result((dialog.chosen, dialog.request))

    dialog.finished.connect(settle)
    dialog.open()
    try:
        return await future
    finally:
        dialog.close()
        dialog.deleteLater()


class TrustPrompter:
    """The GUI's trust asker with memory: give `prompter.ask` to the engine's TrustResolver.

    Every question shows one reading of the gated files (the request's, taken by the engine before
    asking, or taken here), and after each saved decision the prompter records the fingerprint (to
    notice changes) and the snapshot (to show them as a diff) of that same reading: what the user was
    shown is what the decision covers, whatever happened to the files after the dialog read them.
    """

    def __init__(
        self,
        store: TrustStore,
        fingerprints: FingerprintStore,
        parent: QWidget | None = None,
        snapshots: SnapshotStore | None = None,
    ) -> None:
        self.store = store
        self.fingerprints = fingerprints
        self.snapshots = snapshots or SnapshotStore(fingerprints.path.parent)
        self.parent = parent
        # Awaited before a dialog opens (argument: whether this asks again after a change).
        self.before_asking: Callable[[bool], Awaitable[None]] | None = None
        # Told as a question opens (argument: what it asks), e.g. to notify the desktop.
        self.asking: list[Callable[[str], None]] = []
        # The question waiting for the user, held back or shown (None: none), and who follows it (the inbox).
        self.pending: str | None = None
        self.pending_changed: list[Callable[[str | None], None]] = []
        self.dialog: TrustDialog | None = None  # the question's dialog while it is open

    def _set_pending(self, question: str | None) -> None:
        self.pending = question
        for listener in self.pending_changed:
            listener(question)

    async def ask(
        self,
        request: TrustRequest,
        changes: Sequence[FileChange] | None = None,
        changes_unknown: bool = False,
    ) -> TrustOption | None:
        question = f"Trust the project folder {os.path.basename(os.path.normpath(request.folder))}?"
        self._set_pending(question)
        try:
            if self.before_asking is not None:
                await self.before_asking(changes is not None or changes_unknown)
            dialog = TrustDialog(request, self.parent, changes=changes, changes_unknown=changes_unknown)
            for listener in self.asking:
                listener(question)
            self.dialog = dialog
            option, answered = await _show(dialog)
        finally:
            self.dialog = None
            self._set_pending(None)
        if option is not None and option.updates:
            await asyncio.to_thread(self._record, answered)
        return option

    def record(self, request: TrustRequest) -> None:
        """Remember what `request` showed (its reading), so a later change to those resources asks
        again (blocking: call it off the GUI thread)."""
        self._record(request)

    def _record(self, request: TrustRequest) -> None:
        # Without these piwork simply will not notice (or show) later changes; the decision still holds.
        with contextlib.suppress(OSError, PiworkError):
            reading = request.reading or read_for_review(request.folder, request.resources)
            self.fingerprints.record(request.folder, reading.fingerprint)
            self.snapshots.save(reading.snapshot)

    def changes_since(self, folder: str, resources: Sequence[TrustResource]) -> list[FileChange] | None:
        """Files added, removed or modified since the recorded snapshot (None: no snapshot). Blocking."""
        old = self.snapshots.load(folder)
        if old is None:
            return None
        return compare(old, take_snapshot(folder, resources), display=lambda p: display_path(p, folder))

    def needs_recheck(self, state: TrustState) -> bool:
        """A saved decision whose gated resources changed since the user last decided (blocking: it
        fingerprints the gated files)."""
        return state.source == "saved" and self.fingerprints.changed(state.cwd, state.resources)

    async def recheck(self, state: TrustState) -> TrustState:
        """Ask again if `needs_recheck`, showing what changed; the answer is saved through the store."""
        if not await asyncio.to_thread(self.needs_recheck, state):  # reads the gated files
            return state
        old = await asyncio.to_thread(self.snapshots.load, state.cwd)
        return await self.ask_about_changes(state, old)

    async def ask_about_changes(self, state: TrustState, old: Snapshot | None) -> TrustState:
        """Ask about ``state``'s folder again, showing what changed since ``old`` (None: not known); the
        answer is saved through the store, and a trusting answer carries the reading it was made on."""
        folder = state.cwd
        reading = await asyncio.to_thread(read_for_review, folder, state.resources)
        changes = (
            None if old is None else compare(old, reading.snapshot, display=lambda p: display_path(p, folder))
        )
        request = TrustRequest(
            folder, state.resources, tuple(trust_options(folder, include_session_only=True)), reading
        )
        option = await self.ask(request, changes=changes, changes_unknown=changes is None)
        reviewed = reading.snapshot if option is not None and option.trusted else None
        if option is None:
            return TrustState(folder, False, "dismissed", None, state.resources, state.warnings)
        if not option.updates:
            return TrustState(
                folder, option.trusted, "session-only", None, state.resources, state.warnings, reviewed
            )
        try:  # a locked read-modify-write of trust.json: in a worker
            await asyncio.to_thread(self.store.set_many, option.updates)
        except (TrustStoreError, OSError) as exc:
            warnings = (*state.warnings, f"The trust decision could not be saved: {exc}")
            return TrustState(folder, option.trusted, "prompt", None, state.resources, warnings, reviewed)
        return TrustState(
            folder, option.trusted, "prompt", option.saved_path, state.resources, state.warnings, reviewed
        )
