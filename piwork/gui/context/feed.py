"""Feeds the budget meter and the Context panel from a live session, off the GUI thread.

The controller forwards every engine event here. Events only mark the figures stale; a single-shot timer
coalesces them (at most one refresh per ``STREAMING_INTERVAL_MS`` while a reply streams) and one refresh
at a time runs in the default executor: tokenizer loading, the X-ray of the next request and the billed
totals of today's telemetry files. The result comes back to the GUI thread as plain values and goes to the
views in one step.

Each refresh first counts the messages not counted yet (the whole transcript when a session opens, then
each new message), into the governor's own estimator when it uses the same tokenizer, so the governor's
next call finds them counted too. A cold count of a long session takes longer than a glance: past
``FIRST_SHOW_S`` the X-ray goes to the panel with what is counted so far and the rest marked as counting,
again every ``PROGRESS_S``, and complete when the count ends. The budget meter waits for the complete one.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import shiboken6
from PySide6.QtCore import QObject, QTimer, Signal

from piwork.core.agent import AgentEvent
from piwork.core.collector import paused_gc
from piwork.core.compaction import CompactionSettings, estimate_context_tokens
from piwork.core.context import (
    BilledSample,
    GovernorDecision,
    GovernorSettings,
    Manifest,
    Marks,
    OccupancySample,
    RequestShape,
    TokenEstimator,
    Xray,
    branch_usage_entries,
    build_xray,
    effective_marks,
    latest_contract,
    latest_exclusions,
    latest_manifest,
    with_exclusions,
    xray_message_rows,
)
from piwork.core.llm import TokenCounter, Tokenizers, ToolSpec
from piwork.core.resources import LoadedResources, PromptPart
from piwork.core.workflows import preflight, view_from_parts
from piwork.gui.context.billed_today import TodayBilled
from piwork.gui.context.history import History, read_history
from piwork.gui.context.reading import BilledFigures, MeterReading, Segments
from piwork.gui.context.request_figures import (
    Figures,
    Snapshot,
    change_key,
    changed_since,
    compacted_since,
    edited_since_reply,
    message_part_indices,
    reply_usages,
    samples_from_usages,
    working_set,
)
from piwork.gui.context.xray_model import XrayTable, xray_table
from piwork.gui.resources.tool_rows import tool_rows

log = logging.getLogger(__name__)

STREAMING_INTERVAL_MS = 1000  # while the agent runs: at most this often
IDLE_INTERVAL_MS = 30  # otherwise: right after the event burst
FIRST_SHOW_S = 0.04  # counting longer than this: the X-ray is shown with what is counted so far
PROGRESS_S = 0.5  # then again this often until the count ends
PROGRESS_SHARE = 4  # ... or less often: counting takes at least this many times as long as a partial X-ray
COUNT_SLICE_S = 0.1  # a count is cut in slices this long, to notice a session let go meanwhile
_REFRESH_EVENTS = frozenset(
    {
        "message_end",
        "tool_execution_end",
        "agent_end",
        "agent_settled",
        "model_changed",
        "compaction_end",
        "session_tree",
    }
)


class _LetGo(Exception):
    """The session a refresh was computing for has been let go (another opened, or the window quits)."""


class ContextFeed(QObject):
    readingChanged = Signal(object)  # MeterReading
    billedChanged = Signal(object)  # BilledFigures
    xrayChanged = Signal(object, object, object, object)  # Xray, message part indices, elided, XrayTable
    toolsChanged = Signal(object)  # list[ToolRow]: every tool, sent with the next request or not
    manifestChanged = Signal(object)  # Manifest | None
    decisionAdded = Signal(object)  # GovernorDecision
    decisionsReset = Signal(object)  # list[GovernorDecision]: a session opened (with its earlier log)
    seriesChanged = Signal(object, object, object)  # occupancy samples, billed samples, Marks | None
    refreshed = Signal()
    _treeChanged = Signal()  # emitted from any thread (a task is recorded in a worker); handled on the GUI
    _counting = Signal(object)  # from the refresh job: (job number, snapshot, partial Xray, elided indices)

    def __init__(self, tokenizers: Tokenizers, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.tokenizers = tokenizers
        self.session: Any = None
        self.snapshot_parts: Callable[[], list[PromptPart]] = list
        self.telemetry_dir: Path | None = None
        self.marks: Marks | None = None
        self.decisions: list[GovernorDecision] = []
        self.reading = MeterReading()
        self.billed = BilledFigures()
        self.messages: list[dict[str, Any]] = []  # the messages of the last X-ray, for jumps
        self.streaming = False
        self.refresh_count = 0
        # the engine's series from its events, in call order, after the history read from the transcript
        self.occupancy_samples: list[OccupancySample] = []
        self.billed_samples: list[BilledSample] = []
        self._history: tuple[list[OccupancySample], list[BilledSample]] | None = None
        self._estimators: dict[str, TokenEstimator] = {}
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self._start_refresh)
        self._manifest_timer = QTimer(self)  # the manifest is re-read once after a burst of tree changes
        self._manifest_timer.setSingleShot(True)
        self._manifest_timer.setInterval(150)
        self._manifest_timer.timeout.connect(lambda: self.manifestChanged.emit(self._manifest()))
        self._treeChanged.connect(self._manifest_timer.start)
        self._treeChanged.connect(self.schedule)  # an exclusion changes the next request, not the transcript
        self._tree_unsubscribe: Callable[[], None] | None = None
        self._job: asyncio.Future[Figures] | None = None
        self._job_number = 0
        self._counting.connect(self._show_counting)
        self._applied_key: tuple[Any, ...] | None = None
        # what the panels were last told: X-ray, tools, series (said again when the tab comes to the front)
        self._shown: tuple[tuple[Any, ...], Any, tuple[Any, ...]] | None = None
        self._pending_key: tuple[Any, ...] | None = None
        self._billed_stale = True
        self._series_stale = True
        self._today: tuple[int, float] = (0, 0.0)
        self._today_reader = TodayBilled()  # used by one refresh job at a time
        self._again = False
        self._elided = 0
        self._generation = 0  # bumped when the session is let go: a refresh still computing stops early
        # Whether anything on screen shows token counts: the meter (once there is a model), the Context
        # or Resources panel. Until then the tokenizer (tens of megabytes) is not loaded for the figures:
        # they are counted chars/4 and kept from the panels, and counted again once one of them shows.
        self.counts_shown: Callable[[], bool] = lambda: True
        self.partials_wanted = True  # the Context panel is on screen: partial X-rays are worth building
        self._rough = False  # the figures applied last were counted chars/4

    # ---- session ---------------------------------------------------------------------------------

    def attach(
        self,
        session: Any,
        prompt_parts: Callable[[], list[PromptPart]],
        telemetry_dir: Path | None,
    ) -> None:
        """Follow ``session`` (an AgentSession); ``prompt_parts`` gives its system prompt part by part."""
        self.session = session
        self._shown = None
        self.snapshot_parts = prompt_parts
        self.telemetry_dir = telemetry_dir
        self.decisions = []
        self.occupancy_samples = []
        self.billed_samples = []
        self._history = None
        self._elided = 0
        self._applied_key = None
        self._billed_stale = True
        self._estimators.clear()
        self._update_marks()
        self._follow_tree(session)
        self.manifestChanged.emit(self._manifest())
        self.decisionsReset.emit([])
        self._restore_history(session)
        if self._job is None:  # count at once, while the window lays the session out
            self._start_refresh()
        else:
            self._again = True

    def _restore_history(self, session: Any) -> None:
        """The earlier runs' governor log and series, from the session's telemetry file (in the executor)."""
        telemetry = getattr(getattr(session, "governance", None), "telemetry", None)
        path = getattr(telemetry, "path", None)
        known = path if isinstance(path, Path) else None
        tree = getattr(session, "tree", None)
        leaf = tree.leaf_id if tree is not None else None
        messages = list(session.messages)

        def read() -> History:
            # the branch's billed calls outside a reply (Pi 1.6's usage entries) join the billed series
            outside = branch_usage_entries(tree, leaf) if tree is not None else []
            if (known is None or not known.exists()) and not outside:
                return History()
            return read_history(known, messages, outside)

        job = asyncio.get_event_loop().run_in_executor(None, read)

        def done(job: asyncio.Future[History]) -> None:
            if job.cancelled() or not shiboken6.isValid(self) or self.session is not session:
                return
            if job.exception() is not None:
                log.warning("context history could not be read: %s", job.exception())
                return
            history = job.result()
            self.decisions = history.decisions + self.decisions
            self.decisionsReset.emit(list(self.decisions))
            if history.occupancy or history.billed:
                self._history = (history.occupancy, history.billed)
                self._series_stale = True
                self.schedule()

        job.add_done_callback(done)

    def _follow_tree(self, session: Any) -> None:
        if self._tree_unsubscribe is not None:
            self._tree_unsubscribe()
            self._tree_unsubscribe = None
        tree = getattr(session, "tree", None)
        if tree is not None:
            # a state entry (task contract, manifest) or another leaf can change the manifest
            self._tree_unsubscribe = tree.subscribe(
                lambda event: self._treeChanged.emit() if event.kind != "label" else None
            )

    def stop_workers(self) -> None:
        """The figures being computed are not wanted any more (the window closes): the worker stops at its
        next step, so the process does not wait for it to end."""
        self._generation += 1

    def detach(self) -> None:
        if self._tree_unsubscribe is not None:
            self._tree_unsubscribe()
            self._tree_unsubscribe = None
        self.session = None
        self._generation += 1
        if shiboken6.isValid(self._timer):  # the window may be gone already
            self._timer.stop()

    def _update_marks(self) -> None:
        model = self.session.model if self.session is not None else None
        if model is None:
            self.marks = None
            return
        settings = GovernorSettings.from_settings(self.session.settings)
        reserve = CompactionSettings.from_settings(self.session.settings).reserve_tokens
        self.marks = effective_marks(model, settings, reserve)

    def _manifest(self) -> Manifest | None:
        """The task's manifest as it now stands: the parts excluded for this task ``omitted``."""
        session = self.session
        if session is None:
            return None
        try:
            stored = latest_manifest(session.tree)
            if stored is None:
                return None
            tracker = getattr(session, "exclusions", None)
            exclusions = tracker.current() if tracker is not None else latest_exclusions(session.tree)
            return with_exclusions(stored, exclusions)
        except (OSError, ValueError) as err:
            log.warning("context manifest could not be read: %s", err)
            return None

    # ---- events ----------------------------------------------------------------------------------

    def handle(self, event: AgentEvent) -> None:
        kind: str = event.type
        decision = getattr(event, "decision", None)
        if isinstance(decision, GovernorDecision):
            self.add_decision(decision)
            return
        sample = getattr(event, "sample", None)
        if isinstance(sample, OccupancySample):  # the engine's series: one estimate per call, as sent
            if sample.source == "estimate":
                self.occupancy_samples.append(sample)
            self._series_stale = True
            if sample.transcript_tokens is not None:
                self._elided = max(0, sample.transcript_tokens - sample.tokens)
            self.schedule()
            return
        if isinstance(sample, BilledSample):
            self.billed_samples.append(sample)
            self._billed_stale = self._series_stale = True
            self.schedule()
            return
        if kind == "agent_start":
            self.streaming = True
        elif kind == "agent_settled":
            self.streaming = False
        if kind in ("agent_start", "agent_settled"):  # a task recorded before its prompt; layers at settle
            self.manifestChanged.emit(self._manifest())
        if kind in ("model_changed", "agent_settled"):
            self._update_marks()
            self._series_stale = True
        if kind in ("agent_settled", "billed_traffic"):
            self._billed_stale = True
        if kind in _REFRESH_EVENTS:  # a streaming delta changes no figure: the message joins at its end
            self.schedule()

    @property
    def elided_tokens(self) -> int:
        """Tokens the governor's latest decision kept out of the working set (the meter's ghost)."""
        return self._elided

    def add_decision(self, decision: GovernorDecision) -> None:
        self.decisions.append(decision)
        if decision.decision in ("projected", "forced", "no-op", "over-ceiling"):
            self._elided = max(0, decision.occupancy_before - decision.occupancy_after)
        elif decision.decision == "fail-closed":
            self._elided = 0  # the unmodified transcript is sent
        self.decisionAdded.emit(decision)
        self._series_stale = True  # the ghost changes
        self.schedule()

    async def preflight(
        self, resources: LoadedResources, planned_files: Sequence[str] = ()
    ) -> dict[str, Any] | None:
        """The engine's /context preflight for the session's next request (with files the person plans
        to add), computed in the executor."""
        session = self.session
        if session is None:
            return None
        model, names, tree = session.model, session.tool_names(), session.tree

        def compute() -> dict[str, Any]:
            model_id = model.id if model is not None else ""
            self.tokenizers.load_for(model_id)  # only the encoding this model counts with
            counter = self.tokenizers.counter_for(model_id)
            view = view_from_parts(resources, tree, model, names, TokenEstimator(counter))
            return preflight(view, planned_files=planned_files)

        return await asyncio.get_running_loop().run_in_executor(None, compute)

    # ---- refreshing --------------------------------------------------------------------------------

    def counts_wanted(self) -> None:
        """A view that shows token counts has come into view: figures counted chars/4 are made again."""
        if self._rough and self.counts_shown():
            self._applied_key = None
            self.schedule()

    def schedule(self) -> None:
        """Mark the figures stale; one refresh follows (coalesced)."""
        if self.session is None:
            return
        if self._job is not None:
            self._again = True
            return
        if not self._timer.isActive():
            self._timer.start(STREAMING_INTERVAL_MS if self.streaming else IDLE_INTERVAL_MS)

    def _snapshot(self) -> Snapshot:
        session = self.session
        model = session.model
        names = session.tool_names()
        tools = [ToolSpec(s.name, s.description, s.parameters) for s in session.registry.specs(names)]
        governance = getattr(session, "governance", None)
        outcome = getattr(governance, "last_outcome", None)
        sent = list(outcome.messages) if outcome is not None else None
        messages = session.messages
        tracker = getattr(session, "exclusions", None)
        exclusions = tracker.current() if tracker is not None else None
        if tracker is not None:
            messages = tracker.project(messages)  # the excluded parts as the next request holds them
        return Snapshot(
            messages,
            self.snapshot_parts(),
            tools,
            model,
            self.telemetry_dir,
            self._billed_stale,
            sent,
            exclusions.key if exclusions is not None else (),
            exclusions.since_ms if exclusions is not None else None,
            getattr(getattr(governance, "governor", None), "estimator", None),
            list(session.registry.specs()),
            session.tree,
            *self._restored(governance, outcome, session.compaction_settings.reserve_tokens),
            getattr(session, "session_cost", None),
        )

    @staticmethod
    def _restored(governance: Any, outcome: Any, reserve: int) -> tuple[Any, int]:
        """A reopened session's governor, detached, before its first call (None otherwise)."""
        governor = getattr(governance, "governor", None)
        if outcome is not None or governor is None or not getattr(governor, "sticky_ids", ()):
            return None, 0
        return governor.detached(), reserve

    def _start_refresh(self) -> None:
        if self.session is None or self._job is not None:
            return
        snapshot = self._snapshot()
        key = change_key(snapshot)
        if key == self._applied_key and not self._billed_stale and not self._series_stale:
            return  # nothing the views show has changed since the last refresh
        self._pending_key = key
        self._billed_stale = self._series_stale = False  # captured in the snapshot; events set them again
        loop = asyncio.get_event_loop()
        self._job_number += 1
        count_exactly = self.counts_shown()
        self._job = loop.run_in_executor(
            None, self._compute, snapshot, self._job_number, self._generation, count_exactly
        )
        self._job.add_done_callback(lambda job: self._finished(job, snapshot))

    def estimator_for(self, session: Any, model_id: str) -> TokenEstimator:
        """The estimator the panel counts ``model_id``'s requests with (the session's governor's when it
        uses the same tokenizer), holding every count made so far: other views of the session (the
        ``/context`` commands) use it instead of counting the transcript again. Counts are kept per message
        object, so a figure never depends on which estimator made it, only its cost does."""
        governance = getattr(session, "governance", None)
        shared = getattr(getattr(governance, "governor", None), "estimator", None)
        return self._shared_or_own(shared, self.tokenizers.counter_for(model_id))

    def _estimator(self, snapshot: Snapshot, counter: TokenCounter) -> TokenEstimator:
        return self._shared_or_own(snapshot.governor_estimator, counter)

    def _shared_or_own(self, shared: object, counter: TokenCounter) -> TokenEstimator:
        """The governor's estimator when it counts with this tokenizer (one count serves both), else ours."""
        if isinstance(shared, TokenEstimator) and shared.counter.info == counter.info:
            return shared
        estimator = self._estimators.get(counter.info.label)
        if estimator is None:
            estimator = self._estimators[counter.info.label] = TokenEstimator(counter)
        return estimator

    def _still_wanted(self, generation: int) -> None:
        if generation != self._generation:
            raise _LetGo

    def _compute(
        self,
        snapshot: Snapshot,
        job_number: int = 0,
        generation: int | None = None,
        count_exactly: bool = True,
    ) -> Figures:
        """Runs in the executor: nothing here touches Qt (the partial X-rays go out through a signal).
        Once the session is let go it stops at the next step (the window quitting does not wait for it).
        ``count_exactly``: counted with the model's tokenizer, loaded if need be (else with whatever is loaded).
        The counts and rows it makes live as long as the X-ray shown: no cycle collection walks them meanwhile
        (over a long session each would hold every thread, the GUI's too, for a second)."""
        with paused_gc(keep=True):
            return self._figures(snapshot, job_number, generation, count_exactly)

    def _figures(
        self, snapshot: Snapshot, job_number: int, generation: int | None, count_exactly: bool
    ) -> Figures:
        generation = self._generation if generation is None else generation
        model_id = snapshot.model.id if snapshot.model is not None else ""
        if count_exactly:  # only the encoding this model counts with: each one built takes tens of megabytes
            self.tokenizers.load_for(model_id)
        counter = self.tokenizers.counter_for(model_id)
        rough = not count_exactly and counter.info.encoding is None
        estimator = self._estimator(snapshot, counter)
        sent = snapshot.sent
        if sent is None and snapshot.restored is not None and snapshot.model is not None:
            prompt = "".join(part.text for part in snapshot.prompt_parts)
            shape = RequestShape(snapshot.model, prompt, snapshot.tools, snapshot.reserve_tokens)
            if not any(estimator.known(m) is None for m in snapshot.messages) or estimator.precount(
                snapshot.messages
            ):
                sent = snapshot.restored.preview(snapshot.messages, shape).messages
        working, elided = working_set(snapshot.messages, sent)
        parts_index = message_part_indices(snapshot.messages)
        deadline = time.monotonic() + FIRST_SHOW_S
        position = 0  # each slice goes on where the last one stopped
        rows: list[Any] | None = None
        while (
            position := estimator.count_from(
                working, position, until=min(deadline, time.monotonic() + COUNT_SLICE_S)
            )
        ) < len(working):
            self._still_wanted(generation)
            if time.monotonic() < deadline or not self.partials_wanted or rough:
                continue
            started = time.monotonic()
            if rows is None:  # labelled once, for every X-ray of this list
                rows = xray_message_rows(working)
            partial = build_xray(
                snapshot.prompt_parts, snapshot.tools, working, estimator, counted_only=True, rows=rows
            )
            table = xray_table(partial, parts_index, elided)
            _ = partial.counting  # added up here, not by each view on the GUI thread
            self._counting.emit((job_number, snapshot, partial, parts_index, elided, table))
            took = time.monotonic() - started  # over a long session a partial X-ray costs as much as counting
            deadline = time.monotonic() + max(PROGRESS_S, PROGRESS_SHARE * took)
        self._still_wanted(generation)
        request = build_xray(snapshot.prompt_parts, snapshot.tools, working, estimator, rows=rows)
        self._still_wanted(generation)
        estimate = estimate_context_tokens(snapshot.messages)
        exact = None
        last = estimate.last_usage_index
        if (
            last is not None
            and estimate.trailing_tokens == 0
            and not compacted_since(snapshot.messages, last)
            and not changed_since(snapshot.messages, last, snapshot.exclusions_since_ms)
            and not edited_since_reply(snapshot.tree)
        ):
            exact = int(estimate.tokens)
        if snapshot.billed_stale:  # today's files change only when a call is billed
            self._today = self._today_reader.read(snapshot.telemetry_dir)
        today_tokens, today_cost = self._today
        window = snapshot.model.context_window if snapshot.model is not None else 0
        occupancy, billed = samples_from_usages(reply_usages(snapshot.messages), window)
        table = xray_table(request, parts_index, elided)
        _ = request.counting  # added up here, not by each view on the GUI thread
        session_cost = snapshot.session_cost() if snapshot.session_cost is not None else None
        self._still_wanted(generation)
        return Figures(
            request,
            parts_index,
            elided,
            exact,
            today_tokens,
            today_cost,
            occupancy,
            billed,
            table,
            tool_rows(
                snapshot.every_tool,
                request,
                estimator,
                self._contract(snapshot, request),
                active={tool.name for tool in snapshot.tools},
            ),
            rough,
            session_cost,
            Segments.from_xray(request),
        )

    @staticmethod
    def _contract(snapshot: Snapshot, request: Xray) -> Any:
        """The task contract, read only when a tool is left out (its rules may be why)."""
        sent = sum(1 for part in request.parts if part.kind == "tool_schema")
        if snapshot.tree is None or sent == len(snapshot.every_tool):
            return None
        try:
            return latest_contract(snapshot.tree)
        except (OSError, ValueError) as err:
            log.warning("task contract could not be read: %s", err)
            return None

    def _show_counting(
        self, payload: tuple[int, Snapshot, Xray, list[int], frozenset[int], XrayTable]
    ) -> None:
        """A partial X-ray of the refresh still running: to the panel only (the meter waits for the count)."""
        job_number, snapshot, partial, parts_index, elided, table = payload
        if self._job is None or job_number != self._job_number or self.session is None:
            return  # that refresh has ended (its complete figures are shown) or the session changed
        self.messages = snapshot.messages
        self.xrayChanged.emit(partial, parts_index, elided, table)

    def _finished(self, job: asyncio.Future[Figures], snapshot: Snapshot) -> None:
        self._job = None
        if not shiboken6.isValid(self):
            return
        if job.cancelled():
            return
        error = job.exception()
        if isinstance(error, _LetGo):
            pass  # its session is gone; the one attached since (if any) is refreshed below
        elif error is not None:
            log.warning("context figures could not be computed: %s", error)
            self._billed_stale = self._series_stale = True
        elif self.session is not None:
            self._apply(job.result(), snapshot)
        if self._again:
            self._again = False
            self.schedule()

    def _apply(self, figures: Figures, snapshot: Snapshot) -> None:
        model = snapshot.model
        window = model.context_window if model is not None else 0
        request = figures.xray
        exact = figures.exact_tokens is not None
        self.messages = snapshot.messages
        self.reading = MeterReading(
            window=window,
            marks=self.marks,
            segments=figures.segments if figures.segments is not None else Segments.from_xray(request),
            occupancy=figures.exact_tokens if exact else request.total,
            exact=exact,
            tokenizer=request.tokenizer,
            elided=self._elided,
        )
        session_cost = figures.session_cost
        if session_cost is None:
            session_cost = self.session.session_cost()
        detail = {k: float(session_cost.get(k, 0.0)) for k in ("input", "output", "cacheRead", "cacheWrite")}
        self.billed = BilledFigures(
            session_tokens=int(sum(detail.values())),
            session_cost=float(session_cost.get("cost", 0.0)),
            today_tokens=figures.today_tokens,
            today_cost=figures.today_cost,
            session_detail=detail,
        )
        self._applied_key = self._pending_key
        self.refresh_count += 1
        self.readingChanged.emit(self.reading)
        self.billedChanged.emit(self.billed)
        self._rough = figures.rough
        xray = (request, figures.message_parts, figures.elided_messages, figures.xray_table)
        if not figures.rough:  # counted chars/4: the panels get the counts once one of them shows
            self.xrayChanged.emit(*xray)
            self.toolsChanged.emit(figures.tools)
        if self._history is None:  # replies before this window followed the session: from the transcript
            self._history = (figures.occupancy, figures.billed)
        occupancy = self._history[0] + self.occupancy_samples
        billed = self._history[1] + self.billed_samples
        self.seriesChanged.emit(occupancy, billed, self.marks)
        self._shown = (xray, figures.tools, (occupancy, billed, self.marks))
        self.refreshed.emit()

    def replay(self) -> None:
        """Say again what the panels were last told (the session's tab came back to the front of the
        window: the Context and Resources panels show its figures again), without computing anything."""
        if self.session is None:
            return
        self.manifestChanged.emit(self._manifest())
        self.decisionsReset.emit(list(self.decisions))
        if self._shown is not None and not self._rough:
            xray, tools, series = self._shown
            self.xrayChanged.emit(*xray)
            self.toolsChanged.emit(tools)
            self.seriesChanged.emit(*series)
