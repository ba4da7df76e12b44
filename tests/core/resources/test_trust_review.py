"""Reading gated resources before trusting them, and what changed since the last decision."""

from __future__ import annotations

from pathlib import Path

from piwork.core.resources.trust import trust_resources
from piwork.core.resources.trust_reading import take_snapshot
from piwork.core.resources.trust_review import display_path, list_resource_files, preview_file
from piwork.core.resources.trust_snapshot import SnapshotStore, compare


def _project(root: Path) -> Path:
    skill = root / ".pi" / "skills" / "deploy"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: deploy\ndescription: Ship to production.\n---\nRun make ship.\n"
    )
    (skill / "run.sh").write_text("#!/bin/sh\nmake ship\n")
    (root / ".pi" / "prompts").mkdir()
    (root / ".pi" / "prompts" / "review.md").write_text("---\ndescription: Review a diff\n---\nReview $1\n")
    (root / ".pi" / "settings.json").write_text('{"theme": "dark"}\n')
    return root


def test_listing_is_sorted_capped_and_takes_single_files(tmp_path: Path) -> None:
    folder = tmp_path / "many"
    folder.mkdir()
    for i in range(12):
        (folder / f"f{i:02d}.txt").write_text("x")
    (folder / "sub").mkdir()
    (folder / "sub" / "a.txt").write_text("y")
    listing = list_resource_files(str(folder), limit=5)
    assert listing.truncated and [Path(p).name for p in listing.files] == [f"f{i:02d}.txt" for i in range(5)]
    full = list_resource_files(str(folder))
    assert not full.truncated and full.files[-1] == str(folder / "sub" / "a.txt")
    single = list_resource_files(str(folder / "f00.txt"))
    assert single.files == (str(folder / "f00.txt"),)
    assert list_resource_files(str(tmp_path / "gone")).error == "missing"


def test_previews_name_skills_and_templates_and_refuse_binary(tmp_path: Path) -> None:
    root = _project(tmp_path / "p")
    skill = preview_file(str(root / ".pi/skills/deploy/SKILL.md"), "skills")
    assert (skill.heading, skill.description) == ('Skill "deploy"', "Ship to production.")
    assert "Run make ship." in skill.text and skill.note == ""
    prompt = preview_file(str(root / ".pi/prompts/review.md"), "prompts")
    assert (prompt.heading, prompt.description) == ("Prompt template /review", "Review a diff")
    blob = root / ".pi" / "skills" / "deploy" / "logo.png"
    blob.write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0" + bytes(range(256)) * 10)
    binary = preview_file(str(blob), "skills")
    assert binary.binary and binary.text == "" and binary.note.startswith("Binary file (")
    big = root / ".pi" / "APPEND_SYSTEM.md"
    big.write_text("line\n" * 40_000)
    cut = preview_file(str(big), "append", limit=1024)
    assert len(cut.text) == 1024 and cut.note == "Showing the first 1.0KB of 195.3KB."
    assert cut.heading.startswith("APPEND_SYSTEM.md")
    assert display_path(str(big), str(root)) == ".pi/APPEND_SYSTEM.md"


def test_compare_lists_added_removed_and_modified_files_with_line_diffs(tmp_path: Path) -> None:
    root = _project(tmp_path / "p")
    store = SnapshotStore(tmp_path / "agent")
    store.save(take_snapshot(str(root), trust_resources(str(root))))
    (root / ".pi" / "skills" / "deploy" / "SKILL.md").write_text(
        "---\nname: deploy\ndescription: Ship to production.\n---\nRun make ship --force.\n"
    )
    (root / ".pi" / "prompts" / "review.md").unlink()
    (root / ".pi" / "extensions").mkdir()
    (root / ".pi" / "extensions" / "hook.ts").write_text("export default () => {}\n")
    (root / ".pi" / "skills" / "deploy" / "run.sh").write_bytes(b"\0binary now")
    old = store.load(str(root))
    assert old is not None
    new = take_snapshot(str(root), trust_resources(str(root)))
    changes = compare(old, new, display=lambda p: display_path(p, str(root)))
    assert [(display_path(c.path, str(root)), c.kind) for c in changes] == [
        (".pi/extensions/hook.ts", "added"),
        (".pi/prompts/review.md", "removed"),
        (".pi/skills/deploy/SKILL.md", "modified"),
        (".pi/skills/deploy/run.sh", "modified"),
    ]
    added, removed, modified, binary = changes
    assert added.diff[:2] == ("--- /dev/null", "+++ b/.pi/extensions/hook.ts") and added.added_lines == 1
    assert removed.removed_lines == 4
    assert "-Run make ship." in modified.diff and "+Run make ship --force." in modified.diff
    assert modified.diff[0] == "--- a/.pi/skills/deploy/SKILL.md"
    assert binary.diff == () and "content changed" in binary.note
    assert compare(new, new) == []


def test_snapshot_store_ignores_broken_or_foreign_files(tmp_path: Path) -> None:
    root = _project(tmp_path / "p")
    store = SnapshotStore(tmp_path / "agent")
    assert store.load(str(root)) is None
    store.path_for(str(root)).parent.mkdir(parents=True)
    store.path_for(str(root)).write_text("{not json")
    assert store.load(str(root)) is None
    store.save(take_snapshot(str(root), trust_resources(str(root))))
    loaded = store.load(str(root))
    assert loaded is not None and str(root / ".pi" / "settings.json") in loaded.files
    assert loaded.files[str(root / ".pi" / "settings.json")].text == '{"theme": "dark"}\n'
