"""Commands the user runs from the editor: ``!cmd`` (its output reaches the model with the next message)
and ``!!cmd`` (shown and saved, never sent).

The command runs in a worker thread on an event loop of its own, so neither its output nor the log it may
spill to ever costs the caller's loop (the window's GUI thread) more than a batch of text now and then.
Its ``bashExecution`` message is recorded in the session as Pi records it: at once when the agent is idle,
else once the agent's run is over, so a tool call and its result are never split."""

from __future__ import annotations

import asyncio
import itertools
import threading
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from piwork.core.agent.events import AgentEvent, Message, UserCommandEnd, UserCommandStart, UserCommandUpdate
from piwork.core.tools.bash import BashOptions
from piwork.core.tools.user_shell import UserCommandResult, run_user_command

_ids = itertools.count(1)


class _Relay:
    """Output text from the worker, handed to the loop in batches (one call queued at a time)."""

    def __init__(self, loop: asyncio.AbstractEventLoop, deliver: Callable[[str], None]) -> None:
        self._loop = loop
        self._deliver = deliver
        self._lock = threading.Lock()
        self._buffer: list[str] = []
        self._queued = False

    def add(self, text: str) -> None:  # in the worker
        with self._lock:
            self._buffer.append(text)
            if self._queued:
                return
            self._queued = True
        self._loop.call_soon_threadsafe(self.flush)

    def flush(self) -> None:  # on the loop
        with self._lock:
            text, self._buffer, self._queued = "".join(self._buffer), [], False
        if text:
            self._deliver(text)


class _Worker:
    """One command on a loop of its own in a worker thread; ``cancel`` stops it from any thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._started: tuple[asyncio.AbstractEventLoop, asyncio.Task[UserCommandResult]] | None = None
        self._cancelled = False

    def run(self, make: Callable[[], Coroutine[Any, Any, UserCommandResult]]) -> UserCommandResult:
        async def main() -> UserCommandResult:
            task = asyncio.ensure_future(make())
            with self._lock:
                self._started = (asyncio.get_running_loop(), task)
                if self._cancelled:  # stopped before it started
                    task.cancel()
            return await task

        return asyncio.run(main())

    def cancel(self) -> None:
        with self._lock:
            self._cancelled = True
            started = self._started
        if started is not None:
            loop, task = started
            loop.call_soon_threadsafe(task.cancel)


class UserCommands:
    def __init__(
        self,
        emit: Callable[[AgentEvent], None],
        cwd: str,
        options: Callable[[], BashOptions],
        context: Callable[[], tuple[Any, int, bool]],
        record: Callable[[Message], Awaitable[None]],
    ) -> None:
        """``context`` gives the log folder, the time in ms and whether the agent is working now;
        ``record`` appends a message to the session (written in a worker) and to the agent's context."""
        self._emit = emit
        self._cwd = cwd
        self._options = options
        self._context = context
        self._record = record
        self._running: dict[int, _Worker] = {}
        self.pending: list[Message] = []  # ended while the agent worked: recorded after its run

    @property
    def running(self) -> bool:
        return bool(self._running)

    async def run(self, command: str, *, exclude_from_context: bool = False) -> Message:
        run_id = next(_ids)
        self._emit(UserCommandStart(run_id, command, exclude_from_context))
        relay = _Relay(asyncio.get_running_loop(), lambda text: self._emit(UserCommandUpdate(run_id, text)))
        options = self._options()
        log_dir = self._context()[0]
        worker = self._running[run_id] = _Worker()

        def make() -> Coroutine[Any, Any, UserCommandResult]:
            return run_user_command(
                command,
                self._cwd,
                log_dir=log_dir,
                shell_path=options.shell_path,
                command_prefix=options.command_prefix,
                bin_dir=options.bin_dir,
                on_chunk=relay.add,
                kill_grace=options.kill_grace,
            )

        try:
            result = await asyncio.to_thread(worker.run, make)
        except asyncio.CancelledError:  # the caller went away (the window closes): so does the command
            worker.cancel()
            raise
        finally:
            self._running.pop(run_id, None)
        relay.flush()
        _log_dir, now_ms, working = self._context()
        message = result.message(command, now_ms, exclude_from_context)
        self._emit(UserCommandEnd(run_id, message, working))  # its card is final before it is recorded
        if working:
            self.pending.append(message)
        else:
            await self._record(message)
        return message

    def abort(self) -> None:
        """Stop every command still running (each ends as cancelled, with the output it gave)."""
        for worker in list(self._running.values()):
            worker.cancel()

    def take_pending(self) -> list[Message]:
        pending, self.pending = self.pending, []
        return pending
