"""Untrusted projects never load their gated resources; they are still reported as blocked."""

from __future__ import annotations

import asyncio
import os

from piwork.core.resources.loader import LoaderOptions, load_project, load_resources
from piwork.core.resources.trust import TrustResolver
from piwork.core.resources.trust_store import TrustStore, TrustUpdate
from piwork.core.settings import Settings

from .conftest import Tree, skill_text


def plant_everything(tree: Tree) -> str:
    tree.write("p/.pi/settings.json", '{"compaction": {"reserveTokens": 1}, "skills": ["../../extra"]}')
    tree.write("p/.pi/skills/pi-skill/SKILL.md", skill_text("pi-skill"))
    tree.write("p/.pi/prompts/fix.md", "---\ndescription: fix it\n---\nFix $1")
    tree.write("p/.pi/SYSTEM.md", "PROJECT SYSTEM")
    tree.write("p/.pi/APPEND_SYSTEM.md", "PROJECT APPEND")
    tree.write("p/.agents/skills/agents-skill/SKILL.md", skill_text("agents-skill"))
    tree.write("extra/settings-skill/SKILL.md", skill_text("settings-skill"))
    tree.write("p/AGENTS.md", "context loads anyway")
    tree.write("home/.pi/agent/skills/user-skill/SKILL.md", skill_text("user-skill"))
    return str(tree.root / "p")


def load(tree: Tree, cwd: str, override: bool | None):  # type: ignore[no-untyped-def]
    resolver = TrustResolver(TrustStore(tree.agent))
    return asyncio.run(load_project(cwd, str(tree.agent), resolver, LoaderOptions(), override=override))


def test_untrusted_project_loads_nothing_gated(tree: Tree) -> None:
    cwd = plant_everything(tree)
    loaded = load(tree, cwd, override=None)
    assert loaded.trust is not None and loaded.trust.source == "no-ui" and not loaded.project_trusted
    assert [s.name for s in loaded.skills] == ["user-skill"]
    assert loaded.prompts == []
    assert loaded.system_prompt is None and loaded.prompt_sources.append == []
    assert loaded.settings.project_data == {} and loaded.settings.compaction_reserve_tokens() == 16384
    assert [f.content for f in loaded.context_files] == ["context loads anyway"]
    blocked = {(r.kind, os.path.basename(r.path)) for r in loaded.rows if r.state == "blocked-untrusted"}
    assert blocked >= {
        ("skill", "skills"),
        ("prompt", "prompts"),
        ("system", "SYSTEM.md"),
        ("append", "APPEND_SYSTEM.md"),
        ("settings", "settings.json"),
    }
    assert sum(1 for r in loaded.rows if r.state == "blocked-untrusted" and r.kind == "skill") == 2


def test_trusted_project_loads_everything(tree: Tree) -> None:
    cwd = plant_everything(tree)
    loaded = load(tree, cwd, override=True)
    names = [s.name for s in loaded.skills]
    assert names == ["settings-skill", "pi-skill", "agents-skill", "user-skill"]
    assert [p.name for p in loaded.prompts] == ["fix"]
    assert loaded.system_prompt == "PROJECT SYSTEM" and loaded.prompt_sources.append == ["PROJECT APPEND"]
    assert loaded.settings.compaction_reserve_tokens() == 1


def test_skills_symlink_loop_terminates(tree: Tree) -> None:
    tree.write("home/.pi/agent/skills/group/a/SKILL.md", skill_text("a"))
    loop = tree.agent / "skills" / "group" / "loop"
    loop.symlink_to(tree.agent / "skills")
    settings = Settings.for_project(str(tree.root), str(tree.agent), project_trusted=False)
    loaded = load_resources(str(tree.root), str(tree.agent), settings)
    assert [s.name for s in loaded.skills] == ["a"]


def test_no_skills_keeps_only_explicit_skill_paths(tree: Tree) -> None:
    tree.write("home/.pi/agent/skills/user-skill/SKILL.md", skill_text("user-skill"))
    tree.write("cli/one/SKILL.md", skill_text("one"))
    settings = Settings.for_project(str(tree.root), str(tree.agent), project_trusted=False)
    options = LoaderOptions(no_skills=True, additional_skill_paths=["cli/one", "cli/missing"])
    loaded = load_resources(str(tree.root), str(tree.agent), settings, options)
    assert [s.name for s in loaded.skills] == ["one"]
    assert loaded.skills[0].source_info.scope == "temporary"
    assert [(d.type, d.kind) for d in loaded.skill_diagnostics] == [("warning", "path_not_found")]
    states = {r.name: r.state for r in loaded.rows if r.kind == "skill"}
    assert states == {"user-skill": "disabled", "one": "active"}


def test_collision_rows_name_the_winner(tree: Tree) -> None:
    tree.write("home/.pi/agent/skills/a/SKILL.md", skill_text("same"))
    tree.write("home/.agents/skills/b/SKILL.md", skill_text("same", extra="disable-model-invocation: true\n"))
    settings = Settings.for_project(str(tree.root), str(tree.agent), project_trusted=False)
    loaded = load_resources(str(tree.root), str(tree.agent), settings)
    rows = [r for r in loaded.rows if r.kind == "skill"]
    assert [r.state for r in rows] == ["active", "collision-loser"]
    assert rows[1].winner_path == str(tree.agent / "skills/a/SKILL.md")
    assert rows[0].model_visible


def test_override_callbacks_replace(tree: Tree) -> None:
    tree.write("home/.pi/agent/skills/a/SKILL.md", skill_text("a"))
    settings = Settings.for_project(str(tree.root), str(tree.agent), project_trusted=False)
    options = LoaderOptions(
        skills_override=lambda base: type(base)([], []),
        system_prompt_override=lambda base: "REPLACED",
        context_files_override=lambda files: [],
    )
    loaded = load_resources(str(tree.root), str(tree.agent), settings, options)
    assert loaded.skills == [] and loaded.system_prompt == "REPLACED" and loaded.context_files == []


def test_settings_filters_disable_auto_discovered_skills(tree: Tree) -> None:
    tree.write("home/.pi/agent/skills/keep/SKILL.md", skill_text("keep"))
    tree.write("home/.pi/agent/skills/drop/SKILL.md", skill_text("drop"))
    tree.write("home/.pi/agent/settings.json", '{"skills": ["!drop"]}')
    settings = Settings.for_project(str(tree.root), str(tree.agent), project_trusted=False)
    loaded = load_resources(str(tree.root), str(tree.agent), settings)
    assert [s.name for s in loaded.skills] == ["keep"]
    assert {r.name: r.state for r in loaded.rows if r.kind == "skill"} == {
        "drop": "disabled",
        "keep": "active",
    }


def test_packages_on_disk_contribute_and_missing_ones_are_reported(tree: Tree) -> None:
    tree.write("pkgs/local/skills/pkg-skill/SKILL.md", skill_text("pkg-skill"))
    tree.write("pkgs/local/prompts/pkg-prompt.md", "body")
    tree.write("home/.pi/agent/npm/node_modules/@me/tools/package.json", '{"pi": {"skills": ["./extra"]}}')
    tree.write("home/.pi/agent/npm/node_modules/@me/tools/extra/npm-skill/SKILL.md", skill_text("npm-skill"))
    tree.write("home/.pi/agent/skills/own/SKILL.md", skill_text("own"))
    packages = ["../../../pkgs/local", "npm:@me/tools@1.2.0", "git:github.com/someone/absent"]
    tree.write("home/.pi/agent/settings.json", '{"packages": ' + __import__("json").dumps(packages) + "}")
    settings = Settings.for_project(str(tree.root), str(tree.agent), project_trusted=False)
    loaded = load_resources(str(tree.root), str(tree.agent), settings)
    assert [s.name for s in loaded.skills] == ["own", "pkg-skill", "npm-skill"]
    assert [p.name for p in loaded.prompts] == ["pkg-prompt"]
    assert [d.kind for d in loaded.package_diagnostics] == ["package_missing"]
    assert str(tree.agent / "git/github.com/someone/absent") == loaded.package_diagnostics[0].path
    scopes = {r.name: r.scope for r in loaded.rows if r.kind == "skill"}
    assert scopes == {"own": "global", "pkg-skill": "package", "npm-skill": "package"}


def test_effective_setting_rows_name_their_file(tree: Tree) -> None:
    tree.write("home/.pi/agent/settings.json", '{"defaultModel": "m", "compaction": {"enabled": false}}')
    tree.write("p/.pi/settings.json", '{"compaction": {"reserveTokens": 5}}')
    settings = Settings.for_project(str(tree.root / "p"), str(tree.agent), project_trusted=True)
    loaded = load_resources(str(tree.root / "p"), str(tree.agent), settings)
    keys = {r.name: (r.scope, r.path) for r in loaded.rows if r.kind == "setting"}
    assert keys == {
        "defaultModel": ("global", str(tree.agent / "settings.json")),
        "compaction": ("project", str(tree.root / "p/.pi/settings.json")),
    }


def test_a_symlinked_cwd_discovers_from_the_real_folder_and_its_real_parents(tree: Tree) -> None:
    # evil/.agents/skills sits above the link, never above the real folder the trust check looks at
    tree.write("evil/.agents/skills/evil-skill/SKILL.md", skill_text("evil-skill"))
    tree.write("evil/AGENTS.md", "from the link's parent")
    tree.write("clean/AGENTS.md", "the real folder")
    (tree.root / "evil" / "link").symlink_to(tree.root / "clean")
    for cwd in (tree.root / "evil" / "link", tree.root / "evil" / "link" / "." / ".." / "link"):
        loaded = load(tree, str(cwd), override=None)
        assert loaded.trust is not None and loaded.trust.source == "no-project-resources"
        assert [s.name for s in loaded.skills] == []
        assert [f.content for f in loaded.context_files] == ["the real folder"]
        assert not any("evil-skill" in r.path for r in loaded.rows)


def test_a_symlinked_cwd_into_an_untrusted_project_loads_nothing_gated(tree: Tree) -> None:
    real = plant_everything(tree)
    TrustStore(tree.agent).set_many([TrustUpdate(real, False)])
    (tree.root / "link").symlink_to(real)
    loaded = load(tree, str(tree.root / "link"), override=None)
    assert not loaded.project_trusted and [s.name for s in loaded.skills] == ["user-skill"]
    assert loaded.prompts == [] and loaded.system_prompt is None
