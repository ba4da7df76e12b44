"""The effective settings as one typed, read-only object: every declared key checked against its declaration.

``SettingValues`` is also a plain mapping of the merged JSON (global then project), so it can be handed
to code that reads keys the registry does not declare (resource arrays, packages). ``value(SETTING)``
returns the checked value; ``problems`` lists each value that was refused, with the file it came from,
the key, the value and what is used instead. Nothing here writes a file.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from piwork.core.settings_schema import REGISTRY, Checked, Setting, lookup, shown

T = TypeVar("T")
# Which file a dotted key's effective value comes from (None: not known, e.g. a plain mapping).
OriginOf = Callable[[tuple[str, ...]], str | None]


@dataclass(frozen=True)
class SettingProblem:
    """A value in a settings file that was not used."""

    path: str | None  # the settings file, when known
    key: str
    value: Any
    used: Any
    reason: str
    instead: str | None = None  # what is used, when not one value ("the defaults")

    @property
    def message(self) -> str:
        """``<file>: <key> <reason> (got <value>); using <default>`` (the file is left as it is)."""
        where = f"{self.path}: " if self.path else "settings: "
        if self.instead is not None:
            outcome = f"using {self.instead}"
        else:
            outcome = "ignored" if self.used is None else f"using {shown(self.used)}"
        return f"{where}{self.key} {self.reason} (got {shown(self.value)}); {outcome}"


class SettingValues(Mapping[str, Any]):
    """Checked values of the declared settings over one merged settings document."""

    def __init__(self, effective: Mapping[str, Any], origin: OriginOf | None = None) -> None:
        self._data = effective
        self._origin = origin
        self._problems: list[SettingProblem] | None = None

    @classmethod
    def of(cls, settings: Mapping[str, Any] | None) -> SettingValues:
        """``settings`` itself when it already is one, else a view over the plain mapping."""
        if isinstance(settings, SettingValues):
            return settings
        return cls(settings or {})

    # ---- the raw document (Mapping)

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    # ---- typed values

    def value(self, setting: Setting[T]) -> T:
        checked: Checked[T] = self._check(setting)
        return checked.value

    def _check(self, setting: Setting[Any]) -> Checked[Any]:
        # not cached: the merged document may share objects with a settings file's data that a write
        # changes, and a reader holding this object then sees the new value, as it always did
        raw, _ = lookup(self._data, setting.path)
        done = setting.check(raw)
        if done.refused is None and setting.at_least is not None:
            other = self.value(REGISTRY[setting.at_least])
            if done.value < other:
                low = REGISTRY[setting.at_least].key.rsplit(".", 1)[-1]
                done = Checked(max(setting.default, other), f"must be at least {low} = {shown(other)}")
        return done

    @property
    def problems(self) -> list[SettingProblem]:
        """Every refused value of a declared key (and every section that should be an object)."""
        if self._problems is None:
            self._problems = self._collect()
        return list(self._problems)

    def problems_under(self, prefix: str) -> list[SettingProblem]:
        return [p for p in self.problems if p.key == prefix or p.key.startswith(prefix + ".")]

    def _collect(self) -> list[SettingProblem]:
        problems: list[SettingProblem] = []
        sections: set[str] = set()
        for setting in REGISTRY.values():
            raw, broken_section = lookup(self._data, setting.path)
            if broken_section is not None:
                if broken_section not in sections:
                    sections.add(broken_section)
                    section_raw, _ = lookup(self._data, tuple(broken_section.split(".")))
                    where = self._where(tuple(broken_section.split(".")))
                    problems.append(
                        SettingProblem(
                            where, broken_section, section_raw, None, "must be an object", "the defaults"
                        )
                    )
                continue
            checked = self._check(setting)
            if checked.refused is not None:
                problems.append(
                    SettingProblem(
                        self._where(setting.path), setting.key, raw, checked.value, checked.refused
                    )
                )
        return problems

    def _where(self, path: tuple[str, ...]) -> str | None:
        return self._origin(path) if self._origin is not None else None
