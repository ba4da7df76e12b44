"""The Context panel (a dock): X-ray of the next request, the context manifest, the governor log and a plot
of occupancy and billed tokens per request. It only shows what the context feed hands it and says what
the person asked for (jump somewhere, show an elided result's original, export the log)."""

from __future__ import annotations

import asyncio
import functools
from pathlib import Path

from PySide6.QtCore import QEvent, QModelIndex, QObject, QPoint, QSize, Qt, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QMenu,
    QMessageBox,
    QPushButton,
    QTableView,
    QTabWidget,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from piwork.core.context import GovernorDecision, Manifest, Xray, excludable, is_excluded
from piwork.core.workflows import AgentRuntime
from piwork.gui.background import BackgroundTasks
from piwork.gui.context.governor_log_model import GovernorLogModel, export_json
from piwork.gui.context.manifest_model import ManifestModel
from piwork.gui.context.usage_plot import UsagePlot
from piwork.gui.context.xray_model import JumpTarget, TargetRole, XrayModel, XrayTable
from piwork.gui.dialogs import ask_save_file
from piwork.gui.flow_layout import FlowLayout
from piwork.gui.inert_text import plain_label, plain_tip

MANIFEST_WIDE_EMS = 40  # below this width the manifest shows layer numbers only and no reason column


def _table(model: object) -> QTableView:
    view = QTableView()
    view.setModel(model)  # type: ignore[arg-type]
    view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    view.verticalHeader().hide()
    view.verticalHeader().setDefaultSectionSize(view.fontMetrics().height() + 6)
    view.setWordWrap(False)
    view.setTextElideMode(Qt.TextElideMode.ElideMiddle)
    view.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
    view.horizontalHeader().setStretchLastSection(False)
    return view


class ContextPanel(QWidget):
    jumpRequested = Signal(object)  # JumpTarget
    showOriginalRequested = Signal(str)  # tool call id of an elided result
    preflightRequested = Signal()
    # "open" | "exclude" | "include" | "rebuild-index" | "trust", ManifestEntry
    manifestActionRequested = Signal(str, object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("contextPanel")
        self._tasks = BackgroundTasks()
        self._manifest_fit_pending = False  # the manifest's columns are fitted when its tab next shows
        self.tabs = QTabWidget(self)

        # X-ray
        self.xray_model = XrayModel(self)
        self.xray_view = _table(self.xray_model)
        self.xray_view.setAccessibleName("Context X-ray")
        self.xray_view.setAccessibleDescription(
            "What the next request holds, part by part, with tokens and share"
        )
        self.xray_view.setObjectName("xrayView")
        metrics = self.xray_view.fontMetrics()  # fixed widths: a refresh never measures every row
        # Sized for the usual values (a rarer longer kind elides) so Source keeps room in a narrow dock;
        # Tokens fits "counting…" (a row not counted yet), a little wider than "999,999".
        for column, sample in ((1, "system prompt"), (2, "counting…"), (3, "100.0%")):
            self.xray_view.horizontalHeader().setSectionResizeMode(column, QHeaderView.ResizeMode.Interactive)
            self.xray_view.setColumnWidth(column, metrics.horizontalAdvance(sample) + 14)
        self.xray_view.activated.connect(self._on_xray_activated)
        self._source_room = metrics.horizontalAdvance("read src/app.py") + 16
        self._kind_width = self.xray_view.columnWidth(1)
        # A model reset lays the columns out again and shows Kind: judge again when its width changes.
        self.xray_view.horizontalHeader().sectionResized.connect(
            lambda column, _old, _new: self._fit_xray_columns() if column == 1 else None
        )
        self.xray_view.viewport().installEventFilter(
            self
        )  # a narrow dock drops Kind before Source becomes unreadable
        self.xray_summary = plain_label("No session yet.")
        self.xray_summary.setObjectName("xraySummary")
        self.xray_summary.setWordWrap(True)
        preflight = QPushButton("Preflight…")
        preflight.setToolTip("Check the next request against the marks (/context preflight)")
        preflight.clicked.connect(self.preflightRequested)
        xray_head = QHBoxLayout()
        xray_head.addWidget(self.xray_summary, 1)
        xray_head.addWidget(preflight)
        self.tabs.addTab(self._page(xray_head, self.xray_view), "X-ray")

        # Manifest
        self.manifest_model = ManifestModel(self)
        self.manifest_view = _table(self.manifest_model)
        self.manifest_view.setAccessibleName("Context manifest")
        self.manifest_view.setAccessibleDescription("The files and notes recorded for the current task")
        self.manifest_view.setObjectName("manifestView")
        self.manifest_view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.manifest_view.customContextMenuRequested.connect(self._manifest_menu)
        self.manifest_view.activated.connect(lambda index: self.run_manifest_action("open", index))
        header = self.manifest_view.horizontalHeader()
        # Layer, status and tokens as wide as what they hold, the path what is left (elided in its middle),
        # the reason capped; a narrow dock shows layer numbers only and leaves the reason to the tooltip,
        # so every column stays in the dock.
        for column in (0, 1, 3, 4):  # measured in _fit_manifest_columns, only while the tab shows
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)  # no measuring: what is left
        self.manifest_model.modelReset.connect(self._fit_manifest_columns)
        self.manifest_view.installEventFilter(
            self
        )  # shown: the columns wait for it (see _fit_manifest_columns)
        self.manifest_view.viewport().installEventFilter(self)  # its width decides the narrow layout
        self.manifest_summary = plain_label("No context manifest recorded for this task.")
        self.manifest_summary.setWordWrap(True)
        copy = QPushButton("Copy as text")
        copy.setAccessibleDescription("Copy the context manifest as plain text")
        copy.clicked.connect(self.copy_manifest)
        manifest_head = QHBoxLayout()
        manifest_head.addWidget(self.manifest_summary, 1)
        manifest_head.addWidget(copy)
        self.tabs.addTab(self._page(manifest_head, self.manifest_view), "Manifest")

        # Governor log
        self.log_model = GovernorLogModel(self)
        self.log_view = QTreeView()
        self.log_view.setAccessibleName("Governor log")
        self.log_view.setAccessibleDescription("Each decision the context governor made, newest last")
        self.log_view.setObjectName("governorLogView")
        self.log_view.setModel(self.log_model)
        self.log_view.setUniformRowHeights(True)
        self.log_view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.log_view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.log_view.activated.connect(self._on_log_activated)
        metrics = self.log_view.fontMetrics()  # fixed widths from samples: appending rows measures nothing
        samples = {
            0: "00:00:00 ",
            1: "999",
            3: "toolRounds, repeat",
            4: "999,999",
            5: "999,999",
            6: "999,999",
        }
        samples |= {7: "99,999", 8: "99 (+99 kept)"}
        for column, sample in samples.items():
            self.log_view.setColumnWidth(column, metrics.horizontalAdvance(sample) + 24)
        self.log_view.setColumnWidth(
            0, metrics.horizontalAdvance("00:00:00") + self.log_view.indentation() + 12
        )
        self.log_view.setColumnWidth(2, metrics.horizontalAdvance("no-op: below threshold") + 16)
        self.log_view.header().setStretchLastSection(True)
        self.log_model.rowsInserted.connect(self._span_children)
        self.log_model.modelReset.connect(self._span_children)
        self.show_original_button = QPushButton("Show original")
        self.show_original_button.setAccessibleDescription(
            "Show the text the governor replaced in the selected decision"
        )
        self.show_original_button.setEnabled(False)
        self.show_original_button.clicked.connect(self.show_selected_original)
        self.export_button = QPushButton("Export JSON…")
        self.export_button.setAccessibleDescription("Save the governor log as a JSON file")
        self.export_button.clicked.connect(lambda: self.export_log())
        self.log_view.selectionModel().currentChanged.connect(self._on_log_current)
        self.log_summary = plain_label("No governor decisions yet.")
        self.log_summary.setWordWrap(True)  # a narrow dock wraps it rather than widening the window
        log_buttons = FlowLayout(spacing=4)  # stacked in a narrow dock
        log_buttons.addWidget(self.show_original_button)
        log_buttons.addWidget(self.export_button)
        log_head = QHBoxLayout()
        log_head.addWidget(self.log_summary, 1)
        log_head.addLayout(log_buttons)
        self.tabs.addTab(self._page(log_head, self.log_view), "Governor log")

        # Plot
        self.plot = UsagePlot(self)
        self.tabs.addTab(self.plot, "Usage plot")

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.tabs)

    @staticmethod
    def _page(head: QHBoxLayout, body: QWidget) -> QWidget:
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(head)
        layout.addWidget(body, 1)
        return page

    def sizeHint(self) -> QSize:
        return QSize(560, 420)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.xray_view.viewport() and event.type() == QEvent.Type.Resize:
            self._fit_xray_columns()
        manifest = getattr(self, "manifest_view", None)  # made after the X-ray's view, which asks first
        shown = self._manifest_fit_pending and event.type() == QEvent.Type.Show and watched is manifest
        resized = (
            manifest is not None and event.type() == QEvent.Type.Resize and watched is manifest.viewport()
        )
        if shown or resized:
            self._fit_manifest_columns()
        return super().eventFilter(watched, event)

    def _fit_xray_columns(self) -> None:
        """Hide the Kind column (its words stay in each row's tooltip) when Source would get too little room."""
        view = self.xray_view
        if not view.isColumnHidden(1) and view.columnWidth(1) > 0:
            self._kind_width = view.columnWidth(1)  # the person may have dragged it
        room = view.viewport().width() - view.columnWidth(2) - view.columnWidth(3) - self._kind_width
        hide = room < self._source_room
        if hide != view.isColumnHidden(1):
            view.setColumnHidden(1, hide)

    # ---- content --------------------------------------------------------------------------------

    def attach(self, runtime: AgentRuntime) -> None:
        self.set_project_dir(runtime.resources.cwd)

    def detach(self) -> None:
        """The figures come from the context feed, which lets go of the session itself."""

    def shutdown(self) -> None:
        """No background work of its own."""

    def set_project_dir(self, project_dir: str | None) -> None:
        """Context files inside the project show relative to it (the full path stays in the tooltip)."""
        self.xray_model.set_project_dir(project_dir)

    def set_xray(
        self,
        xray: Xray,
        message_parts_index: list[int] | None,
        elided: frozenset[int] = frozenset(),
        table: XrayTable | None = None,
    ) -> None:
        selected = self.xray_view.currentIndex()
        target = selected.data(TargetRole) if selected.isValid() else None
        self.xray_model.set_xray(xray, message_parts_index, elided, table)
        stubs = f", {len(elided)} elided by the governor" if elided else ""
        tokenizer = xray.tokenizer.removeprefix("≈").strip()
        if xray.counting:
            counted = len(xray.parts) - xray.counting
            self.xray_summary.setText(
                f"Next request: counting tokens ({tokenizer})… {xray.total:,} so far in {counted:,} of "
                f"{len(xray.parts):,} parts{stubs}"
            )
        else:
            self.xray_summary.setText(
                f"Next request: {xray.total:,} tokens in {len(xray.parts)} parts{stubs} (≈ {tokenizer})"
            )
        if target is not None:  # keep the selection on the same source across refreshes
            position = self.xray_model.position_of(lambda row: row.target == target)
            if position is not None:
                self.xray_view.setCurrentIndex(self.xray_model.index(position, 0))

    def _fit_manifest_columns(self) -> None:
        view, metrics = self.manifest_view, self.manifest_view.fontMetrics()
        # measuring every row's text costs milliseconds: a hidden tab (a session opening) waits until shown
        self._manifest_fit_pending = not view.isVisible()
        if self._manifest_fit_pending:
            return
        width = view.viewport().width()
        narrow = width < metrics.horizontalAdvance("m" * MANIFEST_WIDE_EMS)
        self.manifest_model.set_short_layers(narrow)
        view.setColumnHidden(4, narrow)
        for column in (0, 1, 3):
            view.resizeColumnToContents(column)
        if not narrow:
            view.resizeColumnToContents(4)
            view.setColumnWidth(4, min(view.columnWidth(4), metrics.horizontalAdvance("m" * 20)))

    def set_manifest(self, manifest: Manifest | None, cwd: str | None) -> None:
        self.manifest_model.set_manifest(manifest, cwd)
        if manifest is None:
            self.manifest_summary.setText("No context manifest recorded for this task.")
        else:
            loaded = sum(1 for e in manifest.entries if e.loaded)
            self.manifest_summary.setText(
                f"Task {manifest.task_id or '—'}: {loaded} of {len(manifest.entries)} entries loaded"
                f" · tokenizer {manifest.tokenizer}"
                + (f" · verify: {manifest.verify}" if manifest.verify else "")
            )

    def set_decisions(self, decisions: list[GovernorDecision]) -> None:
        self.log_model.set_decisions(decisions)
        self._update_log_summary()

    def add_decision(self, decision: GovernorDecision) -> None:
        self.log_model.add_decision(decision)
        self._update_log_summary()

    def _update_log_summary(self) -> None:
        decisions = self.log_model.decisions
        projected = sum(1 for d in decisions if d.decision in ("projected", "forced"))
        saved = sum(d.savings for d in decisions if d.decision in ("projected", "forced"))
        self.log_summary.setText(
            f"{len(decisions)} decision{'s' if len(decisions) != 1 else ''}, {projected} projected, "
            f"{saved:,} tokens saved"
            if decisions
            else "No governor decisions yet."
        )

    def _span_children(self, *_args: object) -> None:
        for row in range(self.log_model.rowCount()):
            parent = self.log_model.index(row, 0)
            for child in range(self.log_model.rowCount(parent)):
                self.log_view.setFirstColumnSpanned(child, parent, True)

    # ---- actions --------------------------------------------------------------------------------

    def _on_xray_activated(self, index: QModelIndex) -> None:
        target = index.data(TargetRole)
        if isinstance(target, JumpTarget):
            self.jumpRequested.emit(target)

    def _on_log_current(self, current: QModelIndex, _previous: QModelIndex) -> None:
        self.show_original_button.setEnabled(self.log_model.elided_at(current) is not None)

    def _on_log_activated(self, index: QModelIndex) -> None:
        item = self.log_model.elided_at(index)
        if item is not None:
            self.showOriginalRequested.emit(item.tool_call_id)

    def show_selected_original(self) -> None:
        self._on_log_activated(self.log_view.currentIndex())

    def manifest_actions(self, index: QModelIndex) -> list[tuple[str, str]]:
        """(action, menu text) offered for a manifest row."""
        row = self.manifest_model.row_at(index.row()) if index.isValid() else None
        entry = row.entry if row is not None else None
        if entry is None:
            return []
        actions = [("open", "Show in Resources" if entry.layer == 1 else "Open File")]
        if is_excluded(entry):
            actions.append(("include", "Include again"))
        elif excludable(entry):
            actions.append(
                ("exclude", "Exclude for this task…" if entry.layer == 1 else "Exclude for this task")
            )
        if entry.kind in ("index", "pack"):
            actions.append(("rebuild-index", "Rebuild index (/context rebuild)"))
        if entry.status == "blocked-untrusted":
            actions.append(("trust", "Trust project…"))
        return actions

    def _manifest_menu(self, position: QPoint) -> None:
        index = self.manifest_view.indexAt(position)
        actions = self.manifest_actions(index)
        if not actions:
            return
        menu = QMenu(self)
        for action, text in actions:
            menu.addAction(text, functools.partial(self.run_manifest_action, action, index))
        menu.exec(self.manifest_view.viewport().mapToGlobal(position))

    def run_manifest_action(self, action: str, index: QModelIndex) -> None:
        """Do ``action`` (one of :meth:`manifest_actions`) on the manifest row at ``index``."""
        row = self.manifest_model.row_at(index.row()) if index.isValid() else None
        if row is not None and row.entry is not None:
            self.manifestActionRequested.emit(action, row.entry)

    def copy_manifest(self) -> None:
        manifest = self.manifest_model.manifest
        if manifest is not None:
            QGuiApplication.clipboard().setText(manifest.render_text(self.manifest_model.cwd))

    def export_log(self, path: str | None = None) -> asyncio.Task[Path | None] | None:
        """Write the governor log as JSON (metadata only) in a worker thread; asks where unless ``path``
        is given. The task's result is the file written (None if it could not be, which is shown)."""
        if path is None:
            return self._tasks.spawn(self._export_asking())
        if not path:
            return None
        text = export_json(self.log_model.decisions) + "\n"
        return self._tasks.spawn(self._write_log(Path(path), text))

    async def _export_asking(self) -> Path | None:
        answer = await ask_save_file(self, "Export Governor Log", "governor-log.json", "JSON (*.json)")
        if answer is None or not answer[0]:
            return None
        return await self._write_log(Path(answer[0]), export_json(self.log_model.decisions) + "\n")

    async def _write_log(self, target: Path, text: str) -> Path | None:
        try:
            await asyncio.to_thread(target.write_text, text, encoding="utf-8")
        except OSError as exc:
            box = QMessageBox(
                QMessageBox.Icon.Warning,
                "Governor log not exported",
                plain_tip(f"{target} could not be written: {exc.strerror or exc}"),
                parent=self,
            )
            box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
            box.open()
            return None
        return target
