"""Project trust: what needs it, the choices offered, and how a decision is reached.

Resolution order (first rule with an answer wins): one-run override, nothing to gate (the saved
decision if there is one, else trusted), plugin decision, saved decision (nearest ancestor in
trust.json), the global ``defaultProjectTrust`` policy, no UI means untrusted, and finally asking the
user through a callback.
"""

from __future__ import annotations

import asyncio
import inspect
import os
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from piwork.core.paths import canonical_path, expand_home
from piwork.core.resources.trust_resource import TrustResource
from piwork.core.resources.trust_store import (
    TrustStore,
    TrustStoreError,
    TrustUpdate,
    strict_canonical,
)
from piwork.core.settings_schema import DEFAULT_PROJECT_TRUST

if TYPE_CHECKING:
    from piwork.core.resources.trust_reading import TrustReading
    from piwork.core.resources.trust_snapshot import Snapshot

PI_TRUST_ENTRIES = (
    "settings.json",
    "mcp.json",  # Pi's MCP servers; piwork runs none yet, but the file still needs trust
    "extensions",
    "skills",
    "prompts",
    "themes",
    "SYSTEM.md",
    "APPEND_SYSTEM.md",
)
PIWORK_TRUST_ENTRIES = ("piwork-profile.json", "project-context.md", "context-index.json", "memory")

TrustSource = Literal[
    "override",
    "no-project-resources",
    "plugin",
    "saved",
    "default-policy",
    "no-ui",
    "prompt",
    "session-only",
    "dismissed",
    "store-error",
    "unresolvable-path",
    "new-project-resources",
]
OptionKind = Literal["trust", "trust-parent", "trust-session", "distrust", "distrust-session"]


@dataclass(frozen=True)
class TrustOption:
    label: str
    trusted: bool
    updates: tuple[TrustUpdate, ...]
    saved_path: str | None
    kind: OptionKind

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "label": self.label,
            "trusted": self.trusted,
            "updates": [u.to_json() for u in self.updates],
        }
        if self.saved_path is not None:
            out["savedPath"] = self.saved_path
        return out


@dataclass(frozen=True)
class TrustRequest:
    """What the user is asked about: the folder, what it would load, and the choices.

    ``reading`` is the one read of the gated files taken before asking (the resolver takes it): what
    to show, and what a decision covers (its fingerprint and snapshot are recorded, never a later read).
    """

    folder: str
    resources: tuple[TrustResource, ...]
    options: tuple[TrustOption, ...]
    reading: TrustReading | None = None


@dataclass(frozen=True)
class PluginTrustAnswer:
    trusted: bool
    remember: bool = False


TrustAsker = Callable[[TrustRequest], "TrustOption | Awaitable[TrustOption | None] | None"]
TrustPlugin = Callable[[str], "PluginTrustAnswer | Awaitable[PluginTrustAnswer | None] | None"]


@dataclass(frozen=True)
class TrustState:
    """The decision for one project folder and how it was reached."""

    cwd: str
    trusted: bool
    source: TrustSource
    saved_path: str | None = None
    resources: tuple[TrustResource, ...] = ()
    warnings: tuple[str, ...] = field(default=())
    # The snapshot of the files this decision was made on, when it was made on a reading now: only
    # gated files matching it load (see ``piwork.core.fs.review_gate``).
    reviewed: Snapshot | None = field(default=None, compare=False)

    @property
    def label(self) -> str:
        if self.source == "no-project-resources":
            return "no-project-resources"
        return "trusted" if self.trusted else "untrusted"

    def describe(self) -> str:
        """One sentence saying how the decision was made, for the CLI and the resource panel."""
        texts = {
            "override": "chosen for this run only",
            "no-project-resources": "the folder has no project resources that need trust",
            "plugin": "decided by a plugin",
            "saved": f"saved decision for {self.saved_path}",
            "default-policy": "the defaultProjectTrust setting",
            "no-ui": "nobody could be asked (no interactive prompt), so project resources stay off",
            "prompt": "chosen in the trust prompt",
            "session-only": "chosen in the trust prompt for this session only",
            "dismissed": "the trust prompt was dismissed",
            "store-error": "the trust store could not be read",
            "unresolvable-path": "the folder's real path could not be resolved",
            "new-project-resources": "new project resources appeared during this session; decide whether to trust them",
        }
        return f"{self.label}: {texts[self.source]}"

    def to_json(self) -> dict[str, Any]:
        return {
            "cwd": self.cwd,
            "state": self.label,
            "trusted": self.trusted,
            "source": self.source,
            "savedPath": self.saved_path,
            "description": self.describe(),
            "resources": [r.to_json() for r in self.resources],
            "warnings": list(self.warnings),
        }


def _home() -> str:
    return canonical_path(expand_home("~"))


def _exists(path: str) -> bool:
    return os.path.exists(path)  # follows symlinks: a broken link does not count, as in Pi


def trust_resources(cwd: str, include_piwork: bool = True) -> list[TrustResource]:
    """Every entry in ``cwd`` (and ancestors for ``.agents/skills``) that requires trust, by the real
    path of what it holds."""
    found: list[TrustResource] = []
    current = canonical_path(cwd)
    config = os.path.join(current, ".pi")
    names = PI_TRUST_ENTRIES + (PIWORK_TRUST_ENTRIES if include_piwork else ())
    for name in names:
        path = os.path.join(config, name)
        if _exists(path):  # listed where its files really are: a symlinked .pi (or entry) is resolved
            found.append(TrustResource(os.path.realpath(path), _entry_kind(name)))
    user_agents = os.path.join(_home(), ".agents", "skills")
    while True:
        agents = os.path.join(current, ".agents", "skills")
        if agents != user_agents and _exists(agents):
            found.append(TrustResource(os.path.realpath(agents), "agents-skills"))
        parent = os.path.dirname(current)
        if parent == current:
            return found
        current = parent


def _entry_kind(name: str) -> str:
    return {
        "settings.json": "settings",
        "mcp.json": "mcp",
        "SYSTEM.md": "system",
        "APPEND_SYSTEM.md": "append",
        "piwork-profile.json": "profile",
        "project-context.md": "snapshot",
        "context-index.json": "context-index",
    }.get(name, name)


def has_trust_resources(cwd: str, include_piwork: bool = False) -> bool:
    """Pi's check (``include_piwork`` adds piwork's own gated files under ``.pi``)."""
    current = canonical_path(cwd)
    config = os.path.join(current, ".pi")
    names = PI_TRUST_ENTRIES + (PIWORK_TRUST_ENTRIES if include_piwork else ())
    if any(_exists(os.path.join(config, name)) for name in names):
        return True
    user_agents = os.path.join(_home(), ".agents", "skills")
    while True:
        agents = os.path.join(current, ".agents", "skills")
        if agents != user_agents and _exists(agents):
            return True
        parent = os.path.dirname(current)
        if parent == current:
            return False
        current = parent


def trust_options(cwd: str, include_session_only: bool = False) -> list[TrustOption]:
    """The choices in the order shown, with exactly the trust.json updates each one writes."""
    here = canonical_path(cwd)
    parent = os.path.dirname(here)
    options = [TrustOption("Trust", True, (TrustUpdate(here, True),), here, "trust")]
    if parent != here:
        options.append(
            TrustOption(
                f"Trust parent folder ({parent})",
                True,
                (TrustUpdate(parent, True), TrustUpdate(here, None)),
                parent,
                "trust-parent",
            )
        )
    if include_session_only:
        options.append(TrustOption("Trust (this session only)", True, (), None, "trust-session"))
    options.append(TrustOption("Do not trust", False, (TrustUpdate(here, False),), here, "distrust"))
    if include_session_only:
        options.append(TrustOption("Do not trust (this session only)", False, (), None, "distrust-session"))
    return options


async def _maybe_await(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


@dataclass
class TrustResolver:
    """Resolves trust per folder and remembers the answer for the life of the process.

    ``ask`` is None for headless runs (no UI): an undecided project is then untrusted.
    """

    store: TrustStore
    default_policy: str = DEFAULT_PROJECT_TRUST.default  # defaultProjectTrust (global settings)
    ask: TrustAsker | None = None
    plugins: Sequence[TrustPlugin] = ()
    include_piwork_resources: bool = True
    _cache: dict[str, TrustState] = field(default_factory=dict)

    def cached(self, cwd: str) -> TrustState | None:
        key = strict_canonical(cwd)
        return self._cache.get(key) if key else None

    def forget(self, cwd: str | None = None) -> None:
        """Drop the cached answer (for one folder, or all) so the next resolve decides again."""
        if cwd is None:
            self._cache.clear()
        else:
            key = strict_canonical(cwd)
            if key:
                self._cache.pop(key, None)

    async def resolve(self, cwd: str, override: bool | None = None) -> TrustState:
        key = strict_canonical(cwd)
        if override is None and key and key in self._cache:
            cached = self._cache[key]
            if cached.source != "no-project-resources":
                return cached
            # Never trust implicitly: resources that appeared since stay off until someone decides.
            appeared = tuple(await asyncio.to_thread(trust_resources, cwd, self.include_piwork_resources))
            if not appeared:
                return cached
            state = TrustState(key, False, "new-project-resources", resources=appeared)
            self._cache[key] = state
            return state
        state = await self._decide(cwd, key, override)
        if key and override is None:
            self._cache[key] = state
        return state

    async def _decide(self, cwd: str, key: str | None, override: bool | None) -> TrustState:
        # Listing the folder and reading trust.json wait on the disk: in workers, never on the event loop.
        resources = tuple(await asyncio.to_thread(trust_resources, cwd, self.include_piwork_resources))
        shown = key or canonical_path(cwd)
        if override is not None:
            return TrustState(shown, override, "override", resources=resources)
        if not resources:
            return await asyncio.to_thread(self._nothing_to_gate, shown, key)
        if key is None:
            return TrustState(shown, False, "unresolvable-path", resources=resources)
        warnings: list[str] = []
        for plugin in self.plugins:
            try:
                answer = await _maybe_await(plugin(key))
            except Exception as exc:  # a plugin's failure must not decide trust
                warnings.append(f"A plugin failed while deciding project trust: {exc}")
                continue
            if answer is not None:
                if answer.remember:  # trust.json is written in a worker, never on the event loop
                    await asyncio.to_thread(self._save, TrustUpdate(key, answer.trusted), warnings)
                return TrustState(key, answer.trusted, "plugin", None, resources, tuple(warnings))
        try:
            entry = await asyncio.to_thread(self.store.lookup, key)
        except TrustStoreError as exc:
            return TrustState(key, False, "store-error", None, resources, (*warnings, str(exc)))
        if entry is not None:
            return TrustState(key, entry.decision, "saved", entry.path, resources, tuple(warnings))
        if self.default_policy in ("always", "never"):
            return TrustState(key, self.default_policy == "always", "default-policy", None, resources)
        if self.ask is None:
            return TrustState(key, False, "no-ui", None, resources, tuple(warnings))
        # the files a question shows (fingerprints, snapshots), read only when someone is asked
        from piwork.core.resources.trust_reading import read_for_review

        reading = await asyncio.to_thread(read_for_review, key, resources)
        options = tuple(trust_options(key, include_session_only=True))
        request = TrustRequest(key, resources, options, reading)
        chosen: TrustOption | None = await _maybe_await(self.ask(request))
        if chosen is None:
            return TrustState(key, False, "dismissed", None, resources, tuple(warnings))
        reviewed = reading.snapshot if chosen.trusted else None
        if not chosen.updates:
            return TrustState(key, chosen.trusted, "session-only", None, resources, tuple(warnings), reviewed)
        await asyncio.to_thread(self._apply, chosen.updates, warnings)  # off the event loop
        return TrustState(
            key, chosen.trusted, "prompt", chosen.saved_path, resources, tuple(warnings), reviewed
        )

    def _nothing_to_gate(self, shown: str, key: str | None) -> TrustState:
        """A folder without trust-requiring resources keeps its saved decision (a ``false`` stays
        untrusted, so resources that appear later stay off); with none saved it counts as trusted
        (blocking: reads trust.json)."""
        if key is None:
            return TrustState(shown, True, "no-project-resources")
        try:
            entry = self.store.lookup(key)
        except TrustStoreError as exc:
            return TrustState(key, False, "store-error", warnings=(str(exc),))
        if entry is not None:
            return TrustState(key, entry.decision, "saved", entry.path)
        return TrustState(key, True, "no-project-resources")

    def _save(self, update: TrustUpdate, warnings: list[str]) -> None:
        self._apply((update,), warnings)

    def _apply(self, updates: Sequence[TrustUpdate], warnings: list[str]) -> None:
        try:
            self.store.set_many(updates)
        except Exception as exc:  # the decision still holds for this run
            warnings.append(f"The trust decision could not be saved: {exc}")
