"""Which tools a session starts with: the ``defaultTools`` setting, then the run's own tool options.

``defaultTools`` (settings.json, global then project) is either a list of tool names, which replaces
the built-in default ``read, bash, edit, write``, or a list of only ``+name`` / ``-name`` entries, which
changes the inherited selection: a project's ``["-bash"]`` removes bash from whatever the global file
chose. The layers merge in :func:`merge_default_tools`; :func:`resolve_default_tools` turns the merged
list into names.

:func:`session_tool_names` is what a session's set-up calls (the CLI's ``--tools``, ``--no-tools`` and
``--exclude-tools`` and the window's Tools tab go through it):

- ``tools``: an allowlist of names and ``*`` patterns (it replaces the default selection and every
  available tool it matches is active), or a list of only ``+name``/``-name`` entries applied to the
  default selection; mixing the two forms, or a pattern in a modifier, raises :class:`ToolListError`;
- ``no_tools``: start from no tools instead of the default selection (modifiers may still add some);
- ``exclude``: names or ``*`` patterns never active.

A session whose branch declares its tools (system messages, as Pi 1.6 writes them) reopens with those
tools unless the run names its own list (:func:`restored_tool_names`).

Names no available tool has (``tool_search``, ``codemode``, an MCP tool from a Pi setting) are left out
without an error: piwork has no such tools yet, and a setting naming them must not stop a session.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from piwork.core.errors import PiworkError

#: The tools a session starts with when neither a setting nor an option changes them.
DEFAULT_TOOL_NAMES = ("read", "bash", "edit", "write")


class ToolListError(PiworkError):
    """A tool list mixes plain names with ``+name``/``-name`` entries, or puts a pattern in one."""


def is_tool_modifier(entry: Any) -> bool:
    return isinstance(entry, str) and (entry.startswith("+") or entry.startswith("-"))


def tool_list_error(entries: Sequence[str]) -> str | None:
    """What is wrong with a ``--tools`` style list, or None when it is valid."""
    modifiers = [entry for entry in entries if is_tool_modifier(entry)]
    if not modifiers:
        return None
    if len(modifiers) < len(entries):
        return "tool names cannot be mixed with +name or -name entries"
    pattern = next((entry for entry in modifiers if "*" in entry), None)
    if pattern is not None:
        return f"+name and -name entries take exact tool names, not patterns: {pattern}"
    return None


def apply_tool_modifiers(base: Sequence[str], entries: Sequence[str]) -> list[str]:
    """``base`` with each ``+name`` added (at the end, once) and each ``-name`` removed, in list order."""
    tools = list(base)
    for entry in entries:
        if not is_tool_modifier(entry):
            continue
        name = entry[1:]
        if entry.startswith("+"):
            if name and name not in tools:
                tools.append(name)
        elif name in tools:
            tools.remove(name)
    return tools


def merge_default_tools(base: Any, override: Any) -> Any:
    """``defaultTools`` of a layer that sets it over the one below: a list of only modifiers is appended
    to the inherited list; anything else (plain names, ``null``, a malformed value) replaces it."""
    if not isinstance(base, list) or not isinstance(override, list):
        return override
    if not all(is_tool_modifier(entry) for entry in override):
        return override
    return [*base, *override]


def resolve_default_tools(entries: Sequence[Any]) -> list[str]:
    """A merged ``defaultTools`` list as tool names: its plain names (or the built-in default when it
    has only modifiers), then its modifiers in order. Entries that are not text are ignored."""
    texts = [entry for entry in entries if isinstance(entry, str)]
    plain = [entry for entry in texts if not is_tool_modifier(entry)]
    base = plain if plain or not texts else list(DEFAULT_TOOL_NAMES)
    return apply_tool_modifiers(base, texts)


def tool_name_matcher(entries: Sequence[str]) -> Callable[[str], bool]:
    """Whether a tool name is one of ``entries``: exact names, or patterns where ``*`` matches anything."""
    names = {entry for entry in entries if "*" not in entry}
    patterns = [
        re.compile("^" + ".*".join(re.escape(part) for part in entry.split("*")) + "$", re.DOTALL)
        for entry in entries
        if "*" in entry
    ]
    return lambda name: name in names or any(p.match(name) for p in patterns)


def session_tool_names(
    available: Sequence[str],
    default_tools: Sequence[str] | None = None,
    *,
    tools: Sequence[str] | None = None,
    no_tools: bool = False,
    exclude: Sequence[str] | None = None,
) -> list[str]:
    """The active tools a session starts with, in selection order, among the ``available`` ones.

    ``default_tools`` is the resolved setting (``Settings.default_tools()``; None: not set, the built-in
    default applies). See the module docstring for ``tools``, ``no_tools`` and ``exclude``."""
    if tools is not None:
        error = tool_list_error(tools)
        if error is not None:
            raise ToolListError(f"Invalid tool list: {error}")
    base = [] if no_tools else list(DEFAULT_TOOL_NAMES if default_tools is None else default_tools)
    modifiers = tools if tools is not None and any(is_tool_modifier(t) for t in tools) else None
    allowlist: Sequence[str] | None
    if modifiers is not None:
        selected = apply_tool_modifiers(base, modifiers)
        allowlist = None
    else:
        selected = list(tools) if tools is not None else base
        allowlist = tools
    excluded = tool_name_matcher(exclude) if exclude else None
    allowed = tool_name_matcher(allowlist) if allowlist is not None else None
    pool = set(available)
    names: list[str] = []
    for name in selected:
        if name in pool and name not in names:
            names.append(name)
    if allowed is not None:  # a pattern or a name in an allowlist activates every tool it matches
        names += [name for name in available if allowed(name) and name not in names]
    return [name for name in names if excluded is None or not excluded(name)]


def restored_tool_names(
    recorded: Sequence[str] | None,
    available: Sequence[str],
    *,
    tools: Sequence[str] | None = None,
    no_tools: bool = False,
    exclude: Sequence[str] | None = None,
) -> list[str] | None:
    """The tools a reopened session runs with when its branch declares a tool set (``recorded``, None:
    it declares none): that set with a ``tools`` list of only modifiers applied, among the available
    tools and without the excluded ones. None when the run chooses its own tools instead: a list of
    names, ``no_tools``, or nothing recorded."""
    if recorded is None or no_tools:
        return None
    if tools is not None and not (tools and all(is_tool_modifier(t) for t in tools)):
        return None
    excluded = tool_name_matcher(exclude) if exclude else None
    pool = set(available)
    names: list[str] = []
    for name in apply_tool_modifiers(recorded, tools or ()):
        if name in pool and name not in names and not (excluded is not None and excluded(name)):
            names.append(name)
    return names
