"""Typed settings over real settings files: every kind of refused value is reported with its file, key,
value and what is used instead; the files are never touched; a project value overrides the global one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from piwork.core import settings_schema as schema
from piwork.core.compaction.settings import CompactionSettings
from piwork.core.context.budget import GovernorSettings
from piwork.core.settings import Settings
from piwork.core.settings_values import SettingValues
from piwork.core.tools.registry import ToolOptions
from piwork.core.workflows.runtime import stream_options_from_settings


def _files(tmp_path: Path, global_data: Any, project_data: Any = None) -> tuple[Path, Path, Path, Path]:
    agent, project = tmp_path / "agent", tmp_path / "project"
    (project / ".pi").mkdir(parents=True)
    agent.mkdir()
    global_file, project_file = agent / "settings.json", project / ".pi" / "settings.json"
    global_file.write_text(json.dumps(global_data, indent=4) + "\n")
    if project_data is not None:
        project_file.write_text(json.dumps(project_data))
    return agent, project, global_file, project_file


BAD_VALUES = [  # key path, bad value, expected reason, what is used instead
    ({"compaction": {"enabled": "no"}}, "compaction.enabled", "must be true or false", "true"),
    (
        {"compaction": {"reserveTokens": "lots"}},
        "compaction.reserveTokens",
        "must be a whole number",
        "16384",
    ),
    (
        {"compaction": {"keepRecentTokens": 1.5}},
        "compaction.keepRecentTokens",
        "must be a whole number",
        "20000",
    ),
    ({"retry": {"maxRetries": -1}}, "retry.maxRetries", "must be at least 0", "3"),
    ({"logs": {"maxTotalMB": 0}}, "logs.maxTotalMB", "must be above 0", "512"),
    (
        {"piwork": {"contextGovernor": {"savingsRatio": 3}}},
        "piwork.contextGovernor.savingsRatio",
        "must be above 0 and at most 1",
        "0.15",
    ),
    (
        {"defaultProjectTrust": "sometimes"},
        "defaultProjectTrust",
        'must be one of "ask", "always", "never"',
        '"ask"',
    ),
    ({"defaultModel": 3}, "defaultModel", "must be text", None),
    ({"steeringMode": True}, "steeringMode", 'must be one of "all", "one-at-a-time"', '"one-at-a-time"'),
    (
        {"modelThinkingLevels": {"a/b": "huge", "c/d": "high"}},
        "modelThinkingLevels",
        "a/b: each value",
        '{"c/d":"high"}',
    ),
    ({"compaction": 5}, "compaction", "must be an object", "the defaults"),
    (
        {"piwork": {"contextGovernor": {"minSavings": 30000, "maxRequiredSavings": 10}}},
        "piwork.contextGovernor.maxRequiredSavings",
        "must be at least minSavings = 30000",
        "30000",
    ),
]


@pytest.mark.parametrize(("data", "key", "reason", "used"), BAD_VALUES)
def test_each_kind_of_bad_value_is_reported_and_the_file_left_alone(
    tmp_path: Path, data: dict[str, Any], key: str, reason: str, used: str | None
) -> None:
    agent, project, global_file, _ = _files(tmp_path, data)
    before = global_file.read_bytes()
    settings = Settings.for_project(str(project), str(agent), project_trusted=True)
    (problem,) = settings.values.problems
    assert (problem.path, problem.key) == (str(global_file), key)
    assert problem.message.startswith(f"{global_file}: {key} ")
    assert reason in problem.message
    assert problem.message.endswith("; ignored" if used is None else f"; using {used}")
    assert problem.message in settings.type_warnings
    assert global_file.read_bytes() == before
    assert not (agent / "settings.json.lock").exists()


def test_refused_values_fall_back_to_the_declared_defaults_everywhere(tmp_path: Path) -> None:
    data = {
        "compaction": {"enabled": "no", "reserveTokens": -4, "keepRecentTokens": 100},
        "httpIdleTimeoutMs": "slow",
        "retry": {"provider": {"maxRetryDelayMs": -1, "timeoutMs": 5000}},
        "shellPath": 7,
        "logs": {"maxTotalMB": "x"},
        "piwork": {"contextGovernor": {"pressureMark": 0}},
    }
    agent, project, _, _ = _files(tmp_path, data)
    values = Settings.for_project(str(project), str(agent), project_trusted=False).values
    assert CompactionSettings.from_settings(values) == CompactionSettings(keep_recent_tokens=100)
    options = stream_options_from_settings(values)
    assert (options.idle_timeout, options.total_timeout, options.max_retry_delay_ms) == (90.0, 5.0, 60000)
    tools = ToolOptions.from_settings(None, values)
    assert (tools.shell_path, tools.logs_max_total_mb) == (None, schema.LOGS_MAX_TOTAL_MB.default)
    assert GovernorSettings.from_settings(values).pressure_mark == schema.GOVERNOR_PRESSURE_MARK.default
    assert [p.key for p in values.problems] == [
        "shellPath",
        "logs.maxTotalMB",
        "httpIdleTimeoutMs",
        "compaction.enabled",
        "compaction.reserveTokens",
        "retry.provider.maxRetryDelayMs",
        "piwork.contextGovernor.pressureMark",
    ]


def test_zero_keeps_its_meaning_of_no_limit() -> None:
    options = stream_options_from_settings(
        {"httpIdleTimeoutMs": 0, "retry": {"provider": {"maxRetryDelayMs": 0}}}
    )
    assert (options.idle_timeout, options.max_retry_delay_ms) == (None, 0)


def test_project_overrides_global_and_its_bad_values_name_the_project_file(tmp_path: Path) -> None:
    agent, project, global_file, project_file = _files(
        tmp_path,
        {"compaction": {"reserveTokens": 1000, "keepRecentTokens": 2000}, "httpProxy": "http://global:1"},
        {"compaction": {"reserveTokens": 3000, "keepRecentTokens": "x"}, "httpProxy": "http://project:1"},
    )
    trusted = Settings.for_project(str(project), str(agent), project_trusted=True)
    values = trusted.values
    assert values.value(schema.COMPACTION_RESERVE_TOKENS) == 3000
    # a refused project value is replaced by the default (as Pi's `value ?? default` would see it), not the global one
    assert values.value(schema.COMPACTION_KEEP_RECENT_TOKENS) == 20000
    assert values.value(schema.HTTP_PROXY) == "http://global:1"  # global-only: the project cannot set it
    (problem,) = values.problems
    assert (problem.path, problem.key, problem.value, problem.used) == (
        str(project_file),
        "compaction.keepRecentTokens",
        "x",
        20000,
    )
    untrusted = Settings.for_project(str(project), str(agent), project_trusted=False)
    assert untrusted.values.value(schema.COMPACTION_RESERVE_TOKENS) == 1000
    assert untrusted.values.problems == []
    assert global_file.exists() and trusted.file_of(("compaction", "reserveTokens")) == str(project_file)
    assert trusted.file_of(("httpProxy",)) == str(global_file)


def test_a_plain_mapping_is_read_the_same_way_without_a_file() -> None:
    values = SettingValues.of({"retry": {"maxRetries": "many"}})
    assert values.value(schema.RETRY_MAX_RETRIES) == 3
    assert (
        values.problems[0].message
        == 'settings: retry.maxRetries must be a whole number (got "many"); using 3'
    )
    assert SettingValues.of(values) is values and dict(values) == {"retry": {"maxRetries": "many"}}


def test_absent_null_and_empty_text_quietly_take_the_default() -> None:
    values = SettingValues.of({"compaction": None, "shellPath": "", "retry": {"maxRetries": None}})
    assert values.value(schema.COMPACTION_ENABLED) is True and values.value(schema.SHELL_PATH) is None
    assert values.value(schema.RETRY_MAX_RETRIES) == 3 and values.problems == []


def test_every_declaration_is_complete_and_its_default_passes_its_own_check() -> None:
    assert len(schema.REGISTRY) == len({s.key for s in schema.REGISTRY.values()})
    for setting in schema.REGISTRY.values():
        assert setting.description and setting.owner in ("pi", "piwork")
        assert setting.check(setting.default).refused is None, setting.key
        assert setting.owner == "piwork" if setting.key.startswith("piwork.") else setting.owner == "pi"
    assert schema.GLOBAL_ONLY_KEYS == ("defaultProjectTrust", "httpProxy")


def test_the_resources_panel_row_of_the_file_lists_its_refused_values(tmp_path: Path) -> None:
    from piwork.core.resources.loader import load_resources

    agent, project, global_file, _ = _files(tmp_path, {"retry": {"enabled": 1}})
    settings = Settings.for_project(str(project), str(agent), project_trusted=False)
    loaded = load_resources(str(project), str(agent), settings, home=str(tmp_path))
    (row,) = [r for r in loaded.rows if r.kind == "settings" and r.path == str(global_file)]
    assert row.state == "active"  # the file is used; one value in it is not
    assert [(d.type, d.message) for d in row.diagnostics] == [
        ("warning", f"{global_file}: retry.enabled must be true or false (got 1); using true")
    ]
