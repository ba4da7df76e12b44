"""Provider streaming throughput: 20,000 streamed tokens per protocol.

Two figures per protocol: the whole path from the loopback server (HTTP, chunked transfer, SSE decoding,
event parsing, live message building; the server runs in a thread of the same process, so it competes
for the GIL and the figure is a floor) and decode+parse alone over the same bytes held in memory.
Measured on the 2-core dev machine: ~30,000 tokens/s decode+parse, ~4,000 tokens/s end to end (the
thread-hosted server alone needs ~1.5 s to write 20,000 events). Target: well above the fastest real model stream (~200 tokens/s), i.e. streaming never lags a model.
Prints one JSON line.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run as a script from anywhere

from piwork.core.llm.anthropic import AnthropicParser
from piwork.core.llm.openai import OpenAIParser
from piwork.core.llm.sse import SseDecoder
from piwork.core.llm.streaming import complete
from piwork.core.llm.types import LlmContext, Model, StreamOptions
from tests.support.loopback_server import (
    LoopbackServer,
    Text,
    ToolCall,
    Turn,
    anthropic_events,
    openai_events,
)

TOKENS = 20_000


def _turn() -> Turn:
    words = [f"w{i % 97} " for i in range(TOKENS - 100)]
    fragments = ['{"paths": [', *(f'"src/module_{i}.py", ' for i in range(50)), '"end"]}']
    return Turn([Text("".join(words), deltas=words), ToolCall("read", {}, id="t1", fragments=fragments)])


def _wire(protocol: str, turn: Turn) -> bytes:
    frames = []
    events = anthropic_events(turn, "m", 1) if protocol == "anthropic" else openai_events(turn, "m", 1)
    for name, data in events:
        text = data if isinstance(data, str) else json.dumps(data)
        frames.append(f"event: {name}\ndata: {text}\n\n" if protocol == "anthropic" else f"data: {text}\n\n")
    return "".join(frames).encode()


def _decode_parse(protocol: str, model: Model, raw: bytes) -> float:
    started = time.perf_counter()
    parser = AnthropicParser(model) if protocol == "anthropic" else OpenAIParser(model)
    decoder = SseDecoder()
    for offset in range(0, len(raw), 512):  # network-sized reads
        for event in decoder.feed(raw[offset : offset + 512]):
            parser.feed(event)
    for event in decoder.finish():
        parser.feed(event)
    parser.finish()
    return time.perf_counter() - started


async def _loopback(server: LoopbackServer, model: Model, turn: Turn) -> tuple[float, str]:
    server.script(turn)
    context = LlmContext("bench", [{"role": "user", "content": "go", "timestamp": 1}])
    started = time.perf_counter()
    message = await complete(model, context, StreamOptions(api_key="bench"))
    return time.perf_counter() - started, str(message["stopReason"])


def _big_tool_call(protocol: str, model: Model) -> float:
    """A write call with 200 kB of content in 5,000 fragments: the live preview must stay linear."""
    content = json.dumps({"path": "big.py", "content": "value = compute(1, 2, 3)\n" * 8000})
    fragments = [content[i : i + 40] for i in range(0, len(content), 40)]
    turn = Turn([ToolCall("write", {}, id="w1", fragments=fragments)])
    return _decode_parse(protocol, model, _wire(protocol, turn))


def main() -> None:
    turn = _turn()
    figures: dict[str, object] = {"tokens": TOKENS}
    with LoopbackServer() as server:
        for protocol, model in (("anthropic", server.anthropic_model()), ("openai", server.openai_model())):
            raw = _wire(protocol, turn)
            parse_s = min(_decode_parse(protocol, model, raw) for _ in range(3))
            asyncio.run(_loopback(server, model, Turn([Text("warm up")])))
            loop_s, stop = asyncio.run(_loopback(server, model, turn))
            figures[f"{protocol}_wire_bytes"] = len(raw)
            figures[f"{protocol}_decode_parse_s"] = round(parse_s, 4)
            figures[f"{protocol}_decode_parse_tokens_per_s"] = round(TOKENS / parse_s)
            figures[f"{protocol}_loopback_s"] = round(loop_s, 4)
            figures[f"{protocol}_loopback_tokens_per_s"] = round(TOKENS / loop_s)
            figures[f"{protocol}_stop"] = stop
            figures[f"{protocol}_200kB_tool_call_parse_s"] = round(_big_tool_call(protocol, model), 4)
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
