"""Building the built-in tool set used by the agent loop and the GUI."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from piwork.core.settings_schema import LOGS_MAX_TOTAL_MB, SHELL_COMMAND_PREFIX, SHELL_PATH
from piwork.core.settings_values import SettingValues
from piwork.core.tool_selection import DEFAULT_TOOL_NAMES
from piwork.core.tools.base import Tool, ToolFacts, ToolRegistry
from piwork.core.tools.bash import BashOptions, BashTool, CommandGate
from piwork.core.tools.edit import EditTool
from piwork.core.tools.find import FindTool
from piwork.core.tools.grep import GrepTool
from piwork.core.tools.logs import DEFAULT_LOGS_MAX_TOTAL_MB
from piwork.core.tools.ls import LsTool
from piwork.core.tools.mutation import PathLocks
from piwork.core.tools.read import ReadTool
from piwork.core.tools.write import WriteTool

BUILTIN_TOOLS: tuple[type[Tool], ...] = (ReadTool, BashTool, EditTool, WriteTool, GrepTool, FindTool, LsTool)
ALL_TOOL_NAMES = tuple(tool.name for tool in BUILTIN_TOOLS)
DEFAULT_ACTIVE_TOOLS = DEFAULT_TOOL_NAMES
_BUILTIN_FACTS = {tool.name: tool.facts for tool in BUILTIN_TOOLS}
_NO_FACTS = ToolFacts()


def tool_facts(name: str) -> ToolFacts:
    """The declared facts of the built-in tool called ``name``; nothing declared for any other name.

    For recorded calls (a transcript names its tools by string): the tools of a running session are
    asked through :meth:`ToolRegistry.facts`.
    """
    return _BUILTIN_FACTS.get(name, _NO_FACTS)


def builtin_tool_names(where: Callable[[ToolFacts], bool]) -> tuple[str, ...]:
    """The built-in tools whose facts satisfy ``where``, in the built-in order."""
    return tuple(name for name, facts in _BUILTIN_FACTS.items() if where(facts))


@dataclass(frozen=True, slots=True)
class ToolOptions:
    """Settings the built-in tools read (``shellPath``, ``shellCommandPrefix``, ``logs.maxTotalMB``)."""

    agent_dir: Path | None = None
    shell_path: str | None = None
    shell_command_prefix: str | None = None
    logs_max_total_mb: float = DEFAULT_LOGS_MAX_TOTAL_MB
    use_ripgrep: bool = True
    command_gate: CommandGate | None = None  # the verifier gate around bash commands

    @classmethod
    def from_settings(cls, agent_dir: Path | None, settings: Mapping[str, Any]) -> ToolOptions:
        """Options from merged settings; values of the wrong type are ignored (defaults apply)."""
        values = SettingValues.of(settings)
        return cls(
            agent_dir=agent_dir,
            shell_path=values.value(SHELL_PATH),
            shell_command_prefix=values.value(SHELL_COMMAND_PREFIX),
            logs_max_total_mb=values.value(LOGS_MAX_TOTAL_MB),
        )


def create_all_tools(options: ToolOptions | None = None, locks: PathLocks | None = None) -> list[Tool]:
    """One instance of every built-in tool; edit and write share one per-file lock table."""
    opts = options or ToolOptions()
    shared_locks = locks or PathLocks()
    bin_dir = str(opts.agent_dir / "bin") if opts.agent_dir is not None else None
    bash = BashOptions(
        shell_path=opts.shell_path,
        command_prefix=opts.shell_command_prefix,
        bin_dir=bin_dir,
        logs_max_total_mb=opts.logs_max_total_mb,
        gate=opts.command_gate,
    )
    return [
        ReadTool(),
        BashTool(bash),
        EditTool(shared_locks),
        WriteTool(shared_locks),
        GrepTool(bin_dir, opts.use_ripgrep),
        FindTool(),
        LsTool(),
    ]


def create_default_tools(
    names: Iterable[str] | None = None,
    options: ToolOptions | None = None,
    locks: PathLocks | None = None,
) -> ToolRegistry:
    """A registry of the built-in tools called ``names`` (default: read, bash, edit, write).

    The working directory is not fixed here: each call's :class:`ToolContext` carries it.
    """
    wanted = list(names) if names is not None else list(DEFAULT_ACTIVE_TOOLS)
    unknown = [n for n in wanted if n not in ALL_TOOL_NAMES]
    if unknown:
        raise ValueError(f"Unknown built-in tool(s): {', '.join(unknown)}")
    by_name = {tool.name: tool for tool in create_all_tools(options, locks)}
    return ToolRegistry(by_name[name] for name in wanted)
