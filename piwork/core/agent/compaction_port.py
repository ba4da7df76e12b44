"""The built-in compaction engine behind AgentSession's ``CompactionPort``, over a session tree."""

from __future__ import annotations

import math
from collections.abc import Callable

from piwork.core.agent.checkpoints import CompactionCancelled, CompactionOutcome, CompactionRequest
from piwork.core.compaction.compact import CompactionError, compact_session, plan_compaction
from piwork.core.compaction.hooks import CompactionHooks
from piwork.core.compaction.settings import CompactionSettings
from piwork.core.compaction.summarize import Summarizer, SummaryCancelled
from piwork.core.errors import PiworkError
from piwork.core.session.context import latest_compaction
from piwork.core.session.timestamps import js_date_ms
from piwork.core.session.tree import SessionTree

NO_MODEL = "No model selected. Choose a model before compacting."


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

    def latest_compaction_ms(self) -> float | None:
        compaction = latest_compaction([self._tree.body(record) for record in self._tree.path()])
        if not isinstance(compaction, dict):
            return None
        stamp = js_date_ms(compaction.get("timestamp"))
        return stamp if math.isfinite(stamp) else None

    def can_compact(self) -> bool:
        return plan_compaction(self._tree, self._settings_for()) is not None

    async def compact(self, request: CompactionRequest) -> CompactionOutcome:
        summarizer = self._summarizer_for()
        if summarizer is None:
            raise PiworkError(NO_MODEL)
        try:
            result = await compact_session(
                self._tree,
                summarizer,
                self._settings_for(),
                reason=request.reason,
                custom_instructions=request.custom_instructions,
                will_retry=request.will_retry,
                hooks=self.hooks,
                cancel=request.cancel,
            )
        except CompactionError as error:
            if error.aborted:
                raise CompactionCancelled(str(error)) from error
            raise
        except SummaryCancelled as error:
            raise CompactionCancelled() from error
        return CompactionOutcome(result.to_json(), self._tree.build_context().messages)
