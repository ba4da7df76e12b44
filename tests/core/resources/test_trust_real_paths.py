"""What trust lists is where the files really are: a symlinked .pi is listed at its target."""

from __future__ import annotations

from pathlib import Path

from piwork.core.resources.trust import trust_resources
from piwork.core.resources.trust_review import display_path, list_resource_files


def test_a_symlinked_pi_folder_is_listed_where_its_files_are(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere" / "config"
    (elsewhere / "skills" / "deploy").mkdir(parents=True)
    (elsewhere / "skills" / "deploy" / "SKILL.md").write_text("---\ndescription: d\n---\nbody\n")
    (elsewhere / "SYSTEM.md").write_text("You are someone else.\n")
    project = tmp_path / "project"
    project.mkdir()
    (project / ".pi").symlink_to(elsewhere, target_is_directory=True)
    listed = {r.kind: r.path for r in trust_resources(str(project))}
    real = elsewhere.resolve()
    assert listed == {"skills": str(real / "skills"), "system": str(real / "SYSTEM.md")}
    assert list_resource_files(listed["skills"]).files == (str(real / "skills" / "deploy" / "SKILL.md"),)
    assert display_path(listed["system"], str(project.resolve())) == str(
        real / "SYSTEM.md"
    )  # outside: in full


def test_a_symlinked_entry_and_agents_skills_are_resolved_too(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / ".pi").mkdir(parents=True)
    target = tmp_path / "shared-prompt.md"
    target.write_text("appended\n")
    (project / ".pi" / "APPEND_SYSTEM.md").symlink_to(target)
    skills = tmp_path / "skills-store"
    skills.mkdir()
    (project / ".agents").mkdir()
    (project / ".agents" / "skills").symlink_to(skills, target_is_directory=True)
    listed = {r.kind: r.path for r in trust_resources(str(project))}
    assert listed["append"] == str(target.resolve()) and listed["agents-skills"] == str(skills.resolve())


def test_ordinary_entries_keep_their_place(tmp_path: Path) -> None:
    (tmp_path / ".pi" / "prompts").mkdir(parents=True)
    assert [r.path for r in trust_resources(str(tmp_path))] == [str(tmp_path.resolve() / ".pi" / "prompts")]
