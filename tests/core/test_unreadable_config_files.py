"""Every file the engine reads for a user or a project, met as a FIFO, a link to /dev/zero or a huge
sparse file: refused at once, named in a diagnostic, never read into memory, never rewritten."""

from __future__ import annotations

import os
import resource
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from piwork.core.context.index import load_index
from piwork.core.llm.models import ModelRegistry
from piwork.core.llm.models_file import read_providers
from piwork.core.resources.context_files import load_context_files
from piwork.core.resources.profile import load_profile
from piwork.core.resources.prompts import load_template_file
from piwork.core.resources.skills import load_skill_file
from piwork.core.resources.system_files import resolve_prompt_sources
from piwork.core.resources.trust import trust_resources
from piwork.core.resources.trust_fingerprint import FingerprintStore, compute_fingerprint
from piwork.core.resources.trust_reading import take_snapshot
from piwork.core.resources.trust_review import preview_file
from piwork.core.resources.trust_snapshot import SnapshotStore
from piwork.core.resources.trust_store import TrustStore, TrustStoreError
from piwork.core.settings import Settings


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _zero(path: Path) -> None:
    path.symlink_to("/dev/zero")


def _huge(path: Path) -> None:
    with open(path, "wb") as out:
        out.truncate(6 * 1024 * 1024 * 1024)


MAKERS: dict[str, Callable[[Path], None]] = {"fifo": _fifo, "dev-zero": _zero, "huge": _huge}
KINDS = sorted(MAKERS)
WORDS = {"fifo": "FIFO", "dev-zero": "character device", "huge": "6.0 GB"}

pytestmark = pytest.mark.timeout(20)  # a regression would block in open() or read for ever


@pytest.fixture(autouse=True)
def bounded_memory() -> Iterator[None]:
    """A regression reading /dev/zero ends in MemoryError here, not in the machine running out."""
    soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
    with open("/proc/self/statm") as handle:
        used = int(handle.read().split()[5]) * os.sysconf("SC_PAGE_SIZE")  # data + stack
    limit = used + 1024 * 1024 * 1024
    resource.setrlimit(
        resource.RLIMIT_DATA, (limit if hard == resource.RLIM_INFINITY else min(limit, hard), hard)
    )
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_DATA, (soft, hard))


def _plant(path: Path, kind: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    MAKERS[kind](path)
    return path


@pytest.mark.parametrize("kind", KINDS)
def test_settings_files_are_named_and_never_written(tmp_path: Path, kind: str) -> None:
    agent, cwd = tmp_path / "agent", tmp_path / "project"
    glob = _plant(agent / "settings.json", kind)
    proj = _plant(cwd / ".pi" / "settings.json", kind)
    settings = Settings.for_project(str(cwd), str(agent), project_trusted=True)
    problems = {p.path: p.message for p in settings.problems}
    assert WORDS[kind] in problems[str(glob)] and WORDS[kind] in problems[str(proj)]
    with pytest.raises(Exception, match="could not be read"):
        settings.set_value("theme", "dark")


@pytest.mark.parametrize("kind", KINDS)
def test_models_json_is_a_diagnostic(tmp_path: Path, kind: str) -> None:
    path = _plant(tmp_path / "models.json", kind)
    registry = ModelRegistry(tmp_path)
    assert any(WORDS[kind] in d.message and d.path == str(path) for d in registry.diagnostics)
    assert registry.models  # the built-in models are still there
    providers, problem = read_providers(path)
    assert providers == {} and problem is not None and WORDS[kind] in problem


@pytest.mark.parametrize("kind", KINDS)
def test_trust_store_answers_with_its_error(tmp_path: Path, kind: str) -> None:
    _plant(tmp_path / "trust.json", kind)
    with pytest.raises(TrustStoreError, match=WORDS[kind]):
        TrustStore(str(tmp_path)).lookup(str(tmp_path))


@pytest.mark.parametrize("kind", KINDS)
def test_fingerprint_and_snapshot_files_read_as_absent(tmp_path: Path, kind: str) -> None:
    fingerprints = FingerprintStore(tmp_path)
    _plant(fingerprints.path, kind)
    assert fingerprints.recorded(str(tmp_path)) is None
    snapshots = SnapshotStore(tmp_path)
    _plant(snapshots.path_for(str(tmp_path)), kind)
    assert snapshots.load(str(tmp_path)) is None


@pytest.mark.parametrize("kind", KINDS)
def test_a_gated_file_can_be_reviewed_fingerprinted_and_snapshotted(tmp_path: Path, kind: str) -> None:
    """A project carrying ``.pi/SYSTEM.md -> /dev/zero`` (a git repository can) is still decidable."""
    system = _plant(tmp_path / ".pi" / "SYSTEM.md", kind)
    _plant(tmp_path / ".pi" / "skills" / "s" / "SKILL.md", kind)
    resources = trust_resources(str(tmp_path))
    first = compute_fingerprint(resources)
    assert first == compute_fingerprint(resources)
    snapshot = take_snapshot(str(tmp_path), resources)
    assert snapshot.files[os.path.realpath(system)].text is None  # listed where it really is
    preview = preview_file(str(system), "system")  # only its beginning is read, whatever its size
    assert preview.text == "" and (kind == "huge" or WORDS[kind] in preview.note)


@pytest.mark.parametrize("kind", KINDS)
def test_resources_are_skipped_with_a_diagnostic(tmp_path: Path, kind: str) -> None:
    skill = _plant(tmp_path / "skills" / "s" / "SKILL.md", kind)
    loaded, diagnostics = load_skill_file(str(skill), "user")  # type: ignore[arg-type]
    assert loaded is None and WORDS[kind] in diagnostics[0].message
    prompt = _plant(tmp_path / "prompts" / "p.md", kind)
    template, problems = load_template_file(str(prompt), None)  # type: ignore[arg-type]
    assert template is None and WORDS[kind] in problems[0].message
    agent = tmp_path / "agent"
    system = _plant(tmp_path / "project" / ".pi" / "SYSTEM.md", kind)
    _plant(tmp_path / "project" / ".pi" / "APPEND_SYSTEM.md", kind)
    agent.mkdir()
    sources = resolve_prompt_sources(str(tmp_path / "project"), str(agent), True)
    assert sources.system_prompt is None and sources.append == []  # never the path as text
    assert any(str(system) in w and WORDS[kind] in w for w in sources.warnings)


def test_a_huge_context_file_is_a_diagnostic(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    agent.mkdir()
    path = _plant(tmp_path / "project" / "AGENTS.md", "huge")
    result = load_context_files(str(tmp_path / "project"), str(agent))
    assert result.files == [] and any(
        d.path == str(path) and "6.0 GB" in d.message for d in result.diagnostics
    )


@pytest.mark.parametrize("kind", KINDS)
def test_piwork_project_files_are_diagnostics(tmp_path: Path, kind: str) -> None:
    index = _plant(tmp_path / ".pi" / "context-index.json", kind)
    loaded = load_index(str(tmp_path))
    assert loaded.index is None and any(WORDS[kind] in d.message for d in loaded.diagnostics), index
    _plant(tmp_path / ".pi" / "piwork-profile.json", kind)
    profile = load_profile(str(tmp_path))
    assert profile.profile is None and any(WORDS[kind] in d.message for d in profile.diagnostics)


@pytest.mark.parametrize("kind", KINDS)
def test_project_files_read_to_infer_the_test_command_are_never_waited_on(tmp_path: Path, kind: str) -> None:
    from piwork.core.resources.profile import inferred_verify

    _plant(tmp_path / "Makefile", kind)
    _plant(tmp_path / "package.json", kind)
    (tmp_path / "go.mod").write_text("module x\n")
    assert inferred_verify(str(tmp_path)) == ["go test ./..."]
