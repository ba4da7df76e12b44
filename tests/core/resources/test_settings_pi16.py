"""Settings files written by Pi 1.6: every key read without a warning and kept when piwork writes;
Pi's migrations applied on write; timeouts, thinking budgets, retry caps and cache retention."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from piwork.core.agent.retry import RetrySettings, backoff_delay_ms
from piwork.core.settings import Settings, cache_retention
from piwork.core.workflows.runtime import stream_options_from_settings

from .conftest import Tree

# One valid value for every key of Pi 1.6's settings schema (dist/core/settings-schema.d.ts), in its order.
PI16_SETTINGS: dict[str, Any] = {
    "$schema": "https://pi.dev/schemas/settings.json",
    "lastChangelogVersion": "1.6.0",
    "extensionChangelogVersions": {"npm:pi-x": "0.2.0"},
    "defaultProvider": "anthropic",
    "defaultModel": "claude-sonnet-4-5",
    "defaultThinkingLevel": "max",
    "modelThinkingLevels": {"anthropic/claude-opus-4-5": "xhigh"},
    "transport": "websocket-cached",
    "sessionShareDestination": "radius",
    "steeringMode": "all",
    "followUpMode": "one-at-a-time",
    "theme": "dark",
    "compaction": {
        "enabled": True,
        "reserveTokens": 8000,
        "keepRecentTokens": 12000,
        "modelOverrides": {"anthropic/claude-sonnet-4-5": {"reserveTokens": 4000, "keepRecentTokens": 9000}},
    },
    "branchSummary": {"reserveTokens": 9000, "skipPrompt": True},
    "retry": {
        "enabled": True,
        "maxRetries": 5,
        "baseDelayMs": 1000,
        "maxAgentDelayMs": 3000,
        "provider": {"timeoutMs": 600000, "maxRetries": 2, "maxRetryDelayMs": 30000},
    },
    "hideThinkingBlock": True,
    "showCacheMissNotices": True,
    "externalEditor": "code --wait",
    "shellPath": "/bin/bash",
    "quietStartup": "header",
    "defaultProjectTrust": "ask",
    "shellCommandPrefix": "set -e",
    "npmCommand": ["pnpm"],
    "selfUpdateCommand": ["npm", "i", "-g", "@earendil-works/pi-coding-agent"],
    "collapseChangelog": True,
    "enableInstallTelemetry": False,
    "enableAnalytics": False,
    "trackingId": "6f0e2c1a-0000-4000-8000-000000000001",
    "packages": ["npm:pi-x", {"source": "git:github.com/a/b", "autoload": False, "skills": ["s"]}],
    "extensions": ["ext/a.ts"],
    "deviceId": "6f0e2c1a-0000-4000-8000-000000000002",
    "skills": ["skills-extra"],
    "prompts": ["prompts-extra"],
    "themes": ["themes-extra"],
    "enableSkillCommands": False,
    "terminal": {
        "showImages": False,
        "imageWidthCells": 40,
        "clearOnShrink": True,
        "showTerminalProgress": True,
        "hyperlinks": "auto",
        "images": False,
        "trueColor": "auto",
    },
    "images": {"autoResize": False, "blockImages": True},
    "enabledModels": ["anthropic/*"],
    "defaultTools": ["+grep", "-write"],
    "doubleEscapeAction": "fork",
    "treeFilterMode": "labeled-only",
    "thinkingBudgets": {"minimal": 512, "low": 2048, "medium": 8192, "high": 32000},
    "editorPaddingX": 1,
    "outputPad": 0,
    "autocompleteMaxVisible": 8,
    "showHardwareCursor": True,
    "markdown": {"codeBlockIndent": "    ", "mermaid": "final"},
    "warnings": {"anthropicExtraUsage": False},
    "codemode": {"mode": "only", "inlineBudget": 2000},
    "sessionDir": "~/pi-sessions",
    "httpProxy": "http://proxy.local:3128",
    "httpIdleTimeoutMs": "disabled",
    "cacheWarming": "streaming",
    "websocketConnectTimeoutMs": "disabled",
    "tuiMode": "regular",
    "fullscreenExitOutput": "resume-hint",
    "fullscreenScrollbar": "hidden",
    "fullscreenCopyOnSelect": False,
    "fullscreenWheelScrollLines": "auto",
}


def _global(tree: Tree, data: dict[str, Any]) -> tuple[Path, Settings]:
    path = tree.write("home/.pi/agent/settings.json", json.dumps(data, indent=2))
    tree.mkdir("proj")
    return path, Settings.for_project(str(tree.root / "proj"), str(tree.agent), project_trusted=True)


def test_every_pi16_key_reads_without_a_warning(tree: Tree) -> None:
    _, settings = _global(tree, PI16_SETTINGS)
    assert settings.problems == [] and settings.type_warnings == []
    assert settings.default_tools() == ["read", "bash", "edit", "grep"]
    assert settings.default_thinking_level() == "max"
    assert settings.thinking_budgets() == {"minimal": 512, "low": 2048, "medium": 8192, "high": 32000}
    assert settings.retry_settings()["maxAgentDelayMs"] == 3000


def test_every_pi16_key_is_kept_when_piwork_writes(tree: Tree) -> None:
    path, settings = _global(tree, PI16_SETTINGS)
    settings.set_value("defaultModel", "claude-opus-4-5")
    written = path.read_text(encoding="utf-8")
    assert json.loads(written) == {**PI16_SETTINGS, "defaultModel": "claude-opus-4-5"}
    assert list(json.loads(written)) == list(PI16_SETTINGS)  # the keys keep their order
    assert not written.endswith("\n")


def test_pi_migrations_are_applied_when_piwork_writes(tree: Tree) -> None:
    old = {
        "queueMode": "all",
        "websockets": False,
        "skills": {"enableSkillCommands": False, "customDirectories": ["~/old-skills"]},
        "retry": {"maxDelayMs": 9000, "provider": {"timeoutMs": 5}},
        "theme": "light",
    }
    path, settings = _global(tree, old)
    settings.set_value("theme", "dark")
    assert json.loads(path.read_text(encoding="utf-8")) == {
        "skills": ["~/old-skills"],
        "retry": {"provider": {"timeoutMs": 5, "maxRetryDelayMs": 9000}},
        "theme": "dark",
        "steeringMode": "all",
        "transport": "sse",
        "enableSkillCommands": False,
    }


def test_migrations_keep_what_the_current_keys_already_say(tree: Tree) -> None:
    path, settings = _global(
        tree,
        {
            "queueMode": "all",
            "steeringMode": "one-at-a-time",
            "websockets": True,
            "transport": "sse",
            "skills": {"customDirectories": []},
            "retry": {"maxDelayMs": 9000, "provider": {"maxRetryDelayMs": 100}},
        },
    )
    settings.set_value("theme", "dark")
    assert json.loads(path.read_text(encoding="utf-8")) == {
        "queueMode": "all",
        "steeringMode": "one-at-a-time",
        "websockets": True,
        "transport": "sse",
        "retry": {"provider": {"maxRetryDelayMs": 100}},
        "theme": "dark",
    }


@pytest.mark.parametrize(
    ("raw", "seconds", "warned"),
    [
        ("disabled", None, False),
        (" Disabled ", None, False),
        ("120000", 120.0, False),
        (1500.9, 1.5, False),
        (0, None, False),
        ("", 90.0, True),
        ("soon", 90.0, True),
        (-1, 90.0, True),
        (True, 90.0, True),
    ],
)
def test_http_idle_timeout_as_pi_reads_it(tree: Tree, raw: Any, seconds: float | None, warned: bool) -> None:
    _, settings = _global(tree, {"httpIdleTimeoutMs": raw})
    assert stream_options_from_settings(settings.values).idle_timeout == seconds
    warnings = settings.type_warnings
    assert bool(warnings) == warned
    if warned:
        assert warnings == [
            f'{tree.agent / "settings.json"}: httpIdleTimeoutMs must be a number of ms or "disabled" '
            f"(got {json.dumps(raw)}); using 90000"
        ]


def test_thinking_budgets_reach_the_request_options(tree: Tree) -> None:
    _, settings = _global(tree, {"thinkingBudgets": {"low": 1000, "high": "lots", "medium": 2.5}})
    assert settings.thinking_budgets() == {"low": 1000}
    assert stream_options_from_settings(settings.values).thinking_budgets == {"low": 1000}
    assert sorted(settings.type_warnings) == [
        f'{tree.agent / "settings.json"}: thinkingBudgets.high must be a whole number (got "lots"); ignored',
        f"{tree.agent / 'settings.json'}: thinkingBudgets.medium must be a whole number (got 2.5); ignored",
    ]
    _, plain = _global(tree, {})
    assert stream_options_from_settings(plain.values).thinking_budgets is None


def test_max_agent_delay_caps_the_backoff() -> None:
    capped = RetrySettings.from_mapping({"baseDelayMs": 2000, "maxAgentDelayMs": 5000})
    assert [backoff_delay_ms(n, capped) for n in (1, 2, 3, 4)] == [2000, 4000, 5000, 5000]
    default = RetrySettings.from_mapping(None)
    assert [backoff_delay_ms(n, default) for n in (1, 6, 7)] == [2000, 60000, 60000]


def test_cache_retention(tree: Tree) -> None:
    _, plain = _global(tree, {})
    assert plain.cache_retention({}) == "short"
    assert plain.cache_retention({"PI_CACHE_RETENTION": "long"}) == "long"
    assert plain.cache_retention({"PI_CACHE_RETENTION": "LONG"}) == "short"  # Pi compares exactly
    _, chosen = _global(tree, {"piwork": {"cacheRetention": "none"}})
    assert chosen.cache_retention({"PI_CACHE_RETENTION": "long"}) == "none"  # the setting wins
    _, wrong = _global(tree, {"piwork": {"cacheRetention": "forever"}})
    assert wrong.cache_retention({"PI_CACHE_RETENTION": "long"}) == "long"
    assert wrong.type_warnings == [
        f'{tree.agent / "settings.json"}: piwork.cacheRetention must be one of "short", "long", "none" '
        '(got "forever"); using "short"'
    ]
    assert cache_retention({"piwork": {"cacheRetention": "long"}}, {}) == "long"
