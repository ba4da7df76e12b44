"""Every setting piwork reads, declared once: key, type, default, bounds or choices, scope, owner, meaning.

Pi's keys and piwork's own (under ``"piwork"``) live in the same ``settings.json`` files. A declaration
checks a raw JSON value and says what is used instead when the value is of the wrong type or out of
bounds; :class:`piwork.core.settings_values.SettingValues` applies the declarations to the merged files
and reports each refused value with its file. Absent and ``null`` values quietly take the default, as
in Pi (``value ?? default``); so does an empty string for text settings.

The declarations themselves load nothing but ``vocabulary`` (the window reads some before its first frame);
the checks and texts that need JavaScript's trimming and JSON (``jscompat``, orjson) import it where they do.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

from piwork.core.vocabulary import THINKING_LEVELS, CacheRetention, QueueMode, ThinkingLevel

T = TypeVar("T")
C = TypeVar("C", bound=str)
Kind = Literal["bool", "int", "number", "text", "choice", "choice-map", "timeout"]
Owner = Literal["pi", "piwork"]

#: Sections of piwork's own whose keys are read from the global file only (besides declared keys).
GLOBAL_ONLY_SECTIONS = ("piwork.credentials", "piwork.tokenizer")


@dataclass(frozen=True)
class Checked(Generic[T]):
    """The value to use, and why the raw value was refused (``None`` when it was taken or absent)."""

    value: T
    refused: str | None = None


@dataclass(frozen=True)
class Setting(Generic[T]):
    """One declared key. ``at_least`` names another setting this one may not be below."""

    key: str
    kind: Kind
    default: T
    description: str
    owner: Owner = "pi"
    global_only: bool = False
    minimum: float | None = None
    maximum: float | None = None
    exclusive_minimum: bool = False
    choices: tuple[str, ...] = ()
    at_least: str | None = None

    @property
    def path(self) -> tuple[str, ...]:
        return tuple(self.key.split("."))

    def check(self, raw: Any) -> Checked[T]:
        """``raw`` as this setting's type, or the default with the reason it was refused."""
        if raw is None or (raw == "" and self.kind == "text"):
            return Checked(self.default)
        why = _refusal(self, raw)
        if why is not None and self.kind == "choice-map" and isinstance(raw, Mapping):
            kept: Any = {name: value for name, value in raw.items() if value in self.choices}
            return Checked(kept, why)  # the entries that are right still count
        if why is not None:
            return Checked(self.default, why)
        value: Any = raw
        if self.kind == "timeout":
            value = _timeout_ms(raw)
        elif self.kind == "int":
            value = int(raw)
        elif self.kind == "number":
            value = float(raw)
        elif self.kind == "choice-map":
            value = dict(raw)
        return Checked(value)

    def bounds_text(self) -> str:
        low, high = self.minimum, self.maximum
        if low is not None and high is not None:
            return f"{'above' if self.exclusive_minimum else 'at least'} {_num(low)} and at most {_num(high)}"
        if low is not None:
            return f"{'above' if self.exclusive_minimum else 'at least'} {_num(low)}"
        return f"at most {_num(high)}" if high is not None else ""


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def _is_number(raw: Any) -> bool:
    return isinstance(raw, int | float) and not isinstance(raw, bool) and math.isfinite(raw)


_DECIMAL = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def _timeout_ms(raw: Any) -> int | None:
    """A timeout as Pi reads it: a number of ms (floored), its text, or ``"disabled"`` (0); else None."""
    if isinstance(raw, str):
        from piwork.core.jscompat import js_trim

        trimmed = js_trim(raw)
        if trimmed.lower() == "disabled":
            return 0
        return _timeout_ms(float(trimmed)) if _DECIMAL.fullmatch(trimmed) else None
    if not _is_number(raw) or raw < 0:
        return None
    return math.floor(float(raw))


def _refusal(setting: Setting[Any], raw: Any) -> str | None:
    kind = setting.kind
    if kind == "timeout":
        return None if _timeout_ms(raw) is not None else 'must be a number of ms or "disabled"'
    if kind == "bool":
        return None if isinstance(raw, bool) else "must be true or false"
    if kind == "text":
        return None if isinstance(raw, str) else "must be text"
    if kind == "choice":
        return (
            None if raw in setting.choices and isinstance(raw, str) else f"must be one of {_listed(setting)}"
        )
    if kind == "choice-map":
        if not isinstance(raw, Mapping):
            return "must be an object"
        bad = [
            name for name, value in raw.items() if not isinstance(value, str) or value not in setting.choices
        ]
        return f"{', '.join(bad)}: each value must be one of {_listed(setting)}" if bad else None
    if not _is_number(raw) or (kind == "int" and not float(raw).is_integer()):
        return "must be a whole number" if kind == "int" else "must be a number"
    low, high = setting.minimum, setting.maximum
    too_low = low is not None and (raw <= low if setting.exclusive_minimum else raw < low)
    if too_low or (high is not None and raw > high):
        return f"must be {setting.bounds_text()}"
    return None


def _listed(setting: Setting[Any]) -> str:
    from piwork.core.jscompat import js_json_stringify

    return ", ".join(js_json_stringify(choice) for choice in setting.choices)


REGISTRY: dict[str, Setting[Any]] = {}


def _declare(setting: Setting[T]) -> Setting[T]:
    assert setting.key not in REGISTRY, f"{setting.key} declared twice"
    REGISTRY[setting.key] = setting
    return setting


def flag(key: str, default: bool, description: str, **extra: Any) -> Setting[bool]:
    return _declare(Setting(key, "bool", default, description, **extra))


def whole(key: str, default: int, description: str, **extra: Any) -> Setting[int]:
    return _declare(Setting(key, "int", default, description, **extra))


def number(key: str, default: float, description: str, **extra: Any) -> Setting[float]:
    return _declare(Setting(key, "number", default, description, **extra))


def optional_whole(key: str, description: str, **extra: Any) -> Setting[int | None]:
    """A whole number with no default of its own (``None`` when absent or refused)."""
    return _declare(Setting(key, "int", None, description, **extra))


def timeout(key: str, default: int, description: str, **extra: Any) -> Setting[int]:
    """Milliseconds, also written as text or ``"disabled"`` (0), as Pi reads its timeouts."""
    return _declare(Setting(key, "timeout", default, description, **extra))


def text(key: str, description: str, **extra: Any) -> Setting[str | None]:
    return _declare(Setting(key, "text", None, description, **extra))


def choice(key: str, default: C, choices: tuple[C, ...], description: str, **extra: Any) -> Setting[C]:
    """A setting that takes one of ``choices``; typed as their ``Literal`` where the caller declares it."""
    return _declare(Setting(key, "choice", default, description, choices=choices, **extra))


def shown(value: Any) -> str:
    """A value as it is written in JSON (``None`` → "no value")."""
    from piwork.core.jscompat import js_json_stringify

    return "no value" if value is None else js_json_stringify(value)


def lookup(data: Mapping[str, Any], path: tuple[str, ...]) -> tuple[Any, str | None]:
    """The raw value at ``path`` and, when a section on the way is not an object, that section's key."""
    node: Any = data
    for depth, part in enumerate(path):
        if node is None:
            return None, None
        if not isinstance(node, Mapping):
            return None, ".".join(path[:depth])
        node = node.get(part)
    return node, None


# ---- Pi's settings ------------------------------------------------------------------------------------

DEFAULT_PROVIDER = text("defaultProvider", "Provider a new session starts with")
DEFAULT_MODEL = text("defaultModel", "Model id a new session starts with")
DEFAULT_THINKING_LEVEL: Setting[ThinkingLevel] = choice(
    "defaultThinkingLevel", "medium", THINKING_LEVELS, "Thinking level a new session starts at"
)
MODEL_THINKING_LEVELS: Setting[dict[str, str]] = _declare(
    Setting(
        "modelThinkingLevels",
        "choice-map",
        {},
        "Starting thinking level per model, keyed by provider/model",
        choices=THINKING_LEVELS,
    )
)
DEFAULT_PROJECT_TRUST = choice(
    "defaultProjectTrust",
    "ask",
    ("ask", "always", "never"),
    "What to do with a project's resources when no decision is saved for it",
    global_only=True,
)
ENABLE_SKILL_COMMANDS = flag(
    "enableSkillCommands",
    True,
    "Offer each skill as a /skill:name command in completion and the palette (a typed one expands either way)",
)
STEERING_MODE: Setting[QueueMode] = choice(
    "steeringMode", "one-at-a-time", ("all", "one-at-a-time"), "How queued steering messages are sent"
)
FOLLOW_UP_MODE: Setting[QueueMode] = choice(
    "followUpMode", "one-at-a-time", ("all", "one-at-a-time"), "How queued follow-up messages are sent"
)
TREE_FILTER_MODE = choice(
    "treeFilterMode",
    "default",
    ("default", "no-tools", "user-only", "labeled-only", "all"),
    "Which entries the session tree shows at first",
)
SESSION_DIR = text("sessionDir", "Folder new session files are written to (~ allowed)")
SHELL_PATH = text("shellPath", "Shell the bash tool runs commands with")
SHELL_COMMAND_PREFIX = text("shellCommandPrefix", "Text put before every bash command")
LOGS_MAX_TOTAL_MB = number(
    "logs.maxTotalMB",
    512,
    "Most space, in MB, the full outputs of tool calls may take before the oldest are removed",
    minimum=0,
    exclusive_minimum=True,
)
HTTP_PROXY = text("httpProxy", "Proxy every provider request goes through", global_only=True)
HTTP_IDLE_TIMEOUT_MS = timeout(  # Pi waits 300 s; piwork notices a hung server within two minutes
    "httpIdleTimeoutMs",
    90_000,
    'Longest wait, in ms, for the next bytes of a reply (0 or "disabled": no limit)',
)

COMPACTION_ENABLED = flag("compaction.enabled", True, "Compact automatically when the context is nearly full")
COMPACTION_RESERVE_TOKENS = whole(
    "compaction.reserveTokens", 16384, "Tokens kept free for the reply", minimum=0
)
COMPACTION_KEEP_RECENT_TOKENS = whole(
    "compaction.keepRecentTokens", 20000, "Recent tokens kept as they are (not summarised)", minimum=0
)
BRANCH_SUMMARY_RESERVE_TOKENS = whole(
    "branchSummary.reserveTokens", 16384, "Tokens kept free when summarising a branch you leave", minimum=0
)
BRANCH_SUMMARY_SKIP_PROMPT = flag(
    "branchSummary.skipPrompt", False, "Move in the session tree without asking about a summary"
)

RETRY_ENABLED = flag("retry.enabled", True, "Retry a turn that failed for a passing reason")
RETRY_MAX_RETRIES = whole("retry.maxRetries", 3, "How many times a failed turn is retried", minimum=0)
RETRY_BASE_DELAY_MS = whole(
    "retry.baseDelayMs", 2000, "First wait, in ms, before a retry (doubles each time)", minimum=0
)
RETRY_MAX_AGENT_DELAY_MS = whole(
    "retry.maxAgentDelayMs", 60000, "Longest wait, in ms, between two retries of a failed turn", minimum=0
)
PROVIDER_TIMEOUT_MS = whole(  # Pi has none: a server that drips bytes must not hold a run forever
    "retry.provider.timeoutMs",
    1_800_000,
    "Longest time, in ms, one provider request may take (0: no limit)",
    minimum=0,
)
PROVIDER_MAX_RETRIES = whole(
    "retry.provider.maxRetries", 0, "Retries of one request at the transport level", minimum=0
)
PROVIDER_MAX_RETRY_DELAY_MS = whole(
    "retry.provider.maxRetryDelayMs",
    60000,
    "Longest wait, in ms, a provider may ask for before a retry (0: no limit)",
    minimum=0,
)

THINKING_BUDGETS = tuple(
    optional_whole(
        f"thinkingBudgets.{level}",
        f"Thinking tokens a reply may use at the {level} level (unset: the built-in budget)",
        minimum=0,
    )
    for level in ("minimal", "low", "medium", "high")
)

# ---- piwork's own settings --------------------------------------------------------------------------

CONTEXT_FILES_ENABLED = flag(
    "piwork.contextFiles.enabled", True, "Tell the model the AGENTS.md / CLAUDE.md files", owner="piwork"
)
CONTEXT_FILES_ENFORCE_HARD_CAP = flag(
    "piwork.contextFiles.enforceHardCap", False, "Cut context files at the hard size cap", owner="piwork"
)

CHECKPOINTS_ENABLED = flag(
    "piwork.checkpoints.enabled",
    True,
    "Record the project's files before each tool call that can change them, so they can be restored",
    owner="piwork",
)
CHECKPOINTS_MAX_FILE_MB = number(
    "piwork.checkpoints.maxFileMB",
    10,
    "Files larger than this, in MB, are left out of checkpoints (each checkpoint names them)",
    minimum=0,
    exclusive_minimum=True,
    owner="piwork",
)
CHECKPOINTS_MAX_FILES = whole(
    "piwork.checkpoints.maxFiles",
    100_000,
    "A project with more files than this gets no whole-project checkpoints (only edit and write targets)",
    minimum=1,
    owner="piwork",
)
_GOVERNOR = "piwork.contextGovernor"
GOVERNOR_ENABLED = flag(
    f"{_GOVERNOR}.enabled", True, "Let the context governor trim the working set", owner="piwork"
)
GOVERNOR_PRESSURE_MARK = whole(
    f"{_GOVERNOR}.pressureMark",
    160_000,
    "Tokens from which the governor starts trimming",
    owner="piwork",
    minimum=1,
)
GOVERNOR_PROMPT_CEILING = whole(
    f"{_GOVERNOR}.promptCeiling", 240_000, "Tokens a request should stay under", owner="piwork", minimum=1
)
GOVERNOR_ALLOW_PRICING_ZONE = flag(
    f"{_GOVERNOR}.allowPricingZone",
    False,
    "Allow requests above the model's higher price tier",
    owner="piwork",
)
GOVERNOR_MIN_PROTECTED_GROUPS = whole(
    f"{_GOVERNOR}.minProtectedGroups",
    6,
    "Most recent message groups never trimmed",
    owner="piwork",
    minimum=6,
)
GOVERNOR_MIN_SAVINGS = whole(
    f"{_GOVERNOR}.minSavings", 8_000, "Fewest tokens a trim must save", owner="piwork", minimum=0
)
GOVERNOR_SAVINGS_RATIO = number(
    f"{_GOVERNOR}.savingsRatio",
    0.15,
    "Share of the working set a trim must save",
    owner="piwork",
    minimum=0,
    maximum=1,
    exclusive_minimum=True,
)
GOVERNOR_MAX_REQUIRED_SAVINGS = whole(
    f"{_GOVERNOR}.maxRequiredSavings",
    20_000,
    "Most tokens a trim is ever required to save",
    owner="piwork",
    minimum=0,
    at_least=GOVERNOR_MIN_SAVINGS.key,
)

CACHE_RETENTION: Setting[CacheRetention] = choice(
    "piwork.cacheRetention",
    "short",
    ("short", "long", "none"),
    "How long providers keep the prompt cache: short (minutes), long (an hour or a day), none (no caching); "
    "unset: long when PI_CACHE_RETENTION=long, else short",
    owner="piwork",
)

WORKTREES_LOCATION = choice(
    "piwork.worktrees.location",
    "worktrees-folder",
    ("worktrees-folder", "beside-repo"),
    "Where a new session's git worktree goes: worktrees-folder (<repo>-worktrees/<name> beside the "
    "repository) or beside-repo (<repo>-<name>)",
    owner="piwork",
)

GLOBAL_ONLY_KEYS = tuple(s.key for s in REGISTRY.values() if s.global_only)
