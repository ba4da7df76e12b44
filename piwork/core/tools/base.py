"""The tool contract: what a tool is, what it receives, what it returns, and how calls are checked.

A tool turns validated arguments into a :class:`ToolResult` (content for the model, ``details`` for the
UI). Failures are raised as :class:`ToolError`; the registry turns them into error results whose text
is the error message, keeping the error's ``details`` (piwork keeps tool metadata on failed calls).

Cancellation is plain asyncio task cancellation. A tool that is cancelled stops its work, cleans up
(bash kills its process group) and raises a :class:`ToolError` with ``aborted=True`` carrying the
model-facing abort text (``Operation aborted``, or bash's output followed by ``Command aborted``).
Run each call in its own task (as :meth:`ToolRegistry.run` callers do) and cancel that task to abort.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal

from piwork.core.errors import PiworkError
from piwork.core.jscompat import js_json_stringify
from piwork.core.tools.validation import Schema, check, prepare_arguments, type_name

Content = dict[str, Any]

FileAction = Literal["read", "write", "edit"]
FILE_ACTION_WORDS: dict[FileAction, str] = {"read": "read", "write": "written", "edit": "edited"}
"""How each file action reads after the fact ("files read / written / edited")."""


@dataclass(frozen=True, slots=True)
class ToolFacts:
    """What the rest of piwork may rely on about a tool without running it.

    The context governor, task contracts, branch activity, summaries and the chat read these instead
    of keeping their own lists of tool names; a tool that declares nothing is treated as one that may
    change anything and touches no file piwork can name.
    """

    read_only: bool = False
    """Changes nothing (writes no file, runs no command): a read-only task may use it."""
    file_action: FileAction | None = None
    """How a call touches the one file its ``path_argument`` names."""
    elidable: bool = False
    """Its results are raw reads the context governor may take out of the working set."""
    path_argument: str | None = None
    """The argument naming the file or folder a call works on."""
    pattern_argument: str | None = None
    """The argument holding what a call searches for."""
    command_argument: str | None = None
    """The argument holding the shell command a call runs."""
    keeps_output_tail: bool = False
    """Long output is cut from its start, keeping the last lines (a command's end says how it went)."""

    @property
    def reads_file(self) -> bool:
        return self.file_action == "read"

    @property
    def changes_files(self) -> bool:
        return self.file_action in ("write", "edit")


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What a tool hands back: content blocks for the model and free-form ``details`` for the UI."""

    content: list[Content]
    details: dict[str, Any] | None = None

    @classmethod
    def text(cls, text: str, details: dict[str, Any] | None = None) -> ToolResult:
        return cls([{"type": "text", "text": text}], details)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"content": self.content}
        if self.details is not None:
            out["details"] = self.details
        return out


UpdateCallback = Callable[[ToolResult], None]
"""Receives partial results while a tool runs (bash streams its output through it)."""


class ToolError(PiworkError):
    """A tool failed; ``str(err)`` is the model-facing text, ``details`` is kept for the UI."""

    def __init__(self, message: str, details: dict[str, Any] | None = None, *, aborted: bool = False) -> None:
        super().__init__(message)
        self.details = details
        self.aborted = aborted


@dataclass(frozen=True, slots=True)
class ToolContext:
    """Per-call environment.

    ``cwd``: the session's working directory (relative paths resolve against it).
    ``log_dir``: the session's full-output folder (``<agentDir>/logs/<session id>``); ``None`` means
    spilled output goes to a private folder under the system temp dir.
    ``session_env``: ``PI_SESSION_ID``, ``PI_SESSION_FILE``, ``PI_PROVIDER``, ``PI_MODEL``,
    ``PI_REASONING_LEVEL`` values for commands (absent keys are removed from the environment).
    ``model_supports_images``: when false, ``read`` notes that images will be omitted.
    ``secrets``: API keys piwork knows; they are masked as ``***`` in the full-output logs a tool writes,
    never in what it returns (see ``piwork.core.redaction``).
    ``context_index``: what ``read`` answers, given the project folder, for the project's context index
    (the context governance's sanitised summary, never the raw file); without it ``read`` says only
    that the summary is not available here.
    """

    cwd: str
    log_dir: Path | None = None
    session_env: Mapping[str, str] = field(default_factory=dict)
    model_supports_images: bool = True
    secrets: tuple[str, ...] = ()
    context_index: Callable[[str], str] | None = None


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """What a provider needs to advertise a tool."""

    name: str
    description: str
    parameters: Schema
    strict: bool = False
    """The tool asks for strict (constrained) sampling of its arguments where the model offers it."""


class Tool(abc.ABC):
    """A built-in tool. Subclasses set the class attributes and implement :meth:`execute`."""

    name: ClassVar[str]
    description: ClassVar[str]
    parameters: ClassVar[Schema]
    snippet: ClassVar[str]
    """One line for the system prompt's tool list."""
    guidelines: ClassVar[tuple[str, ...]] = ()
    """Usage guidelines added to the system prompt when the tool is active."""
    strict: ClassVar[bool] = False
    """Prefer strict sampling of the arguments (sent only to models whose compat supports it)."""
    facts: ClassVar[ToolFacts] = ToolFacts()
    """What other parts of piwork may rely on about the tool (see :class:`ToolFacts`)."""

    def prepare_arguments(self, arguments: Any) -> Any:
        """Repair known malformed argument shapes before validation (identity by default)."""
        return arguments

    @abc.abstractmethod
    async def execute(
        self, call_id: str, args: dict[str, Any], ctx: ToolContext, on_update: UpdateCallback | None = None
    ) -> ToolResult:
        """Run with validated ``args``; raise :class:`ToolError` for failures."""

    def spec(self) -> ToolSpec:
        return ToolSpec(self.name, self.description, self.parameters, self.strict)


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    """A finished call as the agent records it in a ``toolResult`` message."""

    content: list[Content]
    details: dict[str, Any] | None
    is_error: bool
    aborted: bool = False


def error_outcome(
    message: str, details: dict[str, Any] | None = None, *, aborted: bool = False
) -> ToolOutcome:
    return ToolOutcome(
        [{"type": "text", "text": message}], details if details is not None else {}, True, aborted
    )


def unknown_tool_message(name: str) -> str:
    return f"Tool {name} not found"


def length_stopped_message(name: str) -> str:
    """Error for tool calls of an assistant message that stopped on the output token limit."""
    return (
        f'Tool call "{name}" was not executed: the response hit the output token limit, so its arguments '
        "may be truncated. Re-issue the tool call with complete arguments."
    )


class ToolValidationError(ToolError):
    """Arguments do not match the tool's schema (message in Pi's format)."""


def validation_message(tool_name: str, problems: Iterable[tuple[str, str]], received: Any) -> str:
    lines = "\n".join(f"  - {path}: {message}" for path, message in problems) or "Unknown validation error"
    received_text = js_json_stringify(received, indent=2) if received is not None else "undefined"
    return f'Validation failed for tool "{tool_name}":\n{lines}\n\nReceived arguments:\n{received_text}'


def validate_arguments(tool: Tool, arguments: Any) -> dict[str, Any]:
    """Repair, convert and check ``arguments``; raise :class:`ToolValidationError` with Pi's text."""
    prepared = tool.prepare_arguments(copy_json(arguments))
    converted = prepare_arguments(tool.parameters, prepared)
    problems = check(tool.parameters, converted)
    if problems or not isinstance(converted, dict):
        problems = problems or [("root", f"expected object, got {type_name(converted)}")]
        raise ToolValidationError(validation_message(tool.name, problems, prepared))
    return converted


def copy_json(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: copy_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [copy_json(v) for v in value]
    return value


class ToolRegistry:
    """The tools of a session: listing, lookup, system-prompt material, validation and execution."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            self.add(tool)

    def add(self, tool: Tool) -> None:
        self._tools[tool.name] = tool

    def names(self) -> list[str]:
        return list(self._tools)

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def facts(self, name: str) -> ToolFacts:
        """The declared facts of the tool called ``name`` (nothing declared for an unknown name)."""
        tool = self._tools.get(name)
        return tool.facts if tool is not None else ToolFacts()

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

    def specs(self, names: Iterable[str] | None = None) -> list[ToolSpec]:
        """Schemas for the provider, in registry order (optionally only ``names``)."""
        wanted = set(names) if names is not None else None
        return [t.spec() for t in self._tools.values() if wanted is None or t.name in wanted]

    def snippets(self) -> dict[str, str]:
        return {t.name: t.snippet for t in self._tools.values()}

    def guidelines(self) -> dict[str, list[str]]:
        return {t.name: list(t.guidelines) for t in self._tools.values()}

    def validate(self, name: str, arguments: Any) -> dict[str, Any]:
        """Validated arguments, or :class:`ToolError` (unknown tool / validation text)."""
        tool = self._tools.get(name)
        if tool is None:
            raise ToolError(unknown_tool_message(name))
        return validate_arguments(tool, arguments)

    async def run(
        self,
        call_id: str,
        name: str,
        arguments: Any,
        ctx: ToolContext,
        on_update: UpdateCallback | None = None,
    ) -> ToolOutcome:
        """Validate and execute one call; every failure becomes an error outcome (never raises)."""
        return await self._run(call_id, name, arguments, ctx, on_update)

    async def _run(
        self, call_id: str, name: str, arguments: Any, ctx: ToolContext, on_update: UpdateCallback | None
    ) -> ToolOutcome:
        tool = self._tools.get(name)
        if tool is None:
            return error_outcome(unknown_tool_message(name))
        try:
            args = validate_arguments(tool, arguments)
            result = await tool.execute(call_id, args, ctx, on_update)
        except ToolError as err:
            return error_outcome(str(err), err.details, aborted=err.aborted)
        except Exception as err:  # a tool bug still becomes a visible error result
            return error_outcome(str(err) or type(err).__name__)
        return ToolOutcome(result.content, result.details, False)
