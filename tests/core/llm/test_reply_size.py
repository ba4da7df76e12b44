"""A streamed reply grows in linear time and stops at a size limit: a server that sends text without end
cannot fill memory; the reply ends with an error that names the limit, keeps what fitted, and is not
retried. A data line split across many chunks is decoded whole."""

from __future__ import annotations

import asyncio
import json

import pytest

from piwork.core.llm import reply_text
from piwork.core.llm.errors import is_retryable_text
from piwork.core.llm.sse import SseDecoder
from piwork.core.llm.streaming import complete
from piwork.core.llm.types import LlmContext, StreamOptions
from tests.support.loopback_server import LoopbackServer, Text, Turn


@pytest.fixture
def loopback() -> object:
    with LoopbackServer() as srv:
        yield srv


@pytest.mark.parametrize("protocol", ["anthropic", "openai"])
def test_a_reply_past_the_size_limit_is_cut_with_a_notice(
    loopback: LoopbackServer, protocol: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(reply_text, "MAX_REPLY_CHARS", 1024 * 1024)
    pieces = ["x" * 1000] * 3000  # 3 MB of text in 3,000 deltas
    loopback.script(Turn([Text("".join(pieces), deltas=pieces)]))
    model = loopback.anthropic_model() if protocol == "anthropic" else loopback.openai_model()
    context = LlmContext("", [{"role": "user", "content": "talk", "timestamp": 0}])
    message = asyncio.run(complete(model, context, StreamOptions(api_key="k")))
    assert message["stopReason"] == "error"
    assert "The reply was cut at 1 MB of text (reply size limit)" in message["errorMessage"]
    assert message["content"][0]["text"] == "x" * (1024 * 1024)  # what fitted is kept, exactly
    assert not is_retryable_text(message["errorMessage"])


def test_a_long_data_line_in_small_chunks_is_one_event() -> None:
    payload = json.dumps({"text": "y" * 200_000})
    data = f"event: delta\ndata: {payload}\r\n\r\nevent: end\ndata: {{}}\n\n".encode()
    decoder = SseDecoder()
    events = [e for at in range(0, len(data), 7) for e in decoder.feed(data[at : at + 7])]
    events += decoder.finish()
    assert [(e.event, e.data) for e in events] == [("delta", payload), ("end", "{}")]
