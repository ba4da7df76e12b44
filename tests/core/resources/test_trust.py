"""Trust store format, locking, the resolution order and the safety deviations from Pi."""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path

import pytest

from piwork.core.fs.lock import LockBusyError, locked
from piwork.core.resources.trust import (
    PluginTrustAnswer,
    TrustOption,
    TrustRequest,
    TrustResolver,
    has_trust_resources,
    trust_options,
    trust_resources,
)
from piwork.core.resources.trust_fingerprint import FingerprintStore, compute_fingerprint
from piwork.core.resources.trust_store import TrustStore, TrustStoreError, TrustUpdate

from .conftest import Tree


def resolve(resolver: TrustResolver, cwd: Path, override: bool | None = None):  # type: ignore[no-untyped-def]
    return asyncio.run(resolver.resolve(str(cwd), override=override))


def test_symlinked_project_uses_the_target_key(tree: Tree) -> None:
    real = tree.mkdir("code/real")
    link = tree.root / "link"
    link.symlink_to(real)
    store = TrustStore(tree.agent)
    store.set_many([TrustUpdate(str(link), True)])
    data = json.loads(store.path.read_text())
    assert data == {str(real): True}
    assert store.lookup(str(link)).path == str(real)  # type: ignore[union-attr]


def test_dotdot_and_trailing_slash_normalize(tree: Tree) -> None:
    tree.mkdir("code/a/b")
    store = TrustStore(tree.agent)
    store.set_many([TrustUpdate(f"{tree.root}/code/a/b/../", False)])
    assert json.loads(store.path.read_text()) == {f"{tree.root}/code/a": False}


def test_written_file_is_js_sorted_two_space_with_newline_and_keeps_nulls(tree: Tree) -> None:
    store = TrustStore(tree.agent)
    store.path.write_text(json.dumps({"/z": None, "/a": True}))
    store.set_many([TrustUpdate("/～", True), TrustUpdate("/😀", False), TrustUpdate("/a", None)])
    assert store.path.read_text() == '{\n  "/z": null,\n  "/😀": false,\n  "/～": true\n}\n'


def test_nearest_ancestor_wins_and_null_is_skipped(tree: Tree) -> None:
    deep = tree.mkdir("p/q/r")
    store = TrustStore(tree.agent)
    store.path.write_text(json.dumps({str(tree.root / "p"): True, str(tree.root / "p/q"): None}))
    entry = store.lookup(str(deep))
    assert entry is not None and entry.path == str(tree.root / "p") and entry.decision is True


@pytest.mark.parametrize("content", ["{bad", "[]", '{"/x": "yes"}', ""])
def test_corrupt_store_fails_safe_and_is_never_rewritten(tree: Tree, content: str) -> None:
    project = tree.mkdir("p")
    tree.write("p/.pi/settings.json", "{}")
    store = TrustStore(tree.agent)
    store.path.write_text(content)
    state = resolve(TrustResolver(store, default_policy="always"), project)
    assert state.trusted is False and state.source == "store-error"
    assert str(store.path) in state.warnings[0]
    with pytest.raises(TrustStoreError):
        store.set_many([TrustUpdate(str(project), True)])
    assert store.path.read_text() == content


def test_backup_and_reset_moves_the_broken_file_aside(tree: Tree) -> None:
    store = TrustStore(tree.agent)
    store.path.write_text("{bad")
    backup = store.backup_and_reset()
    assert (
        backup is not None and backup.read_text() == "{bad" and backup.name.startswith("trust.json.corrupt-")
    )
    assert not store.path.exists()


def test_bare_pi_folder_does_not_need_trust(tree: Tree) -> None:
    project = tree.mkdir("p/.pi/sessions")
    assert not has_trust_resources(str(project.parent.parent))
    asked: list[TrustRequest] = []
    state = resolve(TrustResolver(TrustStore(tree.agent), ask=asked.append), tree.root / "p")
    assert state.trusted and state.source == "no-project-resources" and not asked
    assert not TrustStore(tree.agent).path.exists()  # nothing is ever saved implicitly


def test_user_agents_skills_never_counts(tree: Tree) -> None:
    tree.mkdir("home/.agents/skills/x")
    assert not has_trust_resources(str(tree.home))
    tree.mkdir("w/.agents/skills")
    assert has_trust_resources(str(tree.mkdir("w/sub")))
    kinds = {r.kind for r in trust_resources(str(tree.root / "w/sub"))}
    assert kinds == {"agents-skills"}


def test_piwork_extra_entries_count_only_at_runtime(tree: Tree) -> None:
    tree.write("p/.pi/piwork-profile.json", "{}")
    assert not has_trust_resources(str(tree.root / "p"))
    assert has_trust_resources(str(tree.root / "p"), include_piwork=True)


def test_resolution_order(tree: Tree) -> None:
    project = tree.mkdir("p")
    tree.write("p/.pi/skills/x/SKILL.md", "x")
    store = TrustStore(tree.agent)
    # one-run override beats everything and is never saved
    assert resolve(TrustResolver(store), project, override=True).source == "override"
    # plugin answers before the saved decision; remember saves it
    plugin = TrustResolver(store, plugins=[lambda cwd: PluginTrustAnswer(False, remember=True)])
    assert resolve(plugin, project).source == "plugin"
    assert store.lookup(str(project)).decision is False  # type: ignore[union-attr]

    # a failing plugin becomes a warning, the saved decision then applies
    def broken(cwd: str) -> PluginTrustAnswer:
        raise RuntimeError("boom")

    state = resolve(TrustResolver(store, plugins=[broken]), project)
    assert state.source == "saved" and not state.trusted and "boom" in state.warnings[0]
    store.set_many([TrustUpdate(str(project), None)])
    assert resolve(TrustResolver(store, default_policy="always"), project).trusted
    assert not resolve(TrustResolver(store, default_policy="never"), project).trusted
    headless = resolve(TrustResolver(store), project)
    assert headless.source == "no-ui" and not headless.trusted


def test_prompt_choices_write_exactly_their_updates(tree: Tree) -> None:
    project = tree.mkdir("a/p")
    tree.write("a/p/.pi/SYSTEM.md", "x")
    store = TrustStore(tree.agent)

    def chooser(kind: str):  # type: ignore[no-untyped-def]
        async def ask(request: TrustRequest) -> TrustOption | None:
            assert request.folder == str(project)
            assert [r.kind for r in request.resources] == ["system"]
            return next(o for o in request.options if o.kind == kind)

        return ask

    state = resolve(TrustResolver(store, ask=chooser("trust-parent")), project)
    assert state.trusted and state.source == "prompt"
    assert json.loads(store.path.read_text()) == {str(tree.root / "a"): True}
    store.path.unlink()
    assert resolve(TrustResolver(store, ask=chooser("distrust-session")), project).source == "session-only"
    assert not store.path.exists()
    assert resolve(TrustResolver(store, ask=lambda request: None), project).source == "dismissed"
    labels = [o.label for o in trust_options("/", include_session_only=True)]
    assert labels == [
        "Trust",
        "Trust (this session only)",
        "Do not trust",
        "Do not trust (this session only)",
    ]


def test_answer_is_cached_per_folder(tree: Tree) -> None:
    project = tree.mkdir("p")
    tree.write("p/.pi/prompts/x.md", "x")
    calls: list[TrustRequest] = []

    def ask(request: TrustRequest) -> TrustOption:
        calls.append(request)
        return request.options[0]

    resolver = TrustResolver(TrustStore(tree.agent), ask=ask)
    resolve(resolver, project)
    resolve(resolver, project)
    assert len(calls) == 1


def test_unresolvable_folder_is_untrusted_and_nothing_is_written(tree: Tree) -> None:
    tree.write("gone/.pi/settings.json", "{}")
    resolver = TrustResolver(TrustStore(tree.agent), ask=lambda r: r.options[0])
    missing = tree.root / "gone" / "missing"
    state = asyncio.run(resolver.resolve(str(missing)))
    assert state.source == "no-project-resources"
    assert resolver.cached(str(missing)) is None  # no canonical key, nothing cached
    assert not TrustStore(tree.agent).path.exists()


def test_lock_contention_and_stale_lock(tree: Tree) -> None:
    target = tree.root / "trust.json"
    lock = Path(f"{target}.lock")
    lock.mkdir()
    with pytest.raises(LockBusyError), locked(target, attempts=3, delay=0.001):
        pass
    old = time.time() - 60
    os.utime(lock, (old, old))
    with locked(target):
        assert lock.is_dir()
    assert not lock.exists()


def test_fingerprint_changes_when_gated_files_change(tree: Tree) -> None:
    project = tree.mkdir("p")
    tree.write("p/.pi/skills/a/SKILL.md", "one")
    store = FingerprintStore(tree.agent)
    resources = trust_resources(str(project))
    store.record(str(project), compute_fingerprint(resources))
    assert not store.changed(str(project), resources)
    tree.write("p/.pi/skills/a/SKILL.md", "two")
    assert store.changed(str(project), trust_resources(str(project)))
    tree.write("p/.pi/SYSTEM.md", "new")
    assert store.changed(str(project), trust_resources(str(project)))


def test_resources_appearing_mid_session_are_not_trusted_implicitly(tree: Tree) -> None:
    project = tree.mkdir("p")
    resolver = TrustResolver(TrustStore(tree.agent), ask=lambda r: r.options[0])
    assert resolve(resolver, project).source == "no-project-resources"
    tree.write("p/.pi/extensions/x.ts", "code")
    state = resolve(resolver, project)
    assert state.source == "new-project-resources" and not state.trusted
    assert [r.kind for r in state.resources] == ["extensions"]
    assert not TrustStore(tree.agent).path.exists()
    resolver.forget(str(project))
    assert resolve(resolver, project).source == "prompt"


def test_a_held_lock_makes_reads_fail_safe(tree: Tree) -> None:
    project = tree.mkdir("p")
    tree.write("p/.pi/settings.json", "{}")
    store = TrustStore(tree.agent)
    store.set_many([TrustUpdate(str(project), True)])
    Path(f"{store.path}.lock").mkdir()
    state = resolve(TrustResolver(store), project)
    assert not state.trusted and state.source == "store-error" and "locked" in state.warnings[0]


def test_mcp_json_needs_trust(tree: Tree) -> None:
    tree.write("p/.pi/mcp.json", '{"mcpServers": {}}')
    assert has_trust_resources(str(tree.root / "p"))
    assert [(r.path, r.kind) for r in trust_resources(str(tree.root / "p"))] == [
        (str(tree.root / "p/.pi/mcp.json"), "mcp")
    ]
    asked: list[TrustRequest] = []
    state = resolve(TrustResolver(TrustStore(tree.agent), ask=lambda r: asked.append(r)), tree.root / "p")
    assert [r.kind for r in asked[0].resources] == ["mcp"] and state.source == "dismissed"


def test_a_folder_with_nothing_to_gate_keeps_its_saved_decision(tree: Tree) -> None:
    parent = tree.mkdir("code")
    project = tree.mkdir("code/p")
    store = TrustStore(tree.agent)
    store.set_many([TrustUpdate(str(project), False)])
    resolver = TrustResolver(store)
    state = resolve(resolver, project)
    assert (state.trusted, state.source, state.saved_path, state.label) == (
        False, "saved", str(project), "untrusted"
    )  # fmt: skip
    # the saved "no" holds when resources appear later in the session
    tree.write("code/p/.pi/settings.json", "{}")
    assert resolve(resolver, project) is state
    # an ancestor's decision covers it too; a null is no decision
    store.set_many([TrustUpdate(str(project), None), TrustUpdate(str(parent), True)])
    other = tree.mkdir("code/q")
    state = resolve(TrustResolver(store), other)
    assert (state.trusted, state.source, state.saved_path) == (True, "saved", str(parent))
    store.set_many([TrustUpdate(str(parent), None)])
    state = resolve(TrustResolver(store), other)
    assert (state.trusted, state.source, state.saved_path) == (True, "no-project-resources", None)


def test_a_folder_with_nothing_to_gate_and_a_broken_store_is_untrusted(tree: Tree) -> None:
    project = tree.mkdir("p")
    (tree.agent / "trust.json").write_text("[1]")
    state = resolve(TrustResolver(TrustStore(tree.agent)), project)
    assert (state.trusted, state.source) == (False, "store-error") and "trust.json" in state.warnings[0]
    assert (tree.agent / "trust.json").read_text() == "[1]"
