"""Assembling an AgentSession for a folder: trust and resources, settings, session file, model, key, tools.

Headless mode and the window both start here. Project trust is resolved before any project resource is
read (``load_project``); the model comes from the flags, else the continued session, else settings, else
the first provider with credentials.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import re
import stat
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from piwork.core.agent.abort import AbortSignal
from piwork.core.agent.events import ErrorNotice, Message
from piwork.core.agent.options import AgentSessionOptions
from piwork.core.agent.session import AgentSession
from piwork.core.agent.system_prompt import prompt_parts_for
from piwork.core.agent.telemetry import UsageTelemetry, telemetry_path
from piwork.core.agent.tool_calls import BeforeToolCall, chain_hooks
from piwork.core.approvals.gate import ApprovalAsker, ApprovalGate
from piwork.core.approvals.store import ApprovalStore
from piwork.core.checkpoints import Checkpointer
from piwork.core.context.caps import cap_context_files
from piwork.core.context.contract import allowed_tools, latest_contract
from piwork.core.context.task_exclusions import TaskExclusions
from piwork.core.context.telemetry import ContextTelemetry, telemetry_file
from piwork.core.context.verifier import VerifierGate, gate_for_session, registered_verifiers
from piwork.core.errors import PiworkError
from piwork.core.llm.credentials import CredentialStore, choose_keyring_backend
from piwork.core.llm.key_record import KeyRecord
from piwork.core.llm.models import ModelRegistry, default_model
from piwork.core.llm.thinking import resolve_level
from piwork.core.llm.tokens import TokenCounter, Tokenizers
from piwork.core.llm.transport import is_loopback
from piwork.core.llm.types import OPENAI_COMPLETIONS, THINKING_LEVELS, Model, StreamOptions, ThinkingLevel
from piwork.core.resources.loader import LoadedResources, LoaderOptions, load_project
from piwork.core.resources.prompts import expand_prompt_template
from piwork.core.resources.system_prompt import PromptPart, expand_skill_command
from piwork.core.resources.trust import TrustAsker, TrustResolver
from piwork.core.resources.trust_store import TrustStore
from piwork.core.session.context import entry_to_messages
from piwork.core.session.format import default_session_dir, json_loads_bytes
from piwork.core.session.message_shape import usable_message
from piwork.core.session.store import Session, create_session, in_memory_session, open_session
from piwork.core.session.system_messages import recorded_tool_names
from piwork.core.session.tree import SessionTree
from piwork.core.session.tree_context import context_for_path
from piwork.core.settings import cache_retention, thinking_budgets
from piwork.core.settings_schema import (
    CHECKPOINTS_ENABLED,
    CHECKPOINTS_MAX_FILE_MB,
    CHECKPOINTS_MAX_FILES,
    DEFAULT_MODEL,
    DEFAULT_PROVIDER,
    DEFAULT_THINKING_LEVEL,
    HTTP_IDLE_TIMEOUT_MS,
    HTTP_PROXY,
    MODEL_THINKING_LEVELS,
    PROVIDER_MAX_RETRIES,
    PROVIDER_MAX_RETRY_DELAY_MS,
    PROVIDER_TIMEOUT_MS,
    SESSION_DIR,
)
from piwork.core.settings_values import SettingValues
from piwork.core.tool_selection import restored_tool_names, session_tool_names
from piwork.core.tools.base import ToolRegistry
from piwork.core.tools.logs import session_log_dir
from piwork.core.tools.registry import ALL_TOOL_NAMES, ToolOptions, create_default_tools
from piwork.core.workflows.model_tools import context_tools, governor_figures

if TYPE_CHECKING:
    from piwork.core.compaction.hooks import CompactionHooks
    from piwork.core.resources.trust_snapshot import Snapshot
    from piwork.core.workflows.view import ContextView

SESSION_DIR_ENV = "PI_CODING_AGENT_SESSION_DIR"
READ_ONLY = (
    "Another piwork (a window or a headless run) may be writing this session, so it is open read-only here."
)


class SetupError(PiworkError):
    """The run cannot start (unknown model, missing folder, unreadable session file...)."""


@dataclass
class RuntimeOptions:
    cwd: str
    agent_dir: Path
    provider: str | None = None
    model: str | None = None  # "id" or "provider/id"
    base_url: str | None = None
    thinking: ThinkingLevel | None = None
    session_file: str | None = None
    continue_recent: bool = False
    no_session: bool = False
    # --session-id: the folder's session with this id, created with it when there is none
    session_id: str | None = None
    # --tools (names, * patterns, or only +name/-name), --no-tools, --exclude-tools
    tools: tuple[str, ...] | None = None
    no_tools: bool = False
    exclude_tools: tuple[str, ...] | None = None
    trust_override: bool | None = None  # --approve / --no-approve
    trust_reviewed: Snapshot | None = None  # the files a trust decision taken by the caller was made on
    ask_trust: TrustAsker | None = None  # None: nobody to ask (headless)
    api_key: str | None = None  # one-run key, memory only
    credentials: CredentialStore | None = None
    # the caller loads the keys itself (a window, in a worker): the session then opens without waiting
    # for the keyring when the model does not depend on it (recorded in the session, named, or the
    # settings' default), and the caller must not send before the keyring has answered
    keys_loaded_by_caller: bool = False
    # count the session file's totals (every entry read) while opening, off the loop, for a caller that
    # shows them at once (the window counts them later, in a worker, so that its chat shows first; a
    # ``-p`` run never shows them)
    count_stats_at_open: bool = True
    # a window shows the leaf's last messages as soon as the file is read, before the whole context is
    # built: given about ``preview_messages`` of them (from a prompt on) when the branch is long
    preview: Callable[[list[Message]], Awaitable[None]] | None = None
    preview_messages: int = 400
    loader: LoaderOptions = field(default_factory=LoaderOptions)
    # per-request view of the context (context governance); never changes the transcript
    transform_context: Callable[[list[Message], AbortSignal], Awaitable[list[Message]]] | None = None
    hooks: CompactionHooks | None = None  # before/after compaction and tree navigation
    token_counter: TokenCounter | None = None  # the context governor's tokenizer, fixed
    # else the model's own offline tokenizer from these (its file verified and loaded off the event
    # loop); the governor follows model changes. Neither: chars/4
    tokenizers: Tokenizers | None = None
    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    # approvals: who asks the user (None: nobody, an ask is refused), --yes (every ask approved), and the
    # hooks that run after the approval for the calls it allows (a snapshot before a change...)
    ask_approval: ApprovalAsker | None = None
    approve_all: bool = False
    after_approval: tuple[BeforeToolCall, ...] = ()


@dataclass
class AgentRuntime:
    session: AgentSession
    store: Session
    resources: LoadedResources
    models: ModelRegistry
    credentials: CredentialStore
    verifier_gate: VerifierGate | None = None  # around the bash tool's verifier runs
    approvals: ApprovalGate | None = None  # the project's approval mode and rules, asked before each call

    @property
    def notices(self) -> list[str]:
        """What the user should be told about the session file (why it is read-only, a reload...)."""
        reason = _read_only_reason(self.store)
        notices = list(self.store.notices)
        return notices if reason is None or reason in notices else [reason, *notices]

    def file_warnings(self) -> list[str]:
        """What is wrong in the user's files read at start (each left untouched) and what was done instead."""
        resources, settings = self.resources, self.resources.settings
        warnings = [f"{p.path or p.scope + ' settings'}: {p.message}" for p in settings.problems]
        warnings += settings.type_warnings  # each declared key whose value was refused, with its file
        warnings += list(resources.trust.warnings) if resources.trust is not None else []
        warnings += [f"{d.path}: {d.message}" for d in self.models.diagnostics]
        for diagnostic in (
            *resources.skill_diagnostics,
            *resources.prompt_diagnostics,
            *resources.context_diagnostics,
            *resources.package_diagnostics,
        ):
            if diagnostic.type != "collision":
                warnings.append(f"{diagnostic.path}: {diagnostic.message}")
        for row in resources.rows:  # a template skipped for a reason the loader did not report
            if row.kind == "prompt" and row.state == "error":
                warnings += [w for d in row.diagnostics if (w := f"{d.path}: {d.message}") not in warnings]
        warnings += resources.prompt_sources.warnings
        warnings += self.approvals.warnings if self.approvals is not None else []
        problems = self.store.tree.diagnostics
        if problems and self.store.path is not None:
            first = problems[0]
            more = f" (and {len(problems) - 1} more problem(s))" if len(problems) > 1 else ""
            warnings.append(
                f"{self.store.path}: line {first.line}: {first.message}{more}; the file is kept as it is "
                f"and new entries are appended after it"
            )
        return warnings


async def create_runtime(options: RuntimeOptions) -> AgentRuntime:
    cwd = os.path.abspath(options.cwd)
    if not os.path.isdir(cwd):
        raise SetupError(f"The folder {cwd} does not exist.")
    agent_dir = options.agent_dir
    # A key given for this run (``--api-key``) is the model's key: the keyring is not asked at start (nor
    # keyring imported), only if another provider's key is ever looked up.
    key_given = bool(options.api_key and options.api_key.strip())
    # Which providers the keyring holds no key for, as far as piwork knows: a run whose key comes from the
    # environment or models.json then never asks it (nor loads keyring).
    record = KeyRecord.of(agent_dir) if options.credentials is None else None
    # The OS keyring backend is chosen in a worker while the project and the session are read: keyring
    # probes every installed backend (a few hundred milliseconds); the keys are asked for further down.
    # Not when this setup's record is there: the keyring is most likely not asked at all.
    choosing = (
        asyncio.create_task(asyncio.to_thread(choose_keyring_backend))
        if record is not None and not key_given and not await asyncio.to_thread(record.current)
        else None
    )
    resolver = TrustResolver(TrustStore(str(agent_dir)), ask=options.ask_trust)
    resources = await load_project(
        cwd,
        str(agent_dir),
        resolver,
        dataclasses.replace(
            options.loader, context_file_cap=options.loader.context_file_cap or cap_context_files
        ),
        override=options.trust_override,
        reviewed=options.trust_reviewed,
    )
    settings = resources.settings.values
    models = await asyncio.to_thread(ModelRegistry, agent_dir)  # reads models.json: not on the loop
    credentials = options.credentials or CredentialStore(
        env=options.env,
        config_key=models.config_api_key,
        config_key_pending=models.config_api_key_pending,
        record=record,
    )
    # reading a long session file takes seconds: not on the event loop the window runs
    previewed = False
    if options.preview is not None and options.session_file:  # before the file is indexed: from its end
        early = await asyncio.to_thread(file_end_tail, options.session_file, options.preview_messages)
        if early is not None:
            await options.preview(early)
            previewed = True
    store = await asyncio.to_thread(_open_store, options, cwd, agent_dir, settings)
    if options.preview is not None and not previewed:
        tail = await asyncio.to_thread(leaf_tail, store.tree, options.preview_messages)
        if tail is not None:
            await options.preview(tail)
    context = await asyncio.to_thread(store.tree.build_context)
    # The keyring may take seconds to answer (an unlock prompt): it is asked once per provider, off the
    # event loop; the session's own key look-ups (each request, a model change) then answer from memory.
    local = {m.provider for m in models.models if is_loopback(m.base_url)}  # servers here need no key
    asked: list[str] = []
    # a window opens on the settings' default at once; whether it has a key shows when the keyring answers
    opens_at_once = (
        SettingValues.of(settings).value(DEFAULT_PROVIDER) if options.keys_loaded_by_caller else None
    )

    def known_without_keyring(provider: str) -> bool:
        if provider in local or options.api_key or provider == opens_at_once:
            return True
        asked.append(provider)  # the choice depends on the keyring's answer
        return False

    model = _choose_model(options, models, known_without_keyring, settings, context.model)
    if choosing is not None:
        await choosing
    # a caller that loads the keys itself gets a snapshot of every provider; a run looks up only what it uses
    look_up = credentials.ensure_loaded if options.keys_loaded_by_caller else credentials.look_up
    if asked:  # the model is the first provider's with a key
        await asyncio.to_thread(look_up, models.providers())
        model = _choose_model(
            options,
            models,
            lambda p: known_without_keyring(p) or credentials.has_credentials(p),
            settings,
            context.model,
        )
    if model is not None:  # a header given as a ``!command`` runs the user's command: not on the loop
        model = await asyncio.to_thread(models.with_resolved_headers, model)
    # a custom server named on the command line
    if model is not None and not (options.keys_loaded_by_caller or key_given):
        await asyncio.to_thread(credentials.look_up, [model.provider])
    if options.api_key and model is not None:
        credentials.set_session_key(model.provider, options.api_key)
    thinking = _choose_thinking(options, settings, context, store.tree, model)
    counter, counter_for = await _token_counting(options, model)
    store.tree.before_next_append(lambda: _record_initial_state(store, context, model, thinking))
    gate = gate_for_session(agent_dir, store.tree, cwd, resources.project_trusted)
    tool_options = dataclasses.replace(ToolOptions.from_settings(agent_dir, settings), command_gate=gate)
    registry = create_default_tools(ALL_TOOL_NAMES, tool_options)
    running: list[AgentSession] = []  # the session below, once made (the context tools measure it)

    def view() -> ContextView | None:
        # the view's modules load when the model first calls a context tool, not with every run
        from piwork.core.workflows.view import view_from_session

        return view_from_session(running[0], resources) if running else None

    for tool in context_tools(
        view,
        lambda: governor_figures(running[0].governance) if running else None,
    ):
        registry.add(tool)  # active during a task only (the contract's tool rules)
    exclusions = TaskExclusions(store.tree)
    # the defaultTools setting (global, then project) chooses the tools a session starts with
    starting_tools = session_tool_names(
        ALL_TOOL_NAMES,
        resources.settings.default_tools(),
        tools=options.tools,
        no_tools=options.no_tools,
        exclude=options.exclude_tools,
    )
    # a branch that declares its tools (Pi 1.6's system messages) reopens with them
    restored = restored_tool_names(
        recorded_tool_names(
            store.tree.body(r)["message"]
            for r in store.tree.path()
            if r.type == "message" and r.role == "system"
        ),
        ALL_TOOL_NAMES,
        tools=options.tools,
        no_tools=options.no_tools,
        exclude=options.exclude_tools,
    )
    if restored is not None:
        starting_tools = restored

    def parts_for(names: Sequence[str]) -> list[PromptPart]:
        # a context file excluded for this task is a marker in <project_context> until the task ends
        return prompt_parts_for(resources, names, registry, exclusions.context_files)

    def system_prompt_for(names: Sequence[str]) -> str:
        return "".join(part.text for part in parts_for(names))

    def expand(text: str) -> str:
        return expand_prompt_template(expand_skill_command(text, resources.skills), resources.prompts)

    session_id = store.session_id
    persisted = store.path is not None
    approvals = ApprovalGate(ApprovalStore(agent_dir), store.cwd, options.ask_approval, options.approve_all)
    await approvals.load()
    told: list[AgentSession] = []  # the session, once made: where the checkpointer's notices go
    checkpointer = _checkpointer(store, agent_dir, registry, settings, told)
    session = AgentSession(
        AgentSessionOptions(
            tree=store.tree,
            registry=registry,
            cwd=store.cwd,
            model=model,
            thinking_level=thinking,
            api_key_for=lambda m: credentials.api_key(m.provider),
            system_prompt_for=system_prompt_for,
            system_prompt_parts_for=parts_for,
            messages=list(context.messages),
            settings=settings,
            active_tools=allowed_tools(latest_contract(store.tree), starting_tools, registry.names()),
            unrecorded_tools=session_tool_names(ALL_TOOL_NAMES, resources.settings.default_tools()),
            expand_input=expand,
            base_options=stream_options_from_settings(settings, options.env),
            session_id=session_id,
            session_file=store.path,
            log_dir=session_log_dir(agent_dir, session_id) if persisted else None,
            telemetry=UsageTelemetry(telemetry_path(agent_dir, session_id) if persisted else None),
            transform_context=options.transform_context,
            before_tool_call=chain_hooks(approvals.before_tool_call, *options.after_approval),
            context_telemetry=ContextTelemetry(
                telemetry_file(agent_dir, store.cwd, session_id) if persisted else None
            ),
            token_counter=counter,
            token_counter_for=counter_for,
            verifier_commands=lambda: registered_verifiers(store.tree, cwd, resources.project_trusted),
            project_trusted=lambda: resources.project_trusted,
            hooks=options.hooks,
            read_only_reason=lambda: _read_only_reason(store),
            check_can_save=store.check_can_save,
            known_secrets=credentials.known_secrets,
            task_exclusions=exclusions,
            checkpointer=checkpointer,
        )
    )
    told.append(session)
    running.append(session)
    gate.on_reuse = session.governance.verifier_reused  # a reused verifier pass is a governor log row
    if options.count_stats_at_open:  # the first count reads every entry: not on the loop
        await asyncio.to_thread(session.session_stats)
    # notices raised from now on (the file changed on disk and was reloaded...) reach the subscribers
    store.on_notice = lambda text: session.emit(ErrorNotice(text, "session"))
    return AgentRuntime(session, store, resources, models, credentials, gate, approvals)


def leaf_tail(tree: SessionTree, count: int) -> list[Message] | None:
    """The last messages of the leaf's context, about ``count`` of them from a prompt on, read from their
    own entries only (the context's last messages, as ``build_context`` gives them); None for a branch of
    fewer than twice as many entries, without such a prompt, or where a compaction among them or a context
    edit on the branch changes what they stand for."""
    path = tree.path()
    if len(path) < 2 * count:
        return None
    start = next(
        (i for i in range(len(path) - count, 0, -1) if path[i].type == "message" and path[i].role == "user"),
        None,
    )
    if start is None or any(record.type == "context_edit" for record in path):
        return None
    tail = path[start:]
    if any(record.type == "compaction" for record in tail):
        return None
    return list(context_for_path(tree, tail, honour_retained_tail=False).messages)


FILE_END_BYTES = 4 << 20  # how much of a long session file's end ``file_end_tail`` reads
_NO_PREVIEW = ("compaction", "context_edit")  # entries that change what the messages around them stand for


def file_end_tail(path: str, count: int) -> list[Message] | None:
    """The leaf's last messages (about ``count``, from a prompt on) read from the end of a long session file
    alone, before the file is indexed: the leaf is its last entry (as when the file opens), its chain of
    parents followed through the lines of the file's last ``FILE_END_BYTES``. None when those lines do not
    hold that much of the branch, a line there is not an entry, or a compaction or context edit is among
    them. A context edit further up the branch can change one of them: whoever shows them compares them
    with the context once it is built."""
    try:  # never waited on: a FIFO or device named as the session is refused when the file is opened
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        with open(fd, "rb", buffering=0) as file:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return None
            size = file.seek(0, os.SEEK_END)
            if size <= FILE_END_BYTES:
                return None  # read whole in a moment anyway
            file.seek(size - FILE_END_BYTES)
            data = file.read(FILE_END_BYTES)
    except OSError:
        return None  # opening the file says what is wrong
    by_id: dict[str, dict[str, Any]] = {}
    leaf: dict[str, Any] | None = None
    for line in reversed(data.split(b"\n")[1:]):  # the first line is cut
        if not line.strip():
            continue
        try:
            entry = json_loads_bytes(line)
        except ValueError:
            return None
        if type(entry) is not dict or type(entry.get("id")) is not str or entry.get("type") == "session":
            return None
        by_id.setdefault(entry["id"], entry)  # an id used twice: the later entry is the one kept
        leaf = leaf or entry
    chain: list[dict[str, Any]] = []
    entry = leaf
    messages = 0
    while entry is not None:
        if entry.get("type") in _NO_PREVIEW or len(chain) > len(by_id):  # (or the parents make a cycle)
            return None
        chain.append(entry)
        messages += entry.get("type") == "message"
        message = entry.get("message")
        if messages >= count and type(message) is dict and message.get("role") == "user":
            break
        parent = entry.get("parentId")
        entry = by_id.get(parent) if type(parent) is str else None
        if entry is None:
            return None  # the branch goes on before these lines (or starts among them: a short one)
    tail: list[Message] = []
    for entry in reversed(chain):
        tail.extend(fixed for m in entry_to_messages(entry) if (fixed := usable_message(m)) is not None)
    return tail


async def _token_counting(
    options: RuntimeOptions, model: Model | None
) -> tuple[TokenCounter | None, Callable[[Model], TokenCounter] | None]:
    """The governor's tokenizer: the one given, else the model's from ``options.tokenizers``."""
    tokenizers = options.tokenizers
    if options.token_counter is not None or tokenizers is None:
        return options.token_counter, None
    if model is not None:
        await asyncio.to_thread(tokenizers.load_for, model.id)
    counter = tokenizers.counter_for(model.id) if model is not None else None
    return counter, lambda m: tokenizers.counter_for(m.id)


def _read_only_reason(store: Session) -> str | None:
    if not store.read_only:
        return None
    return store.notices[-1] if store.notices else READ_ONLY


def stream_options_from_settings(
    settings: Mapping[str, Any], env: Mapping[str, str] | None = None
) -> StreamOptions:
    """Network limits and retries from settings: ``httpIdleTimeoutMs`` (silence), ``retry.provider.timeoutMs``
    (overall deadline per request), ``retry.provider.maxRetries``/``maxRetryDelayMs``, ``httpProxy``;
    ``thinkingBudgets`` (tokens per thinking level); and the prompt-cache retention (``piwork.cacheRetention``,
    else ``PI_CACHE_RETENTION`` in ``env``, the process environment by default).
    A value of 0 turns a limit off; the defaults are the declarations' (``settings_schema``)."""
    values = SettingValues.of(settings)
    idle_ms = values.value(HTTP_IDLE_TIMEOUT_MS)
    total_ms = values.value(PROVIDER_TIMEOUT_MS)
    return StreamOptions(
        idle_timeout=idle_ms / 1000 if idle_ms > 0 else None,
        total_timeout=total_ms / 1000 if total_ms > 0 else None,
        max_retries=values.value(PROVIDER_MAX_RETRIES),
        max_retry_delay_ms=values.value(PROVIDER_MAX_RETRY_DELAY_MS),
        proxy=values.value(HTTP_PROXY),
        thinking_budgets=thinking_budgets(values) or None,
        cache_retention=cache_retention(settings, os.environ if env is None else env),
    )


def _checkpointer(
    store: Session,
    agent_dir: Path,
    registry: ToolRegistry,
    settings: Mapping[str, Any],
    told: list[AgentSession],
) -> Checkpointer | None:
    """The session's checkpoints of the project's files (see piwork.core.checkpoints), unless turned off."""
    values = SettingValues.of(settings)
    if not values.value(CHECKPOINTS_ENABLED):
        return None

    def notify(text: str) -> None:
        for session in told:
            session.emit(ErrorNotice(text, "checkpoints"))

    return Checkpointer(
        store.cwd,
        lambda: store.path,
        agent_dir,
        store.tree,
        registry.facts,
        values.value(CHECKPOINTS_MAX_FILE_MB),
        notify,
        max_files=values.value(CHECKPOINTS_MAX_FILES),
    )


def _open_store(options: RuntimeOptions, cwd: str, agent_dir: Path, settings: Mapping[str, Any]) -> Session:
    try:
        return _open_or_create_store(options, cwd, agent_dir, settings)
    except OSError as err:  # a folder where a file should be, no permission, a full disk...
        # an error raised on an open descriptor names its number, not the file: say the file
        named = err.filename if isinstance(err.filename, str) and err.filename else None
        where = named or options.session_file or "the session folder"
        if isinstance(err, IsADirectoryError):
            reason = "it is a folder, not a session file"
        elif isinstance(err, FileExistsError | NotADirectoryError):
            reason = "a file stands where a folder is needed"
            if not options.session_file:
                reason += "; move it aside or set another sessionDir"
        else:
            reason = err.strerror or str(err)
        verb = "open the session file" if options.session_file else "keep the session in"
        raise SetupError(f"Cannot {verb} {where}: {reason}.") from err


def _open_or_create_store(
    options: RuntimeOptions, cwd: str, agent_dir: Path, settings: Mapping[str, Any]
) -> Session:
    if options.session_id is not None:
        check_session_id(options.session_id)
        if options.session_file or options.continue_recent:
            raise SetupError("--session-id cannot be combined with --session or --continue.")
    if options.no_session:
        return in_memory_session(cwd, session_id=options.session_id)
    if options.session_file:
        try:
            return open_session(options.session_file, cwd=cwd)
        except PiworkError as err:
            raise SetupError(str(err)) from err
    session_dir = _session_dir(options, settings)
    from piwork.core.session.listing import list_sessions, most_recent_session  # reads the folder's sessions

    if options.continue_recent:
        folder = Path(session_dir) if session_dir else default_session_dir(cwd, agent_dir)
        recent = most_recent_session(folder) if folder.is_dir() else None
        if recent is not None:
            return open_session(recent, cwd=cwd)
    if options.session_id is not None:
        sessions = list_sessions(cwd, agent_dir=agent_dir, session_dir=session_dir)
        found = next((s for s in sessions if s.id == options.session_id and not s.cwd_mismatch), None)
        if found is not None:
            return open_session(found.path, cwd=cwd)
        store = create_session(cwd, session_dir, agent_dir=agent_dir, session_id=options.session_id)
        store.notices.append(
            f"No session of this folder has the id '{options.session_id}': a new session is created with it."
        )
        return store
    return create_session(cwd, session_dir, agent_dir=agent_dir)


_SESSION_ID = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")


def check_session_id(session_id: str) -> None:
    """A session id given on the command line becomes part of a file name: letters, digits, '.', '_'
    and '-' only, starting and ending with a letter or digit (as Pi requires)."""
    if not _SESSION_ID.fullmatch(session_id):
        raise SetupError(
            "A session id must be non-empty, contain only letters, digits, '-', '_' and '.', "
            "and start and end with a letter or digit."
        )


def _session_dir(options: RuntimeOptions, settings: Mapping[str, Any]) -> str | None:
    from_env = options.env.get(SESSION_DIR_ENV)
    if from_env:
        return from_env
    return SettingValues.of(settings).value(SESSION_DIR)


def _choose_model(
    options: RuntimeOptions,
    models: ModelRegistry,
    has_key: Callable[[str], bool],
    settings: Mapping[str, Any],
    session_model: Mapping[str, Any] | None,
) -> Model | None:
    provider, model_id = options.provider, options.model
    if model_id and "/" in model_id and not provider:
        provider, model_id = model_id.split("/", 1)
    if model_id:
        model = _find(models, provider, model_id)
        if model is None:
            if not options.base_url:
                where = f"{provider}/{model_id}" if provider else model_id
                raise SetupError(
                    f"Unknown model {where}. Check the id, or pass --base-url for a custom server."
                )
            model = _custom_model(models, provider or "custom", model_id, options.base_url)
    elif session_model and isinstance(session_model.get("provider"), str):
        last_provider, last_id = str(session_model["provider"]), str(session_model.get("modelId", ""))
        model = models.find(last_provider, last_id)
        if model is None and options.base_url and last_id:  # the session ran on a custom server
            model = _custom_model(models, last_provider, last_id, options.base_url)
    else:
        model = None
    if model is None and provider and not model_id:
        model = next((m for m in models.models if m.provider == provider and m.api_supported), None)
        if model is None:
            raise SetupError(f"Unknown provider {provider}.")
    if model is None:
        values = SettingValues.of(settings)
        model = default_model(
            models,
            has_key,
            values.value(DEFAULT_PROVIDER),
            values.value(DEFAULT_MODEL),
        )
    if model is not None and options.base_url:
        model = dataclasses.replace(model, base_url=options.base_url)
    return model


def _find(models: ModelRegistry, provider: str | None, model_id: str) -> Model | None:
    if provider:
        return models.find(provider, model_id)
    return next((m for m in models.models if m.id == model_id), None)


def _custom_model(models: ModelRegistry, provider: str, model_id: str, base_url: str) -> Model:
    """A model the registry does not know, on a server given by ``--base-url``."""
    known = next((m for m in models.models if m.provider == provider), None)
    api = known.api if known is not None else OPENAI_COMPLETIONS
    return Model(id=model_id, name=model_id, api=api, provider=provider, base_url=base_url)


def _as_level(value: Any) -> ThinkingLevel | None:
    return next((level for level in THINKING_LEVELS if level == value), None)


def _choose_thinking(
    options: RuntimeOptions,
    settings: Mapping[str, Any],
    context: Any,
    tree: SessionTree,
    model: Model | None,
) -> ThinkingLevel:
    """The level a run starts at, chosen in Pi's order so both tools continue a file the same way.

    An explicit ``--thinking`` wins; a session with messages keeps its recorded level (or takes the
    default when it never recorded one); then the per-model setting; then ``defaultThinkingLevel``;
    then ``medium``. Without a model there is nothing to think with (``off``); otherwise the level is
    fitted to what the model supports.
    """
    values = SettingValues.of(settings)
    default = values.value(DEFAULT_THINKING_LEVEL)
    level = options.thinking
    if level is None and context.messages:
        has_entry = any(r.type == "thinking_level_change" for r in tree.path())
        level = _as_level(context.thinking_level) if has_entry else default
    if level is None and model is not None:
        level = _as_level(values.value(MODEL_THINKING_LEVELS).get(f"{model.provider}/{model.id}"))
    if level is None:
        level = default
    return resolve_level(model, level) if model is not None else "off"


def _record_initial_state(store: Session, context: Any, model: Model | None, thinking: ThinkingLevel) -> None:
    """Write what Pi writes when it opens the same file with the same command line, at the first append
    of the run (opening alone never writes).

    A session without messages (new, or holding only earlier state entries) records its model and
    thinking level. A session with messages records a thinking level only if it never did; a different
    ``--model`` or ``--thinking`` on resume is used for the run without an entry, as Pi does, so either
    tool reopening the file restores the same settings.
    """
    tree = store.tree
    if store.read_only:  # another window holds the file: it is only being looked at
        return
    if context.messages:
        if not any(r.type == "thinking_level_change" for r in tree.path()):
            tree.append_thinking_level_change(thinking)
        return
    if model is not None:
        tree.append_model_change(model.provider, model.id)
    tree.append_thinking_level_change(thinking)
