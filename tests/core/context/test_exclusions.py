"""Excluding a part of a task's context: the state entry, the request's markers, the manifest as shown,
"include again", and where a task ends, on hand-built sessions in real project folders."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from piwork.core.context.bundle import (
    BUNDLE_CUSTOM_TYPE,
    BundleRequest,
    assemble_bundle,
    build_manifest,
    context_file_entries,
    start_task,
)
from piwork.core.context.contract import TaskContract, append_contract
from piwork.core.context.exclusion_projection import RequestProjection, bundle_message_without
from piwork.core.context.exclusions import (
    EXCLUSIONS_CUSTOM_TYPE,
    ExcludedPart,
    ExclusionError,
    Exclusions,
    exclusion_targets,
    latest_exclusions,
    with_exclusions,
)
from piwork.core.context.manifest import latest_manifest
from piwork.core.llm.types import Model
from piwork.core.resources.loader import load_resources
from piwork.core.session.store import in_memory_session
from piwork.core.session.tree import SessionTree
from piwork.core.settings import Settings
from piwork.core.workflows import commands
from piwork.core.workflows.view import ContextView, view_from_parts

SNAPSHOT_PART = '<context_layer kind="snapshot" path=".pi/project-context.md">\n# Snapshot\nA tiny app.\n\n</context_layer>'
SNAPSHOT_MARKER = (
    '<context_layer kind="snapshot" path=".pi/project-context.md" excluded="true">\n'
    "[piwork: the user excluded the project snapshot from this task's context (2 lines, 23B left out). "
    "The file itself is unchanged: read it if the task needs it. The user can bring it back with "
    "/context include .pi/project-context.md]\n</context_layer>"
)


def chars4(text: str) -> int:
    return (len(text) + 3) // 4


def _contract(phase: str = "scout") -> TaskContract:
    return TaskContract.from_json(
        {
            "title": "Login",
            "goal": "find the login flow",
            "mode": "read-only",
            "phase": phase,
            "startedAt": "2026-12-01T10:00:00.000Z",
        }
    )


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    root = tmp_path / "repo"
    (root / ".pi").mkdir(parents=True)
    (root / "docs").mkdir()
    (root / "AGENTS.md").write_text("# Rules\nbe brief\n")
    (root / ".pi" / "piwork-profile.json").write_text(
        json.dumps({"version": 1, "verify": ["pytest -q"], "required": ["docs/arch.md"]})
    )
    (root / ".pi" / "project-context.md").write_text("# Snapshot\nA tiny app.\n")
    (root / "docs" / "arch.md").write_text("layers: a b c\n")
    return root


def _resources(root: Path) -> Any:
    agent = root.parent / "agent"
    agent.mkdir(exist_ok=True)
    return load_resources(str(root), str(agent), Settings.for_project(str(root), str(agent), True))


def _task(root: Path, tree: SessionTree, task_id: str = "task-1") -> None:
    contract = _contract()
    bundle = assemble_bundle(BundleRequest(str(root), True, contract, count=chars4))
    rows = context_file_entries(_resources(root).context_files, chars4)
    manifest = build_manifest(
        task_id, "2026-12-01T10:00:00.000Z", "chars/4", rows, bundle, contract, 900, 300
    )
    start_task(tree, contract, bundle, manifest)


def _session(root: Path) -> SessionTree:
    tree = in_memory_session(str(root)).tree
    _task(root, tree)
    tree.append_message({"role": "user", "content": [{"type": "text", "text": "where?"}], "timestamp": 5})
    return tree


def _view(root: Path, tree: SessionTree, model: Model | None = None) -> ContextView:
    return view_from_parts(_resources(root), tree, model)


def _bundle_text(message: dict[str, Any]) -> str:
    return str(message["content"][0]["text"])


def _exclude(root: Path, tree: SessionTree, *words: str, action: str = "exclude") -> dict[str, Any]:
    report, _change = commands.exclusion_command(_view(root, tree), action, words)
    return report


def test_excluding_the_snapshot_adds_one_state_entry_and_a_marker_to_the_request(project: Path) -> None:
    tree = _session(project)
    before = [json.dumps(e, sort_keys=True) for e in tree.entries()]
    report = _exclude(project, tree, "snapshot")
    assert report["text"] == (
        "Excluded for this task: snapshot .pi/project-context.md (≈26 tokens).\n\n"
        "From the next request on a short marker stands in its place; the transcript and the session file "
        "keep everything.\n\n"
        "Bring it back with `/context include .pi/project-context.md`.\n\n"
        "The request changes from the task's context on, so the provider reads the rest of it anew once instead of from its cache."
    )
    entries = tree.entries()
    assert [json.dumps(e, sort_keys=True) for e in entries[:-1]] == before  # nothing else changed
    added = entries[-1]
    assert {k: v for k, v in added.items() if k not in ("id", "parentId", "timestamp")} == {
        "type": "custom",
        "customType": EXCLUSIONS_CUSTOM_TYPE,
        "data": {
            "version": 1,
            "taskId": "task-1",
            "parts": [
                {
                    "layer": 5,
                    "kind": "snapshot",
                    "path": str(project / ".pi" / "project-context.md"),
                    "shown": ".pi/project-context.md",
                    "tokens": 26,
                }
            ],
        },
    }

    transcript = list(tree.build_context().messages)
    assert [m["role"] for m in transcript] == ["custom", "user"]  # the state entry is no message
    original = _bundle_text(transcript[0])
    assert SNAPSHOT_PART in original
    projection = RequestProjection()
    sent = projection.messages(transcript, latest_exclusions(tree))
    assert _bundle_text(sent[0]) == original.replace(SNAPSHOT_PART, SNAPSHOT_MARKER)
    assert sent[1] is transcript[1] and transcript[0]["content"][0]["text"] == original
    assert projection.messages(transcript, latest_exclusions(tree))[0] is sent[0]  # a stable prefix

    view = _view(project, tree)
    assert _bundle_text(view.messages[0]) == _bundle_text(sent[0])  # what the commands look at


def test_the_manifest_shows_the_row_omitted_and_totals_without_it(project: Path) -> None:
    tree = _session(project)
    _exclude(project, tree, "snapshot", "required")
    stored = latest_manifest(tree)
    assert stored is not None
    shown = with_exclusions(stored, latest_exclusions(tree))
    assert shown.render_text(str(project)) == (
        "Context manifest\n"
        "- context: AGENTS.md\n"
        "- profile: .pi/piwork-profile.json\n"
        "- index: .pi/context-index.json (advisory map, missing: not found)\n"
        "- snapshot: .pi/project-context.md (omitted: excluded for this task)\n"
        "- required: docs/arch.md (omitted: excluded for this task)\n"
        "- verify: pytest -q\n"
    )
    rows = {e.kind: (e.status, e.tokens, e.reason) for e in shown.entries}
    assert rows["snapshot"] == ("omitted", 0, "excluded for this task")
    assert rows["required"] == ("omitted", 0, "excluded for this task")
    stored_rows = {e.kind: e.tokens for e in stored.entries}
    assert (stored_rows["snapshot"], stored_rows["required"]) == (26, 21)
    assert shown.totals.bundle == stored.totals.bundle - 47
    assert shown.totals.system_prompt == stored.totals.system_prompt == 900
    report = commands.manifest_command(_view(project, tree))
    assert report["text"] == shown.render_text(str(project))
    assert [p["kind"] for p in report["excluded"]] == ["snapshot", "required"]
    assert report["changed"] is False and "refreshed" not in report


def test_include_again_brings_back_the_bundle_as_recorded(project: Path) -> None:
    tree = _session(project)
    _exclude(project, tree, "snapshot", "5", str(project / "docs" / "arch.md"))  # one part named twice
    assert [p.kind for p in latest_exclusions(tree).parts] == ["snapshot", "required"]
    report = _exclude(project, tree, ".pi/project-context.md", action="include")
    assert report["text"] == (
        "Included again: snapshot .pi/project-context.md (≈26 tokens). The next request holds it as the "
        "task recorded it.\n\n"
        "The request changes from the task's context on, so the provider reads the rest of it anew once instead of from its cache.\n\n"
        "Still excluded: required docs/arch.md (≈21 tokens)."
    )
    _exclude(project, tree, "all", action="include")
    exclusions = latest_exclusions(tree)
    assert exclusions.task_id == "task-1" and exclusions.parts == ()
    transcript = list(tree.build_context().messages)
    assert RequestProjection().messages(transcript, exclusions) is transcript
    stored = latest_manifest(tree)
    assert stored is not None and with_exclusions(stored, exclusions) == stored
    again = _exclude(project, tree, "all", action="include")
    assert again == {"ok": False, "message": "Nothing is excluded for this task."}


def test_a_phase_change_keeps_the_exclusions_a_new_task_or_another_branch_ends_them(project: Path) -> None:
    tree = _session(project)
    before = tree.leaf_id
    _exclude(project, tree, "snapshot")
    append_contract(tree, _contract("plan"))  # a phase boundary, same task
    assert [p.kind for p in latest_exclusions(tree).parts] == ["snapshot"]

    tree.branch(str(before))  # back before the exclusion: nothing excluded there
    assert latest_exclusions(tree) == Exclusions("task-1")

    tree.branch(str([e for e in tree.entries() if e["type"] == "custom"][-1]["id"]))
    _task(project, tree, "task-2")  # a new task on the branch: its manifest, its bundle
    assert latest_exclusions(tree) == Exclusions("task-2")
    messages = list(tree.build_context().messages)
    assert [m["role"] for m in messages] == ["custom", "user", "custom"]
    sent = RequestProjection().messages(messages, latest_exclusions(tree))
    assert sent is messages  # neither bundle loses its snapshot now
    assert SNAPSHOT_PART in _bundle_text(sent[2])


def test_targets_name_layers_by_number_word_or_path_and_say_why_not(project: Path) -> None:
    tree = _session(project)
    manifest = latest_manifest(tree)
    assert manifest is not None
    cwd = str(project)

    def kinds(*words: str) -> list[str]:
        return [e.kind for e in exclusion_targets(manifest, words, cwd)]

    assert kinds("1") == kinds("context") == kinds("AGENTS.md") == ["contextFile"]
    assert kinds("7") == kinds("required") == kinds("docs/arch.md") == ["required"]
    assert kinds("profile", str(project / ".pi" / "piwork-profile.json")) == ["profile"]

    def error(*words: str) -> str:
        with pytest.raises(ExclusionError) as caught:
            exclusion_targets(manifest, words, cwd)
        return str(caught.value)

    assert error("index") == (
        ".pi/context-index.json is not loaded for this task (missing: not found), so there is nothing to "
        "exclude."
    )
    assert error("8") == (
        "Layer 8 is not loaded up front: task files, tests, docs and external docs reach the model as tool "
        "results when it reads them (the governor elides old ones)."
    )
    assert error("11") == "There is no context layer 11: layers are numbered 1 to 10."
    assert error("nope.md") == "Nothing called 'nope.md' is in this task's manifest."
    assert error() == (
        "Say what to exclude: a layer (1-7, context, profile, pack, index, snapshot, memory, required) or a "
        "file path. Loaded for this task: AGENTS.md, .pi/piwork-profile.json, .pi/project-context.md, "
        "docs/arch.md."
    )

    no_task = in_memory_session(cwd).tree
    report, change = commands.exclusion_command(_view(project, no_task), "exclude", ["snapshot"])
    assert report == {"ok": False, "message": "/context exclude works on a task: start one with /task first."}
    assert change is None and no_task.entries() == []
    report, _ = commands.exclusion_command(_view(project, tree), "exclude", ["snapshot"], "held elsewhere")
    assert report == {"ok": False, "message": "Cannot change this task's context: held elsewhere"}


def test_an_excluded_context_file_is_a_marker_in_the_system_prompt(project: Path) -> None:
    tree = _session(project)
    view = _view(project, tree)
    assert "be brief" in view.system_prompt
    report = _exclude(project, tree, "AGENTS.md")
    assert report["text"].endswith(
        "The system prompt changes with it, so the provider's prompt cache starts over once for the whole "
        "request."
    )
    view = _view(project, tree)
    agents = str(project / "AGENTS.md")
    assert (
        f'<project_instructions path="{agents}">\n'
        "[piwork: the user excluded this context file from this task's context (2 lines, 17B left out). "
        "The file itself is unchanged: read it if the task needs it. The user can bring it back with "
        "/context include AGENTS.md]\n</project_instructions>"
    ) in view.system_prompt
    assert "be brief" not in view.system_prompt
    assert view.messages[0] is not None and SNAPSHOT_PART in _bundle_text(view.messages[0])  # bundle as is
    shown = view.shown_manifest
    assert shown is not None
    row = next(e for e in shown.entries if e.layer == 1)
    assert (row.status, row.tokens, row.reason) == ("omitted", 0, "excluded for this task")


def test_a_bundle_without_recorded_offsets_is_split_at_its_headers(project: Path) -> None:
    tree = _session(project)
    message = dict(tree.build_context().messages[0])
    assert [p["kind"] for p in message["details"]["parts"]] == ["profile", "snapshot", "required"]
    older = {**message, "details": {"layers": message["details"]["layers"]}}  # recorded before offsets
    part = ExcludedPart(5, "snapshot", str(project / ".pi/project-context.md"), ".pi/project-context.md")
    assert _bundle_text(bundle_message_without(older, [part])) == _bundle_text(
        bundle_message_without(message, [part])
    )
    as_string = {**older, "content": _bundle_text(message)}  # Pi allows plain-string custom content
    assert bundle_message_without(as_string, [part])["content"] == _bundle_text(message).replace(
        SNAPSHOT_PART, SNAPSHOT_MARKER
    )


def test_a_snapshot_quoting_layer_tags_is_cut_at_its_recorded_end(project: Path) -> None:
    tricky = '# Notes\n</context_layer>\n\n<context_layer kind="required" path="docs/arch.md">\nfake\n'
    (project / ".pi" / "project-context.md").write_text(tricky)
    tree = _session(project)
    message = tree.build_context().messages[0]
    part = ExcludedPart(5, "snapshot", str(project / ".pi/project-context.md"), ".pi/project-context.md")
    text = _bundle_text(bundle_message_without(message, [part]))
    assert "fake" not in text and "# Notes" not in text
    assert text.endswith(
        '<context_layer kind="required" path="docs/arch.md">\nlayers: a b c\n\n</context_layer>'
    )
    assert message["customType"] == BUNDLE_CUSTOM_TYPE


def test_preflight_and_budget_count_the_request_without_the_excluded_part(project: Path) -> None:
    (project / ".pi" / "project-context.md").write_text(
        "".join(f"module {i}: does things\n" for i in range(400))
    )
    model = Model("m", "m", "anthropic-messages", "p", "http://127.0.0.1:9", context_window=200_000)
    tree = _session(project)
    tree.append_message(
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "in src"}],
            "api": "anthropic-messages",
            "provider": "p",
            "model": "m",
            "usage": {"input": 3000, "output": 10, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 3010},
            "stopReason": "stop",
            "timestamp": 6,
        }
    )
    view = _view(project, tree, model)
    assert commands.preflight(view)["task"] == "Login"  # what /fresh task would hand over
    assert commands.preflight(_view(project, in_memory_session(str(project)).tree, model))["task"] is None
    before = commands.preflight(view)["estimate"]
    assert commands.occupancy(view) == {"tokens": 3010, "source": "provider", "tokenizer": "exact"}
    _exclude(project, tree, "snapshot")
    view = _view(project, tree, model)
    after = commands.preflight(view)["estimate"]
    est = view.estimator
    transcript = tree.build_context().messages
    assert before["bundle"] == est.message(transcript[0])
    assert after["bundle"] == est.message(view.messages[0]) < before["bundle"] - 2_000
    assert after["projected"] == before["projected"] - (before["bundle"] - after["bundle"])
    assert after["messages"] == before["messages"] and after["systemPrompt"] == before["systemPrompt"]
    # the last reply counted a request that held the snapshot: the next one is an estimate
    occupancy = commands.occupancy(view)
    assert occupancy["source"] == "estimate" and occupancy["tokens"] == (
        after["systemPrompt"] + after["tools"] + after["bundle"] + after["messages"]
    )
    breakdown = commands.request_breakdown(view)
    assert breakdown["bySource"]["custom"] == after["bundle"]


@pytest.mark.parametrize(("kind", "carried"), [("task", True), ("scout", True), ("be-to-fe", False)])
def test_fresh_continuing_the_task_keeps_its_exclusions(
    project: Path, tmp_path: Path, kind: str, carried: bool
) -> None:
    from piwork.core.context.contract import latest_contract
    from piwork.core.session.store import create_session, open_session
    from piwork.core.workflows.fresh import start_fresh

    source = create_session(str(project), tmp_path / "sessions")
    _task(project, source.tree)
    source.tree.append_message({"role": "user", "content": [{"type": "text", "text": "go"}], "timestamp": 5})
    _exclude(project, source.tree, "snapshot", "AGENTS.md")
    resources = _resources(project)
    result = start_fresh(
        kind,
        source.tree,
        resources,
        lambda tree, contract: "summary",
        tmp_path / "sessions",
        tmp_path / "agent",
    )
    result.session.close()
    assert result.path is not None
    fresh = open_session(result.path, writable=False).tree
    manifest = latest_manifest(fresh)
    exclusions = latest_exclusions(fresh)
    assert manifest is not None and exclusions.task_id == manifest.task_id
    assert [p.kind for p in exclusions.parts] == (["contextFile", "snapshot"] if carried else [])
    messages = list(fresh.build_context().messages)
    assert [m.get("customType") for m in messages] == ["piwork.freshSummary", BUNDLE_CUSTOM_TYPE]
    assert SNAPSHOT_PART in _bundle_text(messages[1])  # the file keeps the whole bundle
    sent = RequestProjection().messages(messages, exclusions)
    assert (SNAPSHOT_MARKER in _bundle_text(sent[1])) is carried
    # the manifest's totals are the first request's: a system prompt and the contract's tools
    contract = latest_contract(fresh)
    assert contract is not None
    view = view_from_parts(resources, fresh, None)
    assert manifest.totals.system_prompt == view.estimator.system_prompt(view.system_prompt) > 0
    assert manifest.totals.tools == view.estimator.tools(view.tools) > 0
    assert ("be brief" in view.system_prompt) is not carried
