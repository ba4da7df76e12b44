"""The X-ray of a running session: its system prompt part by part, exactly as the request sends it."""

from __future__ import annotations

from pathlib import Path

import pytest

from piwork.core.llm.tokens import Tokenizers
from piwork.core.llm.types import LlmContext, ToolSpec
from piwork.core.messages import convert_to_llm
from piwork.core.workflows.runtime import create_runtime
from piwork.core.workflows.view import view_from_session
from tests.support.loopback_server import LoopbackServer, Text, ToolCall, Turn
from tests.support.runtime_options import runtime_options

pytestmark = pytest.mark.anyio


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("print('hi')\n" * 20)
    (tmp_path / "AGENTS.md").write_text("Parent rules: keep it short.\n")
    (root / "AGENTS.md").write_text('Project rules: run "pytest" before you say done.\n' * 3)
    skill = tmp_path / "agent" / "skills" / "greet"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: greet\ndescription: Say hello nicely.\n---\nSay hello.\n")
    (tmp_path / "home").mkdir()
    return root


async def test_session_xray_splits_the_sent_system_prompt_and_adds_up(
    server: LoopbackServer, tmp_path: Path, project: Path
) -> None:
    tokenizers = Tokenizers(tmp_path / "agent", env={})
    await tokenizers.load_async()
    runtime = await create_runtime(
        runtime_options(tmp_path, server, trust_override=True, token_counter=tokenizers.counter_for("gpt-4"))
    )
    session = runtime.session
    server.script(Turn([ToolCall("read", {"path": "src/app.py"})]), Turn([Text("Read it.")]))
    await session.prompt("What does app.py print?")

    parts = session.system_prompt_parts()
    sent = "".join(block["text"] for block in server.requests[-1].body["system"])
    assert "".join(p.text for p in parts) == session.system_prompt() == sent
    assert {p.name for p in parts} >= {"role", "tools", "rules", "project_context", "skills", "cwd"}

    ray = session.governance.xray()
    counter = tokenizers.counter_for("gpt-4")
    assert ray.tokenizer == "cl100k_base"
    files = [p for p in ray.parts if p.kind == "context_file"]
    assert [p.ref for p in files] == [str(tmp_path / "AGENTS.md"), str(project / "AGENTS.md")]
    assert all(p.tokens > 0 for p in files)
    assert [p.label for p in ray.parts if p.kind == "skills"] == ["skills index"]
    prompt_tokens = sum(p.tokens for p in ray.parts if p.kind in ("system", "context_file", "skills"))
    assert prompt_tokens == counter.count(sent)
    names = session.tool_names()
    tools = [ToolSpec(s.name, s.description, s.parameters) for s in session.registry.specs(names)]
    whole = counter.count_context(LlmContext(sent, convert_to_llm(session.messages), tools))
    assert ray.total == sum(p.tokens for p in ray.parts) == whole
    assert [p.kind for p in ray.parts if p.group is not None] == [
        "user",
        "assistant",
        "tool_result",
        "assistant",
    ]

    view = view_from_session(session, runtime.resources)
    assert view.system_prompt == sent and view.tokenizer == ray.tokenizer
    runtime.store.close()
