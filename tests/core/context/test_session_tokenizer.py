"""The governor counts with the model's offline tokenizer, loaded off the event loop, and follows the model."""

from __future__ import annotations

import dataclasses
import threading
from pathlib import Path
from typing import Any

import pytest

from piwork.core.agent.events import OccupancyEvent
from piwork.core.context.estimate import TokenEstimator
from piwork.core.llm.tokens import TokenCounter, TokenizerInfo, Tokenizers
from piwork.core.workflows.runtime import create_runtime
from tests.support.loopback_server import LoopbackServer, Text, Turn
from tests.support.runtime_options import runtime_options

pytestmark = pytest.mark.anyio


async def test_runtime_loads_only_the_models_tokenizer_and_follows_a_model_change(
    server: LoopbackServer, tmp_path: Path
) -> None:
    tokenizers = Tokenizers(tmp_path / "agent", env={})
    runtime = await create_runtime(runtime_options(tmp_path, server, tokenizers=tokenizers))
    session = runtime.session
    assert tokenizers.available == ["cl100k_base"]  # only what this model needs was built
    samples: list[Any] = []
    session.subscribe(lambda e: samples.append(e.sample) if isinstance(e, OccupancyEvent) else None)
    server.script(Turn([Text("one")]), Turn([Text("two")]))
    await session.prompt("hello")
    estimates = [s for s in samples if s.source == "estimate"]
    assert [s.tokenizer for s in estimates] == ["≈ cl100k_base"]

    await tokenizers.load_async()  # the window loads every encoding for its views
    assert session.model is not None
    session.set_model(dataclasses.replace(session.model, id="gpt-4o"))
    await session.prompt("again")
    estimates = [s for s in samples if s.source == "estimate"]
    assert estimates[-1].tokenizer == "o200k_base"
    ray = session.governance.xray()  # the request as sent, then the reply
    assert ray.tokenizer == "o200k_base"
    assert ray.total - ray.parts[-1].tokens == estimates[-1].tokens
    runtime.store.close()


async def test_a_given_counter_wins_and_none_means_chars4(server: LoopbackServer, tmp_path: Path) -> None:
    runtime = await create_runtime(runtime_options(tmp_path, server))
    assert runtime.session.governance.governor.estimator.tokenizer == "≈ chars/4"
    runtime.store.close()


class ThreadRecordingCounter(TokenCounter):
    """The real chars/4 counter, remembering which thread counted each message."""

    def __init__(self) -> None:
        super().__init__(None, TokenizerInfo(None, True))
        self.threads: list[int] = []

    def count_message(self, message: Any) -> int:
        self.threads.append(threading.get_ident())
        return super().count_message(message)


async def test_messages_not_counted_yet_are_counted_off_the_event_loop(
    server: LoopbackServer, tmp_path: Path
) -> None:
    runtime = await create_runtime(runtime_options(tmp_path, server))
    session = runtime.session
    server.script(Turn([Text("one")]), Turn([Text("two")]))
    await session.prompt("hello")
    transcript = len(session.messages)
    # As a session opened moments ago: none of its messages counted when the next prompt goes out.
    counter = ThreadRecordingCounter()
    session.governance.governor.estimator = TokenEstimator(counter)
    await session.prompt("again")
    request = transcript + 1  # the transcript and the new prompt, each counted once for the decision
    assert len(counter.threads) >= request
    assert threading.get_ident() not in counter.threads[:request]
    runtime.store.close()
