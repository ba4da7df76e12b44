from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from piwork.core.paths import named_path
from piwork.core.settings import (
    FileSettingsStorage,
    MemorySettingsStorage,
    Scope,
    Settings,
    SettingsWriteError,
)

from .conftest import Tree


def test_merge_rules_and_global_only_keys() -> None:
    storage = MemorySettingsStorage(
        json.dumps(
            {
                "compaction": {"enabled": False, "reserveTokens": 100},
                "defaultProjectTrust": "always",
                "piwork": {"tokenizer": {"x": 1}, "contextFiles": {"enabled": True}},
            }
        ),
        json.dumps(
            {
                "compaction": {"reserveTokens": 5},
                "defaultProjectTrust": "never",
                "piwork": {"tokenizer": {"x": 2}, "contextFiles": {"enabled": False}},
            }
        ),
    )
    settings = Settings.load(storage, project_trusted=True)
    assert settings.compaction_settings() == {"enabled": False, "reserveTokens": 5, "keepRecentTokens": 20000}
    assert settings.default_project_trust() == "always"
    assert settings.get("piwork.tokenizer.x") == 1 and settings.context_files_enabled() is False
    assert settings.origin_of("compaction") == "project"


def test_project_null_wipes_the_global_object() -> None:
    storage = MemorySettingsStorage('{"compaction": {"reserveTokens": 7}}', '{"compaction": null}')
    assert Settings.load(storage, project_trusted=True).compaction_reserve_tokens() == 16384
    assert Settings.load(storage, project_trusted=False).compaction_reserve_tokens() == 7


def test_migrations() -> None:
    storage = MemorySettingsStorage(
        json.dumps(
            {
                "queueMode": "all",
                "websockets": True,
                "skills": {"enableSkillCommands": False, "customDirectories": ["~/s"]},
                "retry": {"maxDelayMs": 9},
            }
        )
    )
    data = Settings.load(storage, project_trusted=False).global_data
    assert data == {
        "steeringMode": "all",
        "transport": "websocket",
        "skills": ["~/s"],
        "enableSkillCommands": False,
        "retry": {"provider": {"maxRetryDelayMs": 9}},
    }


def test_wrong_types_fall_back_with_a_warning() -> None:
    settings = Settings.load(
        MemorySettingsStorage('{"retry": {"maxRetries": "lots"}, "defaultModel": 3}'), False
    )
    assert settings.retry_settings()["maxRetries"] == 3 and settings.default_model() is None
    assert any("retry.maxRetries" in w for w in settings.type_warnings)


def test_broken_file_is_reported_and_never_written(tree: Tree) -> None:
    path = tree.write("home/.pi/agent/settings.json", "{ not json")
    settings = Settings.for_project(str(tree.root), str(tree.agent), project_trusted=False)
    assert settings.problems and settings.problems[0].path == str(path)
    assert settings.compaction_enabled() is True
    with pytest.raises(SettingsWriteError):
        settings.set_value("defaultModel", "m")
    assert path.read_text() == "{ not json"


def test_writer_changes_one_key_and_keeps_the_rest(tree: Tree) -> None:
    path = tree.write(
        "home/.pi/agent/settings.json", '{"unknownKey": {"a": 1}, "compaction": {"enabled": true}}'
    )
    settings = Settings.for_project(str(tree.root), str(tree.agent), project_trusted=False)
    settings.set_value("compaction.reserveTokens", 1234)
    data = json.loads(path.read_text())
    assert data == {"unknownKey": {"a": 1}, "compaction": {"enabled": True, "reserveTokens": 1234}}
    assert not path.read_text().endswith("\n")
    assert settings.compaction_reserve_tokens() == 1234
    assert not (tree.agent / "settings.json.lock").exists()


def test_project_writes_refused_while_untrusted(tree: Tree) -> None:
    settings = Settings.for_project(str(tree.root / "p"), str(tree.agent), project_trusted=False)
    with pytest.raises(SettingsWriteError, match="not trusted"):
        settings.set_value("defaultModel", "x", scope="project")
    assert not (tree.root / "p/.pi").exists()
    storage = FileSettingsStorage(str(tree.root / "p"), str(tree.agent))
    trusted = Settings.load(storage, project_trusted=True)
    trusted.set_value("defaultModel", "x", scope="project")
    assert json.loads((tree.root / "p/.pi/settings.json").read_text()) == {"defaultModel": "x"}


class CountingStorage(FileSettingsStorage):
    """The real files, counting the locked read-modify-write rounds."""

    rounds = 0

    def update(self, scope: Scope, change: Callable[[str | None], str]) -> None:
        self.rounds += 1
        super().update(scope, change)


def test_several_keys_change_in_one_atomic_write_keeping_unknown_keys(tree: Tree) -> None:
    original = {"unknownKey": {"a": [1, 2]}, "piwork": {"futureThing": True}, "compaction": {"enabled": True}}
    path = tree.write("home/.pi/agent/settings.json", json.dumps(original))
    storage = CountingStorage(str(tree.root), str(tree.agent))
    settings = Settings.load(storage, project_trusted=False)
    settings.set_values(
        {"compaction.reserveTokens": 4096, "piwork.contextGovernor.enabled": False, "x": None}
    )
    assert storage.rounds == 1
    assert json.loads(path.read_text()) == {
        "unknownKey": {"a": [1, 2]},
        "piwork": {"futureThing": True, "contextGovernor": {"enabled": False}},
        "compaction": {"enabled": True, "reserveTokens": 4096},
    }
    assert settings.compaction_reserve_tokens() == 4096  # the typed view follows the write
    assert not list(path.parent.glob(".settings.*.tmp"))


def test_the_default_thinking_level_says_which_file_sets_it(tmp_path: Path) -> None:
    both = FileSettingsStorage(str(tmp_path / "project"), str(tmp_path / "agent"))
    both.update("global", lambda _old: json.dumps({"defaultThinkingLevel": "high"}))
    both.update("project", lambda _old: json.dumps({"defaultThinkingLevel": "low"}))
    trusted = Settings.load(both, project_trusted=True)
    source = trusted.default_thinking_source()
    assert (source.level, source.scope) == ("low", "project")
    assert source.describe() == "low, from this project's .pi/settings.json"
    assert trusted.thinking_level_in("global") == "high" and trusted.thinking_level_in("project") == "low"
    untrusted = Settings.load(both, project_trusted=False).default_thinking_source()
    assert (untrusted.level, untrusted.scope) == ("high", "global")
    assert untrusted.path == str(tmp_path / "agent" / "settings.json")
    assert untrusted.describe().startswith("high, from the global settings (")
    unset = Settings.load(MemorySettingsStorage(None, json.dumps({"defaultThinkingLevel": "ultra"})), True)
    assert (
        unset.default_thinking_source().describe()
        == "medium, the built-in default (no settings file sets one)"
    )


def test_files_are_named_alike_everywhere() -> None:
    env = {"HOME": "/home/ada"}
    assert named_path("/home/ada/app/docs/AGENTS.md", "/home/ada/app", env) == "docs/AGENTS.md"
    assert named_path("docs/AGENTS.md", "/home/ada/app", env) == "docs/AGENTS.md"
    assert named_path("/home/ada/.pi/agent/AGENTS.md", "/home/ada/app", env) == "~/.pi/agent/AGENTS.md"
    assert named_path("~/.pi/agent/AGENTS.md", "/home/ada/app", env) == "~/.pi/agent/AGENTS.md"
    assert named_path("/etc/pi/AGENTS.md", "/home/ada/app", env) == "/etc/pi/AGENTS.md"
    assert named_path("/home/ada/application/x.md", "/home/ada/app", env) == "~/application/x.md"
