"""Extension points around compaction and tree navigation.

Handlers are Python callables (sync or async) registered on a ``CompactionHooks`` object that the
engine receives. For the *before* hooks, handlers run in registration order: a result with
``{"cancel": True}`` stops at once; otherwise the last non-empty result wins. A handler that raises
is reported through ``on_error`` (the app shows it to the user) and otherwise ignored.

Results use Pi's extension JSON shapes:

- ``before_compact`` → ``None`` | ``{"cancel": True}`` |
  ``{"compaction": {"summary", "firstKeptEntryId", "tokensBefore", "usage"?, "details"?}}``;
- ``before_tree`` → ``None`` | ``{"cancel": True}`` |
  ``{"summary": {"summary", "details"?, "usage"?}, "customInstructions"?, "replaceInstructions"?, "label"?}``.

Each event carries ``signal``, an ``asyncio.Event`` set when the operation is cancelled, for
handlers that run long work of their own.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from piwork.core.compaction.prepare import CompactionPreparation

_log = logging.getLogger(__name__)

CompactionReason = Literal["manual", "threshold", "overflow", "governor"]
HookResult = Mapping[str, Any] | None
E = TypeVar("E")
Handler = Callable[[E], Awaitable[HookResult] | HookResult]
Observer = Callable[[E], Awaitable[None] | None]


@dataclass(frozen=True)
class BeforeCompactEvent:
    preparation: CompactionPreparation
    branch_entries: list[dict[str, Any]]
    custom_instructions: str | None
    reason: CompactionReason
    will_retry: bool
    signal: asyncio.Event = field(default_factory=asyncio.Event)


@dataclass(frozen=True)
class AfterCompactEvent:
    compaction_entry: dict[str, Any]
    from_extension: bool
    reason: CompactionReason
    will_retry: bool


@dataclass(frozen=True)
class CompactFailedEvent:
    reason: CompactionReason
    error_message: str | None
    aborted: bool
    will_retry: bool
    from_extension: bool


@dataclass(frozen=True)
class TreePreparation:
    target_id: str
    old_leaf_id: str | None
    common_ancestor_id: str | None
    entries_to_summarize: list[dict[str, Any]]
    user_wants_summary: bool
    custom_instructions: str | None = None
    replace_instructions: bool | None = None
    label: str | None = None


@dataclass(frozen=True)
class BeforeTreeEvent:
    preparation: TreePreparation
    signal: asyncio.Event = field(default_factory=asyncio.Event)


@dataclass(frozen=True)
class AfterTreeEvent:
    new_leaf_id: str | None
    old_leaf_id: str | None
    summary_entry: dict[str, Any] | None
    from_extension: bool | None


ErrorReporter = Callable[[str, BaseException], None]


def _log_error(hook: str, error: BaseException) -> None:
    _log.warning("%s hook failed: %s", hook, error)


async def _call(handler: Callable[[Any], Any], event: Any) -> Any:
    result = handler(event)
    if inspect.isawaitable(result):
        result = await result
    return result


@dataclass
class CompactionHooks:
    """Registered handlers; ``on_*`` methods return a callable that unregisters the handler."""

    on_error: ErrorReporter = _log_error
    _before_compact: list[Handler[BeforeCompactEvent]] = field(default_factory=list)
    _after_compact: list[Observer[AfterCompactEvent]] = field(default_factory=list)
    _compact_failed: list[Observer[CompactFailedEvent]] = field(default_factory=list)
    _before_tree: list[Handler[BeforeTreeEvent]] = field(default_factory=list)
    _after_tree: list[Observer[AfterTreeEvent]] = field(default_factory=list)

    def on_before_compact(self, handler: Handler[BeforeCompactEvent]) -> Callable[[], None]:
        return self._register(self._before_compact, handler)

    def on_after_compact(self, handler: Observer[AfterCompactEvent]) -> Callable[[], None]:
        return self._register(self._after_compact, handler)

    def on_compact_failed(self, handler: Observer[CompactFailedEvent]) -> Callable[[], None]:
        return self._register(self._compact_failed, handler)

    def on_before_tree(self, handler: Handler[BeforeTreeEvent]) -> Callable[[], None]:
        return self._register(self._before_tree, handler)

    def on_after_tree(self, handler: Observer[AfterTreeEvent]) -> Callable[[], None]:
        return self._register(self._after_tree, handler)

    @staticmethod
    def _register(handlers: list[Any], handler: Any) -> Callable[[], None]:
        handlers.append(handler)

        def unregister() -> None:
            if handler in handlers:
                handlers.remove(handler)

        return unregister

    @property
    def has_before_tree(self) -> bool:
        return bool(self._before_tree)

    async def before_compact(self, event: BeforeCompactEvent) -> HookResult:
        return await self._run_before("before_compact", self._before_compact, event)

    async def before_tree(self, event: BeforeTreeEvent) -> HookResult:
        return await self._run_before("before_tree", self._before_tree, event)

    async def after_compact(self, event: AfterCompactEvent) -> None:
        await self._notify("after_compact", self._after_compact, event)

    async def compact_failed(self, event: CompactFailedEvent) -> None:
        await self._notify("compact_failed", self._compact_failed, event)

    async def after_tree(self, event: AfterTreeEvent) -> None:
        await self._notify("after_tree", self._after_tree, event)

    async def _run_before(self, name: str, handlers: list[Any], event: Any) -> HookResult:
        outcome: HookResult = None
        for handler in list(handlers):
            try:
                result = await _call(handler, event)
            except asyncio.CancelledError:
                raise
            except Exception as error:
                self.on_error(name, error)
                continue
            if not result:
                continue
            if not isinstance(result, Mapping):
                self.on_error(name, TypeError(f"{name} hook returned {type(result).__name__}, not a mapping"))
                continue
            if result.get("cancel"):
                return result
            outcome = result
        return outcome

    async def _notify(self, name: str, handlers: list[Any], event: Any) -> None:
        for handler in list(handlers):
            try:
                await _call(handler, event)
            except asyncio.CancelledError:
                raise
            except Exception as error:
                self.on_error(name, error)
