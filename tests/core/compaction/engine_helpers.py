"""Real sessions on disk and summarizers that talk to the loopback provider over HTTP."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from piwork.core.compaction.summarize import RetryPolicy, Summarizer, SummaryRetry
from piwork.core.llm.streaming import complete
from piwork.core.session.store import Session, create_session
from tests.support.loopback_server import LoopbackServer

from .builders import assistant, call, result, user


def summarizer(
    loopback: LoopbackServer, retries: list[SummaryRetry] | None = None, **model_overrides: Any
) -> Summarizer:
    async def no_wait(seconds: float) -> None:
        return None

    return Summarizer(
        model=loopback.anthropic_model(**model_overrides),
        complete=complete,
        api_key="test-key",
        thinking_level="off",
        retry=RetryPolicy(enabled=True, max_retries=2, base_delay_ms=10),
        on_retry=retries.append if retries is not None else None,
        sleep=no_wait,
    )


def conversation_session(tmp_path: Path, turns: int = 4, size: int = 800) -> Session:
    """A persisted session: ``turns`` × (user, assistant with a read call, tool result, assistant)."""
    session = create_session(str(tmp_path), tmp_path / "sessions")
    tree = session.tree
    for i in range(turns):
        tree.append_message(user(f"question {i} " + "q" * size, ts=100 * i))
        tree.append_message(assistant("", call("read", f"c{i}", path=f"src/file{i}.py"), ts=100 * i + 1))
        tree.append_message(result("r" * size, f"c{i}", ts=100 * i + 2))
        tree.append_message(assistant(f"answer {i} " + "a" * size, ts=100 * i + 3))
    assert session.path is not None and session.path.exists()
    return session


def request_text(request: Any) -> str:
    """The single user message text of a recorded summary request (Anthropic wire format)."""
    messages = request.body["messages"]
    assert len(messages) == 1 and messages[0]["role"] == "user"
    content = messages[0]["content"]
    return content if isinstance(content, str) else "".join(b["text"] for b in content if b["type"] == "text")
