"""Settings shared with Pi: ``<agentDir>/settings.json`` (global) and ``<cwd>/.pi/settings.json`` (project).

The project file is read only when the project is trusted. The effective view is the global object
deep-merged with the project one (objects merge, anything else from the project replaces), except
for global-only keys. ``values`` is that view typed by the declarations of ``settings_schema`` (one
object for the engine, the headless commands and the settings dialog); a value it refuses is reported
with its file and never "fixed" in place. A file that does not parse is reported, treated as ``{}``,
and never written until it parses again. Writes change the given keys under a lock directory and
replace the file atomically, keeping every key piwork does not know (every Pi 1.6 key among them) and
applying Pi's own migrations of older key layouts to the file, as Pi does when it writes.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from piwork.core import safe_read
from piwork.core.errors import PiworkError
from piwork.core.fs.atomic import write_atomically
from piwork.core.fs.lock import locked
from piwork.core.fs.review_gate import check_reviewed
from piwork.core.jscompat import js_json_stringify, json_loads_js
from piwork.core.paths import expand_home, named_path
from piwork.core.settings_schema import (
    BRANCH_SUMMARY_RESERVE_TOKENS,
    BRANCH_SUMMARY_SKIP_PROMPT,
    CACHE_RETENTION,
    COMPACTION_ENABLED,
    COMPACTION_KEEP_RECENT_TOKENS,
    COMPACTION_RESERVE_TOKENS,
    CONTEXT_FILES_ENABLED,
    CONTEXT_FILES_ENFORCE_HARD_CAP,
    DEFAULT_MODEL,
    DEFAULT_PROJECT_TRUST,
    DEFAULT_PROVIDER,
    DEFAULT_THINKING_LEVEL,
    GLOBAL_ONLY_KEYS,
    GLOBAL_ONLY_SECTIONS,
    PROVIDER_MAX_RETRY_DELAY_MS,
    RETRY_BASE_DELAY_MS,
    RETRY_ENABLED,
    RETRY_MAX_AGENT_DELAY_MS,
    RETRY_MAX_RETRIES,
    THINKING_BUDGETS,
    lookup,
)
from piwork.core.settings_values import SettingValues
from piwork.core.tool_selection import merge_default_tools, resolve_default_tools
from piwork.core.vocabulary import CacheRetention

Scope = Literal["global", "project"]
CACHE_RETENTION_ENV = "PI_CACHE_RETENTION"
GLOBAL_ONLY_PIWORK_KEYS = tuple(s.removeprefix("piwork.") for s in GLOBAL_ONLY_SECTIONS)


class SettingsWriteError(PiworkError):
    """A setting could not be saved (file broken, project untrusted, or locked)."""


@dataclass(frozen=True)
class SettingsProblem:
    scope: Scope
    path: str | None
    message: str

    def to_json(self) -> dict[str, Any]:
        return {"scope": self.scope, "path": self.path, "error": self.message}


@dataclass(frozen=True)
class DefaultSource:
    """The level new sessions start at and the file it comes from (``scope`` None: no file sets one, the
    built-in default applies)."""

    level: str
    scope: Scope | None
    path: str | None

    def describe(self) -> str:
        """E.g. ``high, from this project's .pi/settings.json`` or ``medium, the built-in default``."""
        if self.scope == "project":
            return f"{self.level}, from this project's .pi/settings.json"
        if self.scope == "global":
            where = f" ({named_path(self.path)})" if self.path else ""
            return f"{self.level}, from the global settings{where}"
        return f"{self.level}, the built-in default (no settings file sets one)"


class SettingsStorage(Protocol):
    def location(self, scope: Scope) -> str | None: ...

    def read(self, scope: Scope) -> str | None: ...

    def update(self, scope: Scope, change: Callable[[str | None], str]) -> None: ...


class FileSettingsStorage:
    """The two settings files on disk; ``update`` is read-modify-write under ``<file>.lock``."""

    def __init__(self, cwd: str, agent_dir: str) -> None:
        self.paths: dict[Scope, Path] = {
            "global": Path(os.path.abspath(expand_home(agent_dir))) / "settings.json",
            "project": Path(os.path.abspath(expand_home(cwd))) / ".pi" / "settings.json",
        }

    def location(self, scope: Scope) -> str | None:
        return str(self.paths[scope])

    def read(self, scope: Scope) -> str | None:
        path = self.paths[scope]
        try:
            data = safe_read.read_bytes(path, safe_read.SETTINGS)
            if scope == "project":
                check_reviewed(path, data)
            return data.decode("utf-8", errors="replace")
        except FileNotFoundError:
            return None

    def update(self, scope: Scope, change: Callable[[str | None], str]) -> None:
        path = self.paths[scope]
        path.parent.mkdir(parents=True, exist_ok=True)
        with locked(path):
            text = change(self.read(scope))
            write_atomically(path, text, durable=True, private=True)


class MemorySettingsStorage:
    """Settings held in memory (tests, previews)."""

    def __init__(self, global_text: str | None = None, project_text: str | None = None) -> None:
        self.texts: dict[Scope, str | None] = {"global": global_text, "project": project_text}

    def location(self, scope: Scope) -> str | None:
        return None

    def read(self, scope: Scope) -> str | None:
        return self.texts[scope]

    def update(self, scope: Scope, change: Callable[[str | None], str]) -> None:
        self.texts[scope] = change(self.texts[scope])


def migrate_settings(data: dict[str, Any]) -> dict[str, Any]:
    """Pi's on-load migrations of older settings layouts."""
    if "queueMode" in data and "steeringMode" not in data:
        data["steeringMode"] = data.pop("queueMode")
    if "transport" not in data and isinstance(data.get("websockets"), bool):
        data["transport"] = "websocket" if data.pop("websockets") else "sse"
    skills = data.get("skills")
    if isinstance(skills, dict):
        if skills.get("enableSkillCommands") is not None and data.get("enableSkillCommands") is None:
            data["enableSkillCommands"] = skills["enableSkillCommands"]
        dirs = skills.get("customDirectories")
        if isinstance(dirs, list) and dirs:
            data["skills"] = dirs
        else:
            del data["skills"]
    retry = data.get("retry")
    if isinstance(retry, dict):
        provider = retry.get("provider") if isinstance(retry.get("provider"), dict) else None
        max_delay = retry.get("maxDelayMs")
        is_number = isinstance(max_delay, (int, float)) and not isinstance(max_delay, bool)
        if is_number and (provider is None or provider.get("maxRetryDelayMs") is None):
            retry["provider"] = {**(provider or {}), "maxRetryDelayMs": max_delay}
        retry.pop("maxDelayMs", None)
    return data


def thinking_budgets(settings: Mapping[str, Any]) -> dict[str, int]:
    """The ``thinkingBudgets`` levels that settings set to a whole number of tokens (others are reported
    with the settings' problems and left to the built-in budget)."""
    values = SettingValues.of(settings)
    out: dict[str, int] = {}
    for setting in THINKING_BUDGETS:
        budget = values.value(setting)
        if budget is not None:
            out[setting.path[-1]] = budget
    return out


def cache_retention(settings: Mapping[str, Any], env: Mapping[str, str]) -> CacheRetention:
    """The prompt-cache retention requests ask for: ``piwork.cacheRetention`` when a file sets it, else
    ``long`` when the environment has ``PI_CACHE_RETENTION=long`` (as Pi reads it), else ``short``."""
    raw, _ = lookup(settings, CACHE_RETENTION.path)
    checked = CACHE_RETENTION.check(raw)
    if raw is not None and checked.refused is None:
        return checked.value
    return "long" if env.get(CACHE_RETENTION_ENV) == "long" else "short"


def deep_merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    result = dict(base)
    for key, value in override.items():
        current = base.get(key)
        if isinstance(current, dict) and isinstance(value, dict):
            result[key] = deep_merge(current, value)
        else:
            result[key] = value
    return result


def _without_global_only(project: dict[str, Any]) -> dict[str, Any]:
    cleaned = {k: v for k, v in project.items() if k not in GLOBAL_ONLY_KEYS}
    piwork = cleaned.get("piwork")
    if isinstance(piwork, dict):
        cleaned["piwork"] = {k: v for k, v in piwork.items() if k not in GLOBAL_ONLY_PIWORK_KEYS}
    return cleaned


@dataclass
class Settings:
    """Global + project settings with typed getters. Create with :meth:`load` or :meth:`for_project`."""

    storage: SettingsStorage
    project_trusted: bool = False
    global_data: dict[str, Any] = field(default_factory=dict)
    project_data: dict[str, Any] = field(default_factory=dict)
    problems: list[SettingsProblem] = field(default_factory=list)
    _broken: set[Scope] = field(default_factory=set)
    _type_warnings: dict[str, str] = field(default_factory=dict)
    _values: SettingValues | None = None

    @classmethod
    def for_project(cls, cwd: str, agent_dir: str, project_trusted: bool) -> Settings:
        return cls.load(FileSettingsStorage(cwd, agent_dir), project_trusted)

    @classmethod
    def load(cls, storage: SettingsStorage, project_trusted: bool) -> Settings:
        settings = cls(storage, project_trusted)
        settings.reload()
        return settings

    def reload(self) -> None:
        self.problems = []
        self._broken = set()
        self._type_warnings = {}
        self._values = None
        self.global_data = self._load("global")
        self.project_data = self._load("project") if self.project_trusted else {}

    def set_project_trusted(self, trusted: bool) -> None:
        self.project_trusted = trusted
        self.reload()

    def _load(self, scope: Scope) -> dict[str, Any]:
        location = self.storage.location(scope)
        try:
            text = self.storage.read(scope)
        except OSError as exc:
            self._problem(scope, location, f"cannot read the settings file: {exc.strerror or exc}")
            return {}
        if not text:
            return {}
        if text.startswith("\ufeff"):
            text = text[1:]
        try:
            data = json_loads_js(text)
        except ValueError as exc:
            self._problem(scope, location, f"the settings file is not valid JSON ({exc}); using defaults")
            return {}
        if not isinstance(data, dict):
            self._problem(scope, location, "the settings file must hold a JSON object; using defaults")
            return {}
        return migrate_settings(data)

    def _problem(self, scope: Scope, location: str | None, message: str) -> None:
        self._broken.add(scope)
        self.problems.append(SettingsProblem(scope, location, message))

    # ----- views

    @property
    def effective(self) -> dict[str, Any]:
        project = _without_global_only(self.project_data)
        merged = deep_merge(self.global_data, project)
        if "defaultTools" in project:
            merged["defaultTools"] = merge_default_tools(
                self.global_data.get("defaultTools"), project["defaultTools"]
            )
        return merged

    @property
    def values(self) -> SettingValues:
        """The effective settings, typed and checked against their declarations (one object per load)."""
        if self._values is None:
            self._values = SettingValues(self.effective, self.file_of)
        return self._values

    def file_of(self, path: tuple[str, ...]) -> str | None:
        """The file the effective value at ``path`` comes from: the project's when it sets it."""
        node: Any = _without_global_only(self.project_data)
        for part in path:
            if not isinstance(node, dict) or part not in node:
                return self.storage.location("global")
            node = node[part]
            if not isinstance(node, dict):
                break
        return self.storage.location("project")

    def origin_of(self, key: str) -> Scope | None:
        """Which file the effective top-level value of ``key`` comes from (project wins)."""
        if key in self.project_data and key not in GLOBAL_ONLY_KEYS:
            return "project"
        return "global" if key in self.global_data else None

    def scope_list(self, scope: Scope, key: str) -> list[str]:
        """A resource array (``skills``, ``prompts``...) of one scope; non-strings are reported and dropped."""
        data = self.global_data if scope == "global" else self.project_data
        value = data.get(key)
        if value is None:
            return []
        if not isinstance(value, list):
            self._warn_type(f"{scope}:{key}", f"{key} in {scope} settings must be a list of paths; ignored")
            return []
        return [item for item in value if isinstance(item, str)]

    def packages(self, scope: Scope) -> list[Any]:
        """A scope's ``packages`` entries (source strings or filter objects with a ``source``)."""
        data = self.global_data if scope == "global" else self.project_data
        value = data.get("packages")
        if value is None:
            return []
        if not isinstance(value, list):
            self._warn_type(f"{scope}:packages", f"packages in {scope} settings must be a list; ignored")
            return []
        return [item for item in value if isinstance(item, (str, dict))]

    @property
    def type_warnings(self) -> list[str]:
        """Resource arrays of the wrong shape, then every declared key whose value was not used."""
        tools = self.effective.get("defaultTools", [])
        if not isinstance(tools, list):
            where = self.file_of(("defaultTools",)) or "settings"
            self._warn_type(
                "defaultTools",
                f"{where}: defaultTools must be a list of tool names (got {js_json_stringify(tools)}); "
                "no tools are active",
            )
        return [*self._type_warnings.values(), *(p.message for p in self.values.problems)]

    def _warn_type(self, key: str, message: str) -> None:
        self._type_warnings.setdefault(key, message)

    def get(self, dotted: str, default: Any = None) -> Any:
        node: Any = self.effective
        for part in dotted.split("."):
            if not isinstance(node, dict) or part not in node:
                return default
            node = node[part]
        return node

    # ----- typed getters (backed by the declarations in settings_schema)

    def compaction_enabled(self) -> bool:
        return self.values.value(COMPACTION_ENABLED)

    def compaction_reserve_tokens(self) -> int:
        return self.values.value(COMPACTION_RESERVE_TOKENS)

    def compaction_keep_recent_tokens(self) -> int:
        return self.values.value(COMPACTION_KEEP_RECENT_TOKENS)

    def compaction_settings(self) -> dict[str, Any]:
        return {
            "enabled": self.compaction_enabled(),
            "reserveTokens": self.compaction_reserve_tokens(),
            "keepRecentTokens": self.compaction_keep_recent_tokens(),
        }

    def branch_summary_settings(self) -> dict[str, Any]:
        return {
            "reserveTokens": self.values.value(BRANCH_SUMMARY_RESERVE_TOKENS),
            "skipPrompt": self.values.value(BRANCH_SUMMARY_SKIP_PROMPT),
        }

    def retry_settings(self) -> dict[str, Any]:
        return {
            "enabled": self.values.value(RETRY_ENABLED),
            "maxRetries": self.values.value(RETRY_MAX_RETRIES),
            "baseDelayMs": self.values.value(RETRY_BASE_DELAY_MS),
            "maxAgentDelayMs": self.values.value(RETRY_MAX_AGENT_DELAY_MS),
            "maxRetryDelayMs": self.values.value(PROVIDER_MAX_RETRY_DELAY_MS),
        }

    def thinking_budgets(self) -> dict[str, int]:
        """``thinkingBudgets``: the levels the files set (minimal, low, medium, high) and their tokens."""
        return thinking_budgets(self.values)

    def cache_retention(self, env: Mapping[str, str] | None = None) -> CacheRetention:
        """How long providers should keep the prompt cache (see :func:`cache_retention`)."""
        return cache_retention(self.values, os.environ if env is None else env)

    def default_project_trust(self) -> str:
        return self.values.value(DEFAULT_PROJECT_TRUST)

    def default_provider(self) -> str | None:
        return self.values.value(DEFAULT_PROVIDER)

    def default_model(self) -> str | None:
        return self.values.value(DEFAULT_MODEL)

    def default_thinking_level(self) -> str | None:
        """The level the files set, or ``None`` when none is set (or it is not a level)."""
        raw, _ = lookup(self.effective, DEFAULT_THINKING_LEVEL.path)
        checked = DEFAULT_THINKING_LEVEL.check(raw)
        return checked.value if raw is not None and checked.refused is None else None

    def default_thinking_source(self) -> DefaultSource:
        """The thinking level new sessions start at (as the runtime picks it from the files: the project's
        wins when the project is trusted) and which file sets it."""
        level = self.default_thinking_level()
        if level is None:
            return DefaultSource(DEFAULT_THINKING_LEVEL.default, None, None)
        scope = self.origin_of(DEFAULT_THINKING_LEVEL.path[0]) or "global"
        return DefaultSource(level, scope, self.storage.location(scope))

    def thinking_level_in(self, scope: Scope) -> str | None:
        """The level one file sets (``None``: not set, or not a level)."""
        raw = (self.global_data if scope == "global" else self.project_data).get(
            DEFAULT_THINKING_LEVEL.path[0]
        )
        checked = DEFAULT_THINKING_LEVEL.check(raw)
        return checked.value if raw is not None and checked.refused is None else None

    def default_tools(self) -> list[str] | None:
        """The ``defaultTools`` selection of the files, layered global then project (a project list of only
        ``+name``/``-name`` entries changes the global one), or None when no file sets it.

        A value that is not a list selects no tools, as in Pi (and is reported in ``type_warnings``).
        Pass the result to :func:`piwork.core.tool_selection.session_tool_names`."""
        effective = self.effective
        if "defaultTools" not in effective:
            return None
        raw = effective["defaultTools"]
        return resolve_default_tools(raw) if isinstance(raw, list) else []

    def context_files_enabled(self) -> bool:
        return self.values.value(CONTEXT_FILES_ENABLED)

    def context_files_enforce_hard_cap(self) -> bool:
        return self.values.value(CONTEXT_FILES_ENFORCE_HARD_CAP)

    # ----- writing

    def set_value(self, dotted: str, value: Any, scope: Scope = "global") -> None:
        """Change one key (``a.b.c``) in one file, keeping everything else in it; ``None`` deletes."""
        self.set_values({dotted: value}, scope)

    def set_values(self, changes: Mapping[str, Any], scope: Scope = "global") -> None:
        """Change several keys of one file in one locked, atomic replace; every other key is kept."""
        if scope == "project" and not self.project_trusted:
            raise SettingsWriteError("Project settings cannot be changed while the project is not trusted.")
        if scope in self._broken:
            where = self.storage.location(scope) or scope
            raise SettingsWriteError(
                f"{where} could not be read, so it is not changed; fix or remove it first."
            )
        if not changes:
            return

        def change(current: str | None) -> str:
            data: Any = {}
            if current:
                text = current[1:] if current.startswith("\ufeff") else current
                try:
                    data = json_loads_js(text)
                except ValueError as exc:
                    raise SettingsWriteError(
                        "The settings file changed on disk and no longer parses."
                    ) from exc
                if not isinstance(data, dict):
                    raise SettingsWriteError("The settings file no longer holds a JSON object.")
                migrate_settings(data)  # as Pi does when it writes: older key layouts become current
            for dotted, value in changes.items():
                _assign(data, dotted.split("."), value)
            return js_json_stringify(data, indent=2)

        self.storage.update(scope, change)
        target = self.global_data if scope == "global" else self.project_data
        for dotted, value in changes.items():
            _assign(target, dotted.split("."), copy.deepcopy(value))
        self._values = None


def _assign(data: dict[str, Any], parts: list[str], value: Any) -> None:
    node = data
    for part in parts[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            if value is None:
                return
            child = {}
            node[part] = child
        node = child
    if value is None:
        node.pop(parts[-1], None)
    else:
        node[parts[-1]] = value
