"""The built-in compaction engine behind AgentSession's ``CompactionPort``, over a session tree.

Planning reads every entry of the active path (seconds on a very long session), so it runs in a
worker thread, and the plan ``can_compact`` made is handed to the compaction that follows it.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable
from typing import TYPE_CHECKING

from piwork.core.agent.checkpoints import NO_MODEL, CompactionCancelled, CompactionOutcome, CompactionRequest
from piwork.core.errors import PiworkError
from piwork.core.session.timestamps import js_date_ms

if TYPE_CHECKING:
    from piwork.core.compaction.compact import Planned
    from piwork.core.compaction.hooks import CompactionHooks
    from piwork.core.compaction.settings import CompactionSettings
    from piwork.core.compaction.summarize import Summarizer
    from piwork.core.session.tree import SessionTree

# The compaction engine (planning, summaries, hooks) is imported where a compaction runs: most runs never
# compact, and the engine is a tenth of the start-up imports.


class TreeCompactionPort:
    def __init__(
        self,
        tree: SessionTree,
        summarizer_for: Callable[[], Summarizer | None],
        settings_for: Callable[[], CompactionSettings],
        hooks: CompactionHooks | None = None,
    ) -> None:
        self._tree = tree
        self._summarizer_for = summarizer_for
        self._settings_for = settings_for
        self.hooks = hooks
        self._plan: tuple[tuple[int, object, int], CompactionSettings, Planned] | None = None

    def latest_compaction_ms(self) -> float | None:
        # runs after every reply: find the entry by its indexed type and read only that body
        record = next((r for r in reversed(self._tree.path()) if r.type == "compaction"), None)
        compaction = self._tree.body(record) if record is not None else None
        if not isinstance(compaction, dict):
            return None
        stamp = js_date_ms(compaction.get("timestamp"))
        return stamp if math.isfinite(stamp) else None

    def _tree_state(self) -> tuple[int, object, int]:
        """Changes whenever the tree does: it only grows, and a reload replaces its record list."""
        return (id(self._tree.records), self._tree.leaf_id, len(self._tree))

    async def can_compact(self) -> bool:
        from piwork.core.compaction.compact import read_and_plan

        settings = self._settings_for()
        state = self._tree_state()
        planned = await asyncio.to_thread(read_and_plan, self._tree, settings)
        self._plan = (state, settings, planned)
        return planned[1] is not None

    def _take_plan(self, settings: CompactionSettings) -> Planned | None:
        plan, self._plan = self._plan, None
        if plan is None or plan[0] != self._tree_state() or plan[1] != settings:
            return None
        return plan[2]

    async def compact(self, request: CompactionRequest) -> CompactionOutcome:
        from piwork.core.compaction.compact import CompactionError, compact_session
        from piwork.core.compaction.summarize import SummaryCancelled

        summarizer = self._summarizer_for()
        if summarizer is None:
            raise PiworkError(NO_MODEL)
        settings = self._settings_for()
        try:
            result = await compact_session(
                self._tree,
                summarizer,
                settings,
                reason=request.reason,
                custom_instructions=request.custom_instructions,
                will_retry=request.will_retry,
                hooks=self.hooks,
                cancel=request.cancel,
                planned=self._take_plan(settings),
            )
        except (CompactionError, SummaryCancelled) as error:
            aborted = isinstance(error, SummaryCancelled) or error.aborted
            await self._report_failure(request, error, aborted)
            if aborted:
                raise CompactionCancelled(str(error)) from error
            raise
        except PiworkError as error:  # the summary could not be made (provider failure...)
            await self._report_failure(request, error, False)
            raise
        context = await asyncio.to_thread(self._tree.build_context)
        return CompactionOutcome(result.to_json(), context.messages)

    async def _report_failure(self, request: CompactionRequest, error: PiworkError, aborted: bool) -> None:
        """The ``compact_failed`` hooks hear about every failed or cancelled compaction."""
        if self.hooks is not None:
            from piwork.core.compaction.compact import failure_message
            from piwork.core.compaction.hooks import CompactFailedEvent

            message = None if aborted else failure_message(request.reason, error)
            await self.hooks.compact_failed(
                CompactFailedEvent(request.reason, message, aborted, False, False)
            )
