"""``/task`` words in any order, verify inferred at onboarding, two tasks in a row, the read-only prompt."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from piwork.core.context.bundle import BUNDLE_CUSTOM_TYPE
from piwork.core.context.contract import ContractError
from piwork.core.resources.profile import inferred_verify
from piwork.core.resources.system_prompt import SystemPromptInput, build_system_prompt
from piwork.core.workflows.runtime import create_runtime
from piwork.core.workflows.tasks import TaskWords, begin_task, contract_from_text, parse_task
from tests.support.loopback_server import LoopbackServer, Text, Turn
from tests.support.runtime_options import runtime_options


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("fix the totals", TaskWords("fix the totals")),
        ("read-only where does it start", TaskWords("where does it start", "read-only")),
        ("where does it start read-only", TaskWords("where does it start", "read-only")),
        (
            "unfamiliar add tax verify: pytest -q tests/core accept: totals include VAT accept: tests pass "
            "phase: plan",
            TaskWords(
                "add tax", None, True, "pytest -q tests/core", ("totals include VAT", "tests pass"), "plan"
            ),
        ),
        (
            "phase: scout source-write map the API unfamiliar",
            TaskWords("map the API", "source-write", True, None, (), "scout"),
        ),
        (
            "verify: make check mode: read-only explain the build",
            TaskWords("explain the build", "read-only", False, "make check"),
        ),
    ],
)
def test_task_words_in_any_order(text: str, expected: TaskWords) -> None:
    assert parse_task(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("fix it phase: later", "phase: use one of scout, plan, implement, verify (got 'later')"),
        ("fix it verify:", "verify: needs a value"),
        ("fix it mode: sideways", "mode: use read-only or source-write (got 'sideways')"),
        ("verify: pytest", "Say what the task is: /task"),
    ],
)
def test_bad_task_words_say_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(ContractError) as err:
        contract_from_text(text)
    assert str(err.value).startswith(message)


def test_the_contract_takes_the_given_verify_over_the_profiles() -> None:
    given = contract_from_text("add tax verify: pytest -q accept: VAT", ["make test"])
    assert (given.verify, given.acceptance, given.phase, given.mode) == (
        "pytest -q",
        ("VAT",),
        "implement",
        "source-write",
    )
    assert contract_from_text("add tax", ["make test"]).verify == "make test"
    assert contract_from_text("read-only look", ["make test"]).verify is None
    unfamiliar = contract_from_text("unfamiliar add tax")
    assert unfamiliar.to_json()["unfamiliar"] is True


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ({"Makefile": "build:\n\tcc x.c\ntest: build\n\t./run\n"}, ["make test"]),
        ({"Makefile": "build:\n\tcc x.c\n"}, []),
        ({"package.json": json.dumps({"scripts": {"test": "vitest run"}})}, ["npm test"]),
        ({"package.json": json.dumps({"scripts": {"test": "vitest"}}), "pnpm-lock.yaml": ""}, ["pnpm test"]),
        (
            {"package.json": json.dumps({"scripts": {"test": 'echo "Error: no test specified" && exit 1'}})},
            [],
        ),
        ({"package.json": "{not json"}, []),
        ({"pyproject.toml": "[tool.pytest.ini_options]\naddopts = '-q'\n"}, ["pytest -q"]),
        ({"setup.py": "", "tests/test_a.py": ""}, ["pytest -q"]),
        ({"Cargo.toml": "[package]\nname = 'x'\n"}, ["cargo test"]),
        ({"go.mod": "module x\n"}, ["go test ./..."]),
        ({"README.md": "hello"}, []),
    ],
)
def test_verify_is_inferred_from_the_project(
    tmp_path: Path, files: dict[str, str], expected: list[str]
) -> None:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    assert inferred_verify(str(tmp_path)) == expected


def test_a_read_only_prompt_does_not_promise_changes() -> None:
    read_only = build_system_prompt(SystemPromptInput("/p", ("read", "grep", "find", "ls")))
    assert "change or create files" not in read_only
    assert "you can inspect files but not change them" in read_only.splitlines()[0]
    full = build_system_prompt(SystemPromptInput("/p"))
    assert "change or create files" in full.splitlines()[0]


@pytest.mark.anyio
async def test_two_tasks_in_a_row_replace_the_bundle_instead_of_stacking(
    server: LoopbackServer, tmp_path: Path, task_project: Path
) -> None:
    runtime = await create_runtime(runtime_options(tmp_path, server, trust_override=True))
    session, tree = runtime.session, runtime.session.tree
    begin_task(session, runtime.resources, contract_from_text("read-only first idea"))
    begin_task(session, runtime.resources, contract_from_text("read-only second idea"))
    bundles = [m for m in session.messages if m.get("customType") == BUNDLE_CUSTOM_TYPE]
    assert len(bundles) == 1 and "second idea" in bundles[0]["content"][0]["text"]
    server.script(Turn([Text("ok")]), Turn([Text("ok again")]))
    await session.prompt("go")
    sent = [m for m in server.requests[0].body["messages"] if "task_contract" in json.dumps(m)]
    assert len(sent) == 1 and "second idea" in json.dumps(sent[0]) and "first idea" not in json.dumps(sent[0])
    # once a task was prompted, a new one follows it on the same branch (both stay in the transcript)
    begin_task(session, runtime.resources, contract_from_text("read-only third idea"))
    await session.prompt("go on")
    path_bundles = [
        r
        for r in tree.path()
        if r.type == "custom_message" and tree.body(r).get("customType") == BUNDLE_CUSTOM_TYPE
    ]
    assert len(path_bundles) == 2
    runtime.store.close()


@pytest.mark.anyio
async def test_editing_the_contract_records_it_once_and_applies_its_rules(
    server: LoopbackServer, tmp_path: Path, task_project: Path
) -> None:
    from piwork.core.context.contract import latest_contract
    from piwork.core.workflows.tasks import edit_contract

    runtime = await create_runtime(runtime_options(tmp_path, server, trust_override=True))
    session = runtime.session
    started = begin_task(session, runtime.resources, contract_from_text("add tax verify: echo verified"))
    assert "edit" in session.tool_names()
    same = edit_contract(session, started.contract, goal="add tax", verify="echo verified")
    assert same is started.contract  # nothing changed: nothing written
    changed = edit_contract(session, started.contract, verify="", acceptance=[" VAT ", ""], phase="plan")
    assert (changed.verify, changed.acceptance, changed.phase) == (None, ("VAT",), "plan")
    assert latest_contract(session.tree) == changed
    assert "edit" not in session.tool_names()  # no verify command: no writing tools
    with pytest.raises(ContractError):
        edit_contract(session, changed, goal="  ")
    runtime.store.close()
