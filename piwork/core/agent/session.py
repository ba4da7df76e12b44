"""AgentSession: one conversation bound to a session file, a model, tools and a system prompt.

It owns the run lifecycle around the low-level loop: persisting every message as it ends, the steering and
follow-up queues, agent-level retry with backoff, the compaction checkpoints (via :mod:`.checkpoints`),
model and thinking-level changes (recorded in the session file), and abort. Events go to subscribers on
the running asyncio loop; the GUI, headless mode and tests all drive this same object.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from piwork.core.agent.abort import AbortSignal
from piwork.core.agent.auto_retry import AutoRetry
from piwork.core.agent.checkpoints import CompactionCheckpoints
from piwork.core.agent.compaction_port import TreeCompactionPort
from piwork.core.agent.events import (
    AgentEnd,
    AgentEvent,
    AgentSettled,
    CompactionEnd,
    ErrorNotice,
    EventBus,
    Listener,
    Message,
    MessageEnd,
    MessageStart,
    ModelChanged,
    QueueUpdate,
    ThinkingLevelChanged,
    TreeNavigated,
)
from piwork.core.agent.governance import SessionGovernance
from piwork.core.agent.loop import AgentLoop, CallRecord, CompletedTurn, LoopConfig, RequestSetup, StreamFn
from piwork.core.agent.options import AgentSessionOptions, default_stream_fn
from piwork.core.agent.queues import PromptQueues
from piwork.core.agent.request_setup import request_setup, summarizer_for
from piwork.core.agent.retry import RetrySettings
from piwork.core.agent.stats import ContextUsage, SessionStats, StatsTracker, context_usage
from piwork.core.agent.telemetry import UsageTelemetry
from piwork.core.agent.tool_calls import chain_hooks
from piwork.core.agent.user_commands import UserCommands
from piwork.core.checkpoints import Checkpointer
from piwork.core.compaction.settings import CompactionSettings
from piwork.core.context.budget import GovernorSettings
from piwork.core.context.manifest_upkeep import ManifestUpkeep
from piwork.core.context.task_exclusions import TaskExclusions
from piwork.core.errors import PiworkError
from piwork.core.llm.credentials import env_vars_for
from piwork.core.llm.thinking import resolve_level
from piwork.core.llm.transport import is_loopback
from piwork.core.llm.types import (
    THINKING_LEVELS,
    Model,
    StreamOptions,
    ThinkingLevel,
)
from piwork.core.messages import convert_to_llm
from piwork.core.resources.system_prompt import PromptPart
from piwork.core.session.context_edits import ActiveEdit
from piwork.core.session.store import append_written
from piwork.core.session.system_messages import (
    current_tools,
    recorded_tool_names,
    tool_declaration,
    tool_set_update,
)
from piwork.core.session.tree import SessionTree
from piwork.core.session.tree_types import TreeEvent
from piwork.core.settings_schema import FOLLOW_UP_MODE, STEERING_MODE
from piwork.core.settings_values import SettingValues
from piwork.core.tools.base import ToolRegistry
from piwork.core.tools.bash import BashOptions, BashTool
from piwork.core.tools.registry import ALL_TOOL_NAMES

if TYPE_CHECKING:
    from piwork.core.compaction.navigate import BranchSummaryProgress, NavigationResult
    from piwork.core.compaction.summarize import Summarizer

__all__ = [
    "AgentBusy",
    "AgentSession",
    "AgentSessionOptions",
    "NoModel",
    "ReadOnlySession",
    "StreamingBehavior",
]

StreamingBehavior = Literal["steer", "follow_up"]
COMPACTION_BUSY = (
    "Cannot submit a prompt while compaction is in progress. Wait for compaction to finish and retry."
)
BUSY = (
    "The agent is already working. Queue the message as steering or as a follow-up, or wait for it to finish."
)


class AgentBusy(PiworkError):
    """A prompt was submitted while a run (or a compaction) is in progress."""


SAVE_FAILED = "session file"  # ErrorNotice source: an entry could not be appended to the session file


class NoModel(PiworkError):
    """No model is selected, or it has no usable credentials."""


class ReadOnlySession(PiworkError):
    """The session file is only being looked at (another piwork holds it, or it cannot be written)."""


class AgentSession:
    def __init__(self, options: AgentSessionOptions) -> None:
        self._opts = options
        self._bus = EventBus()
        self._messages: list[Message] = list(options.messages)
        self._model = options.model
        self._thinking_level: ThinkingLevel = options.thinking_level
        self._active_tools = list(options.active_tools) if options.active_tools is not None else None
        values = self._settings = SettingValues.of(options.settings)
        self.retry_settings = RetrySettings.from_mapping(values.get("retry"))
        self.queues = PromptQueues(
            values.value(STEERING_MODE),
            values.value(FOLLOW_UP_MODE),
            lambda steering, follow_up: self.emit(QueueUpdate(steering, follow_up)),
        )
        self.telemetry = options.telemetry or UsageTelemetry()
        self._stats = StatsTracker(options.tree)  # the window asks after every reply: count only new entries
        self.retry = AutoRetry(self)
        self._run_signal: AbortSignal | None = None
        self._idle = asyncio.Event()
        self._idle.set()
        self._last_assistant: Message | None = None
        self._save_failure: ErrorNotice | None = None  # a failed append, told after its message_end
        self._last_compaction_result: dict[str, Any] | None = None
        self.checkpoints = CompactionCheckpoints(self, options.compaction, self.summarizer, options.hooks)
        if options.compaction is None:
            self.checkpoints.port = TreeCompactionPort(
                options.tree, self.summarizer, lambda: self.checkpoints.settings, options.hooks
            )
        # parts of the task's context the person left out of its requests ("exclude for this task")
        self.exclusions = options.task_exclusions or TaskExclusions(options.tree)
        self.governance = SessionGovernance(
            self,
            GovernorSettings.from_settings(values),
            options.token_counter,
            options.context_telemetry,
            options.verifier_commands,
            counter_for=options.token_counter_for,
            manifest=ManifestUpkeep(options.tree, options.cwd, options.project_trusted),
            project=self.exclusions.project,
        )
        self.checkpoints.projected_tokens = self.governance.projected_tokens
        self.user_commands = UserCommands(
            self.emit,
            options.cwd,
            self._bash_options,
            lambda: (self.log_dir, self._opts.now_ms(), self.is_streaming),
            self._record_user_command,
        )
        options.tree.subscribe(self._on_tree_event)

    # ---- observation -------------------------------------------------------------------------------

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Receive every event; returns the unsubscribe callable."""
        return self._bus.subscribe(listener)

    def emit(self, event: AgentEvent) -> None:
        if isinstance(event, CompactionEnd) and event.result is not None:
            self._last_compaction_result = event.result
        self._bus.emit(event)

    @property
    def messages(self) -> list[Message]:
        """The in-memory context (what the next request is built from), as a copy."""
        return list(self._messages)

    def replace_messages(self, messages: list[Message]) -> None:
        self._messages = list(messages)

    @property
    def now_ms(self) -> Callable[[], int]:
        return self._opts.now_ms

    @property
    def model(self) -> Model | None:
        return self._model

    @property
    def thinking_level(self) -> ThinkingLevel:
        return self._thinking_level

    @property
    def settings(self) -> SettingValues:
        """The effective settings, typed by their declarations (also a mapping of the merged JSON)."""
        return self._settings

    @property
    def tree(self) -> SessionTree:
        return self._opts.tree

    @property
    def log_dir(self) -> Path | None:
        """Where the tools keep this session's full-output logs (None: a session that is not saved)."""
        return self._opts.log_dir

    @property
    def compaction_settings(self) -> CompactionSettings:
        """The ``compaction.*`` settings (reserve tokens, thresholds) as the checkpoints read them."""
        return self.checkpoints.settings

    @property
    def stream_fn(self) -> StreamFn:
        return self._opts.stream_fn or default_stream_fn()

    @property
    def base_options(self) -> StreamOptions:
        return self._opts.base_options

    @property
    def sleep(self) -> Callable[[float], Awaitable[None]]:
        return self._opts.sleep

    def api_key(self, model: Model) -> str | None:
        return self._opts.api_key_for(model)

    def summarizer(self) -> Summarizer | None:
        """A summarizer on the current model and provider (compaction and branch summaries)."""
        model = self._model
        if model is None:
            return None
        return summarizer_for(
            self._opts, model, self._thinking_level, self.retry_settings, self.stream_fn, self.emit
        )

    @property
    def read_only_reason(self) -> str | None:
        """Why nothing can be added to this session (shown to the user), or None when it is writable."""
        return self._opts.read_only_reason()

    def _require_writable(self, action: str) -> None:
        reason = self._opts.read_only_reason()
        if reason is not None:
            raise ReadOnlySession(f"Cannot {action}: {reason}")

    @property
    def is_streaming(self) -> bool:
        return not self._idle.is_set()

    @property
    def queued(self) -> tuple[list[str], list[str]]:
        """Texts waiting as (steering, follow-up)."""
        return self.queues.texts

    @property
    def checkpointer(self) -> Checkpointer | None:
        """Snapshots of the project's files around tool calls (None: turned off)."""
        return self._opts.checkpointer

    @property
    def registry(self) -> ToolRegistry:
        """Every tool the session can use (``tool_names`` says which are active)."""
        return self._opts.registry

    def tool_names(self) -> list[str]:
        names = self._opts.registry.names()
        return names if self._active_tools is None else [n for n in self._active_tools if n in names]

    def set_active_tools(self, names: Sequence[str]) -> None:
        """Takes effect on the next provider request."""
        self._active_tools = list(names)

    def system_prompt(self) -> str:
        if self._opts.system_prompt_parts_for is not None:
            return "".join(part.text for part in self.system_prompt_parts())
        return self._opts.system_prompt_for(self.tool_names())

    @property
    def has_prompt_parts(self) -> bool:
        """Whether the system prompt comes as named parts (else it is one ``prompt`` part)."""
        return self._opts.system_prompt_parts_for is not None

    def system_prompt_parts(self) -> list[PromptPart]:
        """The system prompt of the next request as named parts (joined, they are that prompt)."""
        parts_for = self._opts.system_prompt_parts_for
        if parts_for is not None:
            return parts_for(self.tool_names())
        text = self._opts.system_prompt_for(self.tool_names())
        return [PromptPart("prompt", text)] if text else []

    def context_usage(self) -> ContextUsage | None:
        """Tokens the next request holds versus the model's context window (None: no window known)."""
        tree = self._opts.tree
        path = tree.path()
        # only the latest compaction (or, without one, the latest context edit) and what follows it
        # matter: read just those bodies
        start = next((i for i in range(len(path) - 1, -1, -1) if path[i].type == "compaction"), None)
        if start is None:
            start = next(
                (i for i in range(len(path) - 1, -1, -1) if path[i].type == "context_edit"), len(path)
            )
        return context_usage(self._model, self._messages, [tree.body(r) for r in path[start:]])

    def session_cost(self) -> dict[str, float]:
        """Billed tokens (``input``, ``output``, ``cacheRead``, ``cacheWrite``) and USD (``cost``) of the
        whole session file, so a reopened session shows what it has cost so far."""
        stats = self.session_stats()
        return {**stats.tokens, "cost": stats.cost["total"]}

    def session_stats(self) -> SessionStats:
        """Message counts, billed tokens and cost over the whole session file (every branch)."""
        return self._stats.current()

    async def wait_for_idle(self) -> None:
        await self._idle.wait()

    # ---- prompting ---------------------------------------------------------------------------------

    async def prompt(
        self, text: str, images: Sequence[Message] = (), *, behavior: StreamingBehavior | None = None
    ) -> None:
        """Send a user prompt and run until the agent settles; while busy, queue it per ``behavior``."""
        self._require_writable("send a prompt")
        if self.checkpoints.manual_running:
            raise AgentBusy(COMPACTION_BUSY)
        expanded = self._expand(text)
        if self.is_streaming:
            if behavior is None:
                raise AgentBusy(BUSY)
            self.queues.add(expanded, images, self._opts.now_ms(), follow_up=behavior == "follow_up")
            return
        self.require_model()
        self._idle.clear()  # busy from here: a second prompt queues while the file is checked
        if not await self._session_file_usable():
            self._idle.set()
            return
        try:
            last = self._last_assistant_in_context()
            if last is not None:
                await self.checkpoints.check(last, skip_aborted=False)
            self._record_thinking_level()
            self._record_tool_set()
            content: list[Message] = [{"type": "text", "text": expanded}, *images]
            user = {"role": "user", "content": content, "timestamp": self._opts.now_ms()}
            await self._run([user])
        finally:
            self._settle()

    async def steer(self, text: str, images: Sequence[Message] = ()) -> None:
        """Deliver after the current tool calls finish, before the next model call."""
        self._require_writable("send a prompt")
        self.queues.add(self._expand(text), images, self._opts.now_ms(), follow_up=False)

    async def follow_up(self, text: str, images: Sequence[Message] = ()) -> None:
        """Deliver only when the agent would otherwise stop."""
        self._require_writable("send a prompt")
        self.queues.add(self._expand(text), images, self._opts.now_ms(), follow_up=True)

    def clear_queues(self) -> tuple[list[str], list[str]]:
        """Drop everything queued; returns the texts that were waiting (the window puts them back in the
        editor when Stop is pressed)."""
        return self.queues.clear()

    async def abort(self) -> None:
        """Stop the current run, retry wait and compaction; returns once the session is idle."""
        self.retry.abort()
        self.checkpoints.abort()
        if self._run_signal is not None:
            self._run_signal.abort()
        await self.wait_for_idle()

    # ---- the user's own commands (``!cmd``, ``!!cmd``) ---------------------------------------------

    async def run_user_command(self, command: str, *, exclude_from_context: bool = False) -> Message:
        """Run ``command`` in the project folder (in a worker), streaming its output as events; its
        ``bashExecution`` message joins the session (and, unless ``exclude_from_context``, what the model
        is sent with the next message). Ended while the agent works, it is recorded after the run."""
        self._require_writable("run a command")
        return await self.user_commands.run(command, exclude_from_context=exclude_from_context)

    def abort_user_commands(self) -> None:
        self.user_commands.abort()

    def _bash_options(self) -> BashOptions:
        """The bash tool's shell, prefix and ``bin`` folder (also when the tool is turned off)."""
        bash = self._opts.registry.get("bash")
        return bash.options if isinstance(bash, BashTool) else BashOptions()

    async def _record_user_command(self, message: Message) -> None:
        tree = self._opts.tree
        try:
            await append_written(tree, lambda: tree.append_message(message))
        except (OSError, PiworkError) as err:
            self.emit(ErrorNotice(f"piwork could not save the command's output ({err}).", SAVE_FAILED))
            return
        self._messages.append(message)
        self.emit(MessageEnd(message))

    def _record_pending_user_commands(self) -> None:
        """Commands that ended while the agent worked join the session now that the run is over (appended
        in order; the store writes them in a worker when the window asked it to)."""
        tree = self._opts.tree
        for message in self.user_commands.take_pending():
            try:
                tree.append_message(message)
            except (OSError, PiworkError) as err:
                self.emit(ErrorNotice(f"piwork could not save the command's output ({err}).", SAVE_FAILED))
                continue
            self._messages.append(message)
            self.emit(MessageEnd(message))

    # ---- compaction and tree navigation ------------------------------------------------------------

    async def compact(self, focus: str | None = None) -> dict[str, Any] | None:
        """Manual compaction (stops the current run first). Returns the ``compaction_end`` result, ``None``
        when cancelled; raises :class:`PiworkError` with the reason when nothing could be compacted."""
        self._require_writable("compact")
        await self.abort()
        self._idle.clear()
        try:
            done = await self.checkpoints.manual(focus)
        finally:
            self._settle()
        if not done and self.checkpoints.last_error:
            raise PiworkError(self.checkpoints.last_error)
        return self._last_compaction_result if done else None

    async def navigate(
        self,
        target_id: str,
        *,
        summarize: bool = False,
        focus: str | None = None,
        label: str | None = None,
        replace_instructions: bool | None = None,
        on_progress: Callable[[BranchSummaryProgress], None] | None = None,
    ) -> NavigationResult:
        """Move to another point of the session tree, optionally summarizing the branch left behind.

        ``replace_instructions`` makes ``focus`` the whole summary instruction instead of an addition;
        ``on_progress`` hears each summary step. A read-only session can still be browsed; only a
        summary or a label would be written."""
        if summarize or label:
            self._require_writable("summarize or label a branch")
        if self.is_streaming:
            raise AgentBusy("Wait for the agent to finish (or stop it) before moving in the session tree.")
        self._idle.clear()
        try:
            result = await self.checkpoints.navigate(
                target_id,
                summarize=summarize,
                focus=focus,
                label=label,
                replace_instructions=replace_instructions,
                on_progress=on_progress,
            )
            self._restore_tool_set()
            return result
        finally:
            self._settle()

    async def follow_file(self, old_leaf_id: str | None) -> None:
        """The tree took in entries another program wrote to the session file (and may be on its leaf
        now): what the model sees follows the branch the tree is on, as after a move in the tree."""
        context = await asyncio.to_thread(self.tree.build_context)  # reads the whole path
        self.replace_messages(context.messages)
        self._restore_tool_set()
        self.emit(TreeNavigated(self.tree.leaf_id, old_leaf_id))

    def _restore_tool_set(self) -> None:
        """The tools the new branch declares (Pi 1.6 restores them on every move in the tree)."""
        recorded = recorded_tool_names(self.branch_system_messages())
        if recorded is not None:  # the built-in tools; a task's context tools stay as the task has them
            built_in = set(ALL_TOOL_NAMES) & set(self._opts.registry.names())
            kept = [name for name in self.tool_names() if name not in built_in]
            self._active_tools = [name for name in recorded if name in built_in] + kept

    # ---- what the model sees -----------------------------------------------------------------------

    async def leave_out_of_context(self, entry_id: str) -> str:
        """Leave an entry out of the model's context from the next request on.

        Writes a Pi 1.6 ``context_edit`` entry (``replacement: null``) as the new leaf; the file and
        the transcript keep the original message. ``entry_id`` must be a user, assistant or tool-result
        message, or a custom message, on the current branch. Returns the edit's entry id. Raises
        ``AgentBusy`` while the agent runs, ``ReadOnlySession``, ``EntryNotFound`` or
        ``ContextEditRejected`` (with the reason) otherwise.
        """
        return await self._edit_context(entry_id, lambda: self.tree.append_context_edit(entry_id, None))

    async def replace_in_context(self, entry_id: str, content: str | list[dict[str, Any]]) -> str:
        """Show the model ``content`` (text, or a list of content blocks) instead of the entry's own.

        Same format, rules and errors as :meth:`leave_out_of_context`; text for an assistant message
        or a tool result is written as one text block, as Pi does.
        """
        return await self._edit_context(entry_id, lambda: self.tree.append_context_edit(entry_id, content))

    async def restore_in_context(self, entry_id: str) -> str:
        """Give the model the entry's original content again (undoes the edits in force on it).

        Written as a ``context_edit`` whose replacement is the original content, so Pi reads it the
        same way. Raises ``ContextEditRejected`` when no edit is in force on the entry.
        """
        return await self._edit_context(entry_id, lambda: self.tree.restore_context_edit(entry_id))

    def context_edits(self) -> list[ActiveEdit]:
        """The context edits in force on the current branch (targets in branch order)."""
        return self.tree.context_edits()

    async def _edit_context(self, entry_id: str, append: Callable[[], str]) -> str:
        self._require_writable("change what the model sees")
        if self.is_streaming:
            raise AgentBusy("Wait for the agent to finish (or stop it) before changing what the model sees.")
        edit_id = await append_written(self.tree, append)
        context = await asyncio.to_thread(self.tree.build_context)
        self.replace_messages(context.messages)
        return edit_id

    # ---- model and thinking level ------------------------------------------------------------------

    def require_model(self) -> Model:
        model = self._model
        if model is None:
            raise NoModel("No model selected. Choose a model (and its provider) first.")
        if not self._has_credentials(model):
            variable = " or ".join(env_vars_for(model.provider))
            raise NoModel(
                f"No API key for {model.provider}. Set {variable}, or store the key in the keyring."
            )
        return model

    def _has_credentials(self, model: Model) -> bool:
        # a server on this computer needs no key: its key is not even looked up
        return is_loopback(model.base_url) or bool(self._opts.api_key_for(model))

    def set_model(self, model: Model) -> None:
        if not self._has_credentials(model):
            raise NoModel(f"No API key for {model.provider}/{model.id}")
        self._model = model
        if self.read_only_reason is None:  # a read-only session changes in memory only
            self._opts.tree.append_model_change(model.provider, model.id)
        self.emit(ModelChanged(model.provider, model.id))
        self.set_thinking_level(self._thinking_level)

    def set_thinking_level(self, level: ThinkingLevel) -> ThinkingLevel:
        """Clamp to what the model supports; records a change in the session file."""
        effective = resolve_level(self._model, level) if self._model is not None else level
        if effective != self._thinking_level:
            self._thinking_level = effective
            if self.read_only_reason is None:
                self._opts.tree.append_thinking_level_change(effective)
            self.emit(ThinkingLevelChanged(effective))
        return effective

    def _record_thinking_level(self) -> None:
        """Before a prompt, write the live thinking level on the branch when the branch's latest level
        (clamped to the current model) says another, as Pi 1.6 does: a ``--thinking`` given on resume, or a
        branch reached by moving in the tree, then reopens with the level the prompt ran at. A branch
        that never recorded a level is left alone (the run's first append records one)."""
        if self.read_only_reason is not None:
            return
        recorded = next(
            (r for r in reversed(self._opts.tree.path()) if r.type == "thinking_level_change"), None
        )
        if recorded is None:
            return
        level = _as_thinking_level(recorded.meta.get("thinkingLevel"))
        if level is None:
            return
        implied = resolve_level(self._model, level) if self._model is not None else level
        if implied != self._thinking_level:
            self._opts.tree.append_thinking_level_change(self._thinking_level)

    def branch_system_messages(self) -> list[Message]:
        """Every system message on the current branch, before a compaction too (Pi 1.6's prompt state)."""
        tree = self._opts.tree
        return [tree.body(r)["message"] for r in tree.path() if r.type == "message" and r.role == "system"]

    def _record_tool_set(self) -> None:
        """Before a prompt, declare the tools the requests carry when the branch's system messages say
        another set (tools turned on or off, a ``--tools`` list), as Pi 1.6 does, so either program
        reopening the session restores them. Only the tools: the prompt text is each program's own. A
        branch that records no set and runs the default selection stays without one."""
        if self.read_only_reason is not None:
            return
        recorded = current_tools(self.branch_system_messages())
        unrecorded = self._opts.unrecorded_tools
        if not recorded and (unrecorded is None or set(self.tool_names()) == set(unrecorded)):
            return  # both programs open it with these tools anyway
        registry = self._opts.registry
        current = [
            tool_declaration(spec.name, spec.description, spec.parameters)
            for spec in registry.specs(self.tool_names())
        ]
        update = tool_set_update(recorded, current, self._opts.now_ms())
        if update is not None:
            self._opts.tree.append_message(update)

    # ---- run lifecycle -----------------------------------------------------------------------------

    async def _run(self, prompts: list[Message]) -> None:
        await self._run_loop(prompts)
        await self._drain_runs()
        await self.governance.settle(self._continue_once)

    async def _drain_runs(self) -> None:
        while await self._after_run():
            await self._run_loop(None)

    async def _continue_once(self) -> None:
        await self._run_loop(None)
        await self._drain_runs()

    async def continue_run(self) -> None:
        """Run again from the current context (used after compaction recovery or a retry)."""
        self._require_writable("continue the run")
        self._idle.clear()
        try:
            await self._run_loop(None)
            await self._drain_runs()
            await self.governance.settle(self._continue_once)
        finally:
            self._settle()

    async def _run_loop(self, prompts: list[Message] | None) -> None:
        signal = self._run_signal = AbortSignal()
        loop = AgentLoop(self._loop_config(), self._on_loop_event, signal)
        try:
            if prompts is not None:
                await loop.run(prompts, list(self._messages))
            elif self._messages and self._messages[-1].get("role") == "assistant":
                queued = self.queues.steering.drain() or self.queues.follow_up.drain()
                if queued:
                    await loop.run(queued, list(self._messages), skip_initial_steering=True)
            else:
                await loop.resume(list(self._messages))
        finally:
            self._run_signal = None

    def _loop_config(self) -> LoopConfig:
        checkpointer = self._opts.checkpointer
        return LoopConfig(
            stream_fn=self.stream_fn,
            setup=self._request_setup,
            convert_to_llm=convert_to_llm,
            get_steering=self.queues.steering.drain,
            get_follow_up=self.queues.follow_up.drain,
            transform_context=self._opts.transform_context,
            shape_request=self.governance.shape,
            before_shape=self.governance.count_ahead,
            prepare_next_turn=self._prepare_next_turn,
            before_tool_call=chain_hooks(
                self._opts.before_tool_call, checkpointer.before if checkpointer is not None else None
            ),
            after_tool_call=checkpointer.after if checkpointer is not None else None,
            tool_execution=self._opts.tool_execution,
            on_call=self._on_call,
            persist=self._persist,
            now_ms=self._opts.now_ms,
        )

    async def _request_setup(self) -> RequestSetup:
        model = self.require_model()
        # the key may have to come from the keyring, which can take seconds: not on the event loop
        api_key = await asyncio.to_thread(self._opts.api_key_for, model)
        setup = request_setup(
            self._opts, model, api_key, self._thinking_level, self.tool_names(), self.system_prompt()
        )
        # the attempts of one reply share its time limits (see ``reply_limits``)
        return dataclasses.replace(
            setup, options=dataclasses.replace(setup.options, reply=self.retry.reply_budget())
        )

    async def _prepare_next_turn(self, turn: CompletedTurn) -> list[Message] | None:
        return await self.checkpoints.before_next_request(turn)

    def _on_tree_event(self, event: TreeEvent) -> None:
        """A compaction or branch summary appended with the usage of its model call: bill it."""
        if event.kind != "append" or event.entry_id is None:
            return
        record = self._opts.tree.record(event.entry_id)
        if record is None or record.type not in ("compaction", "branch_summary"):
            return
        body = self._opts.tree.body(record)
        usage = body.get("usage") if isinstance(body, dict) else None
        if isinstance(usage, dict):
            self.governance.on_summary_usage(usage)

    def _on_call(self, record: CallRecord) -> None:
        self.retry.note_call(record)
        self.telemetry.record_call(record)
        self.governance.on_call(record)

    def _on_loop_event(self, event: AgentEvent) -> None:
        if isinstance(event, MessageStart) and event.message.get("role") == "user":
            self.checkpoints.reset_overflow_attempt()
            self.queues.delivered(event.message)
        if isinstance(event, AgentEnd):
            event = AgentEnd(event.messages, self.retry.will_retry(event.messages))
        if not isinstance(event, MessageEnd):
            self.emit(event)
            return
        # the loop awaited ``_persist`` first: the entry is in the session file (as durable as the store
        # makes it) before anyone hears of it
        failure, self._save_failure = self._save_failure, None
        self.emit(event)
        if failure is not None:
            self.emit(failure)
        self._record(event.message)

    def _record(self, message: Message) -> None:
        """The ended message joins the in-memory context; a reply updates retry and overflow state."""
        self._messages.append(message)
        if message.get("role") != "assistant":
            return
        self._last_assistant = message
        stop = message.get("stopReason")
        if stop not in ("error", "length"):
            self.checkpoints.reset_overflow_attempt()
        self.retry.on_reply(message)

    async def _session_file_usable(self) -> bool:
        """A new session whose file could not be written is said so before any model request."""
        try:
            await asyncio.to_thread(self._opts.check_can_save)
        except OSError as err:
            self.emit(
                ErrorNotice(
                    f"piwork could not save to the session file ({err.strerror or err}), so nothing was "
                    "sent to the model. Free some space or choose another session folder.",
                    SAVE_FAILED,
                )
            )
            return False
        return True

    async def _persist(self, message: Message) -> None:
        """Append an ended message to the session file, writing and fsyncing it in a worker thread (the
        writer lane keeps appends in order). If that fails, stop the run (nothing unrecorded runs on) and
        keep the notice to show once the message's ``message_end`` was heard."""
        if message.get("role") not in ("user", "assistant", "toolResult"):
            return
        tree = self._opts.tree
        try:
            await append_written(tree, lambda: tree.append_message(message))
        except (OSError, PiworkError) as err:
            if self._run_signal is not None:
                self._run_signal.abort()
            self._save_failure = ErrorNotice(
                f"piwork could not save to the session file ({err}). The run was stopped; "
                "the conversation so far is still shown but was not all saved.",
                SAVE_FAILED,
            )

    async def _after_run(self) -> bool:
        """After a low-level run: retry a transient failure, else compaction checkpoint B, else queued input."""
        message, self._last_assistant = self._last_assistant, None
        if message is None:
            return False
        if await self.retry.handle(message):
            return True
        if await self.checkpoints.check(message, skip_aborted=True):
            return True
        return bool(self.queues)

    def _settle(self) -> None:
        self._record_pending_user_commands()
        self._idle.set()
        self.emit(AgentSettled())

    # ---- helpers -----------------------------------------------------------------------------------

    def _expand(self, text: str) -> str:
        try:
            return self._opts.expand_input(text)
        except Exception as err:  # a broken skill file must not lose what the user typed
            self.emit(
                ErrorNotice(f"Could not expand {text.split()[0] if text.split() else text!r}: {err}", "skill")
            )
            return text

    def _last_assistant_in_context(self) -> Message | None:
        for message in reversed(self._messages):
            if message.get("role") == "assistant":
                return message
        return None


def _as_thinking_level(value: object) -> ThinkingLevel | None:
    return next((level for level in THINKING_LEVELS if level == value), None)
