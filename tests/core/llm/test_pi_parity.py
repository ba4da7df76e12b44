"""Parity with the reference implementation's provider layer (skipped when it is not installed).

The same scripted stream from the loopback server is read by the reference (Node) and by piwork, and
the final assistant messages must agree on content, stop reason and usage; for the same context both
must send the same request body, apart from the deliberate differences listed in ``_DELIBERATE``.
Located through ``PI_ORACLE_DIR`` (default ``/tmp/pi-oracle``).
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import subprocess
from typing import Any

import pytest

from piwork.core.llm.anthropic_request import IMAGE_ONLY_PLACEHOLDER
from piwork.core.llm.normalize import MISSING_RESULT_TEXT, TOOL_IMAGE_PLACEHOLDER, USER_IMAGE_PLACEHOLDER
from piwork.core.llm.openai_request import (
    BRIDGE_AFTER_TOOL_RESULTS,
    EMPTY_TOOL_RESULT,
    TOOL_IMAGE_ONLY_RESULT,
    TOOL_IMAGES_INTRO,
)
from piwork.core.llm.streaming import complete
from piwork.core.llm.thinking import resolve_level
from piwork.core.llm.types import LlmContext, Model, ModelCost, StreamOptions, ToolSpec
from tests.support import LoopbackServer, Text, Thinking, ToolCall, Turn, Usage
from tests.support.reference import MISSING_REASON, NODE, PACKAGES

pytestmark = pytest.mark.oracle

PI_AI = PACKAGES / "pi-ai" / "dist" / "api"
MODULES = {"anthropic-messages": "anthropic-messages.js", "openai-completions": "openai-completions.js"}

_SCRIPT = """
const [module, payload] = [process.argv[1], JSON.parse(process.argv[2])];
const api = await import(module);
// the provider modules take a transcript context: the prompt and tools as its leading system message
const transcript = await import(module.replace(/api[/][^/]+$/, "utils/transcript.js"));
const context = transcript.normalizeContext ? transcript.normalizeContext(payload.context) : payload.context;
let final = null;
for await (const event of api.streamSimple(payload.model, context, payload.options)) {
  if (event.type === "done") final = event.message;
  if (event.type === "error") final = event.error;
}
process.stdout.write(JSON.stringify(final));
"""

TOOL = {
    "name": "read",
    "description": "Read a file",
    "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
}


def _reference(api: str, model: dict[str, Any], messages: list[dict[str, Any]], level: str) -> dict[str, Any]:
    module = PI_AI / MODULES[api]
    if not NODE.exists() or not module.exists():
        pytest.skip(MISSING_REASON)
    options: dict[str, Any] = {"apiKey": "parity-key"}
    if level != "off":
        options["reasoning"] = level
    payload = {
        "model": model,
        "context": {"systemPrompt": "SYS", "messages": messages, "tools": [TOOL]},
        "options": options,
    }
    done = subprocess.run(
        [str(NODE), "--input-type=module", "-e", _SCRIPT, str(module), json.dumps(payload)],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def _history(api: str, provider: str, model_id: str) -> list[dict[str, Any]]:
    usage = {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2,
             "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}  # fmt: skip
    assistant = {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "look", "thinkingSignature": "SIG"},
            {"type": "text", "text": "Reading."},
            {"type": "toolCall", "id": "toolu_1", "name": "read", "arguments": {"path": "t.py"}},
            {"type": "toolCall", "id": "toolu_2", "name": "read", "arguments": {"path": "u.py"}},
        ],
        "api": api, "provider": provider, "model": model_id, "stopReason": "toolUse", "usage": usage, "timestamp": 2,
    }  # fmt: skip
    image = {"type": "image", "data": "AAAA", "mimeType": "image/png"}
    return [
        {"role": "user", "content": "Fix the test", "timestamp": 1},
        assistant,
        {"role": "toolResult", "toolCallId": "toolu_1", "toolName": "read", "content": [{"type": "text", "text": "line1"}],
         "isError": False, "timestamp": 3},
        {"role": "toolResult", "toolCallId": "toolu_2", "toolName": "read",
         "content": [{"type": "text", "text": "a\nb"}, image], "isError": True, "timestamp": 3},
        {"role": "user", "content": [{"type": "text", "text": "and then?"}], "timestamp": 4},
    ]  # fmt: skip


CASES = [
    ("anthropic-messages", "anthropic", "claude-sonnet-4-5",
     Turn([Thinking("plan it", signature="sig-1"), Text("Two files."), ToolCall("read", {"path": "a.py"}, id="toolu_9")],
          usage=Usage(input=1200, output=80, cache_read=3000, cache_write=500))),
    ("anthropic-messages", "anthropic", "claude-sonnet-4-5",
     Turn([Thinking("", signature="OPAQUE", redacted=True), Text("Short.")], raw_stop="max_tokens")),
    ("openai-completions", "openai", "gpt-5.4",
     Turn([Thinking("hmm", signature="reasoning_content"), Text("Calls."), ToolCall("read", {"path": "b"}, id="call_1"),
           ToolCall("read", {"path": "c"}, id="call_2")], usage=Usage(input=900, output=40, cache_read=100, reasoning=12))),
    ("openai-completions", "openai", "gpt-5.4", Turn([Text("plain answer")])),
]  # fmt: skip


@pytest.mark.parametrize(("api", "provider", "model_id", "turn"), CASES)
def test_same_stream_same_message_same_request(
    loopback: LoopbackServer, api: str, provider: str, model_id: str, turn: Turn
) -> None:
    base = loopback.url if api == "anthropic-messages" else loopback.openai_url
    cost = {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75}
    ref_model = {"id": model_id, "name": model_id, "api": api, "provider": provider, "baseUrl": base, "reasoning": True,
                 "input": ["text", "image"], "contextWindow": 200000, "maxTokens": 32000, "cost": cost}  # fmt: skip
    model = Model(model_id, model_id, api, provider, base, reasoning=True, input=("text", "image"),
                  context_window=200000, max_tokens=32000, cost=ModelCost(3, 15, 0.3, 3.75))  # fmt: skip
    messages = _history(api, provider, model_id)
    loopback.script(turn, turn)
    reference = _reference(api, ref_model, messages, "medium")
    context = LlmContext("SYS", messages, [ToolSpec(TOOL["name"], TOOL["description"], TOOL["parameters"])])
    ours = asyncio.run(complete(model, context, StreamOptions(api_key="parity-key", thinking_level="medium")))

    assert _masked(ours["content"]) == _masked(reference["content"])
    assert ours["stopReason"] == reference["stopReason"]
    for key in ("input", "output", "cacheRead", "cacheWrite", "totalTokens"):
        assert ours["usage"][key] == reference["usage"][key], key
    for key in ("input", "output", "cacheRead", "cacheWrite", "total"):
        assert ours["usage"]["cost"][key] == pytest.approx(reference["usage"]["cost"][key]), key

    theirs_body, our_body = loopback.requests[-2].body, loopback.requests[-1].body
    assert _comparable(api, our_body) == _comparable(api, theirs_body)


def _masked(content: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Content with the placeholder shown for redacted reasoning masked (each program words it itself)."""
    return [{**block, "thinking": "<redacted>"} if block.get("redacted") else block for block in content]


def _comparable(api: str, body: dict[str, Any]) -> dict[str, Any]:
    """The body without the deliberate differences (wording of our own placeholders, optional fields)."""
    body = json.loads(json.dumps(body))
    if api == "anthropic-messages":
        body.get("thinking", {}).pop("display", None)  # the reference also asks for summarized thinking
    else:
        body.pop("prompt_cache_key", None)
        for message in body["messages"]:
            content = message.get("content")
            # The line introducing tool-result images is in each program's own words.
            if isinstance(content, list) and len(content) > 1 and content[0].get("text", "").endswith(":"):
                content[0]["text"] = "<tool images>"
    return body


def _foreign_history() -> list[dict[str, Any]]:
    """A history written by another provider: thinking to convert, odd tool ids, an orphan call, a failure."""
    usage = {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2,
             "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}  # fmt: skip

    def assistant(*blocks: dict[str, Any], stop: str = "toolUse") -> dict[str, Any]:
        return {"role": "assistant", "content": list(blocks), "api": "openai-responses", "provider": "elsewhere",
                "model": "other-model", "stopReason": stop, "usage": usage, "timestamp": 2}  # fmt: skip

    return [
        {"role": "user", "content": [{"type": "text", "text": "start"}, {"type": "text", "text": "  "}], "timestamp": 1},
        assistant({"type": "thinking", "thinking": "foreign idea", "thinkingSignature": "reasoning_content"},
                  {"type": "thinking", "thinking": "", "thinkingSignature": "x"},
                  {"type": "toolCall", "id": "call|odd/id+1", "name": "read", "arguments": {"path": "a"}},
                  {"type": "toolCall", "id": "call_orphan", "name": "read", "arguments": {"path": "b"}}),
        {"role": "toolResult", "toolCallId": "call|odd/id+1", "toolName": "read",
         "content": [{"type": "text", "text": "A"}], "isError": False, "timestamp": 3},
        assistant({"type": "text", "text": "half"}, stop="error"),
        {"role": "user", "content": "continue", "timestamp": 5},
    ]  # fmt: skip


@pytest.mark.parametrize(("api", "level"), [("anthropic-messages", "off"), ("anthropic-messages", "high"),
                                            ("openai-completions", "off"), ("openai-completions", "low")])  # fmt: skip
def test_foreign_history_is_normalised_like_the_reference(
    loopback: LoopbackServer, api: str, level: str
) -> None:
    provider, model_id = (
        ("anthropic", "claude-haiku-4-5") if api == "anthropic-messages" else ("openai", "gpt-5")
    )
    base = loopback.url if api == "anthropic-messages" else loopback.openai_url
    ref_model = {"id": model_id, "name": model_id, "api": api, "provider": provider, "baseUrl": base, "reasoning": True,
                 "input": ["text"], "contextWindow": 200000, "maxTokens": 64000,
                 "cost": {"input": 1, "output": 5, "cacheRead": 0.1, "cacheWrite": 1.25}}  # fmt: skip
    model = Model(
        model_id, model_id, api, provider, base, reasoning=True, context_window=200000, max_tokens=64000
    )
    messages = _foreign_history()
    loopback.script(Turn([Text("ok")]), Turn([Text("ok")]))
    _reference(api, ref_model, messages, level)
    context = LlmContext("SYS", messages, [ToolSpec(TOOL["name"], TOOL["description"], TOOL["parameters"])])
    asyncio.run(complete(model, context, StreamOptions(api_key="parity-key", thinking_level=level)))  # type: ignore[arg-type]
    theirs, ours = loopback.requests[-2].body, loopback.requests[-1].body
    assert _comparable(api, _without_synthetic_text(ours)) == _comparable(
        api, _without_synthetic_text(theirs)
    )


def _without_synthetic_text(body: dict[str, Any]) -> dict[str, Any]:
    """Mask the wording of synthetic "no result" tool results (each program words it itself)."""
    body = json.loads(json.dumps(body))
    for message in body["messages"]:
        content = message.get("content")
        if message.get("role") == "tool" and message.get("tool_call_id") == "call_orphan":
            message["content"] = "<no result>"
        if isinstance(content, list):
            for block in content:
                if block.get("type") == "tool_result" and block.get("tool_use_id") == "call_orphan":
                    block["content"] = "<no result>"
    return body


_BATCH_SCRIPT = """
const { readFileSync } = await import("node:fs");
const [dir, payloads] = [process.argv[1], JSON.parse(readFileSync(0, "utf8"))];
const transcript = await import(dir + "/../utils/transcript.js");
const results = [];
for (const payload of payloads) {
  const api = await import(dir + "/" + payload.module);
  const context = transcript.normalizeContext ? transcript.normalizeContext(payload.context) : payload.context;
  let final = null;
  for await (const event of api.streamSimple(payload.model, context, payload.options)) {
    if (event.type === "done") final = event.message;
    if (event.type === "error") final = event.error;
  }
  results.push(final);
}
process.stdout.write(JSON.stringify(results));
"""
_WORDS = [
    "alpha ",
    "β-test ",
    "emoji 🐍 ",
    'quote " ',
    "back\\\\slash ",
    "new\nline ",
    "tab\t",
    "<tag> ",
    "{json} ",
    "ok",
]


def _random_turn(rng: random.Random, protocol: str) -> Turn:
    pieces: list[Text | Thinking | ToolCall] = []
    if rng.random() < 0.6:
        words = "".join(rng.choice(_WORDS) for _ in range(rng.randint(1, 12)))
        signature = "reasoning_content" if protocol == "openai" else f"sig-{rng.randint(0, 99)}"
        pieces.append(Thinking(words, signature=signature))
    pieces.append(Text("".join(rng.choice(_WORDS) for _ in range(rng.randint(1, 30)))))
    for index in range(rng.randint(0, 3)):
        arguments = {
            "path": rng.choice(_WORDS),
            "n": rng.randint(-5, 500),
            "deep": {"list": [rng.random(), None, True]},
        }
        pieces.append(
            ToolCall(
                rng.choice(["read", "edit", "bash"]), arguments, id=f"call_{rng.randint(0, 10**6)}_{index}"
            )
        )
    usage = Usage(input=rng.randint(0, 5000), output=rng.randint(1, 900), cache_read=rng.randint(0, 3000),
                  cache_write=rng.randint(0, 800) if protocol == "anthropic" else 0)  # fmt: skip
    stop = rng.choice([None, None, "length"])
    return Turn(pieces, stop=stop, usage=usage, split_bytes=rng.choice([None, None, 3, 17]))


def test_random_streams_give_the_same_messages(loopback: LoopbackServer) -> None:
    if not NODE.exists() or not PI_AI.exists():
        pytest.skip(MISSING_REASON)
    rng = random.Random(int(os.environ.get("PIWORK_PARITY_SEED", "20251129")))
    cost = {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75}
    cases = []
    for number in range(16):
        api = "anthropic-messages" if number % 2 == 0 else "openai-completions"
        protocol = "anthropic" if number % 2 == 0 else "openai"
        base = loopback.url if protocol == "anthropic" else loopback.openai_url
        cases.append((api, base, _random_turn(rng, protocol)))
    payloads = []
    for api, base, turn in cases:
        loopback.script(turn)
        ref_model = {"id": "m", "name": "m", "api": api, "provider": "p", "baseUrl": base, "reasoning": False,
                     "input": ["text"], "contextWindow": 200000, "maxTokens": 4000, "cost": cost}  # fmt: skip
        payloads.append({"module": MODULES[api], "model": ref_model, "options": {"apiKey": "k"},
                         "context": {"systemPrompt": "S", "messages": [{"role": "user", "content": "go", "timestamp": 1}]}})  # fmt: skip
    done = subprocess.run(
        [str(NODE), "--input-type=module", "-e", _BATCH_SCRIPT, str(PI_AI)],
        input=json.dumps(payloads), capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    references = json.loads(done.stdout)

    async def ours_all() -> list[dict[str, Any]]:
        results = []
        for api, base, turn in cases:
            loopback.script(turn)
            model = Model(
                "m",
                "m",
                api,
                "p",
                base,
                context_window=200000,
                max_tokens=4000,
                cost=ModelCost(3, 15, 0.3, 3.75),
            )
            context = LlmContext("S", [{"role": "user", "content": "go", "timestamp": 1}])
            results.append(await complete(model, context, StreamOptions(api_key="k")))
        return results

    for (api, _, turn), reference, ours in zip(cases, references, asyncio.run(ours_all()), strict=True):
        where = f"{api} {turn}"
        assert ours["content"] == reference["content"], where
        assert ours["stopReason"] == reference["stopReason"], where
        for key in ("input", "output", "cacheRead", "cacheWrite", "totalTokens"):
            assert ours["usage"][key] == reference["usage"][key], (key, where)
        assert ours["usage"]["cost"]["total"] == pytest.approx(reference["usage"]["cost"]["total"]), where


# Placeholder texts each program writes in its own words, masked before comparing request bodies.
_OUR_WORDS = {
    BRIDGE_AFTER_TOOL_RESULTS: "<bridge>",
    MISSING_RESULT_TEXT: "<no result>",
    USER_IMAGE_PLACEHOLDER: "<image>",
    TOOL_IMAGE_PLACEHOLDER: "<tool image>",
    EMPTY_TOOL_RESULT: "<empty>",
    TOOL_IMAGES_INTRO: "<tool images>",
    IMAGE_ONLY_PLACEHOLDER: "<see image>",
    TOOL_IMAGE_ONLY_RESULT: "<see image>",
}
_THEIR_WORDS = {
    "I have processed the tool results.": "<bridge>",
    "No result provided": "<no result>",
    "(image omitted: model does not support images)": "<image>",
    "(tool image omitted: model does not support images)": "<tool image>",
    "(no tool output)": "<empty>",
    "Attached image(s) from tool result:": "<tool images>",
    "(see attached image)": "<see image>",
}
_SNIPPETS = ["hi", "  ", "", "text\nmore", "🐍", "x"]


def _masked_body(body: dict[str, Any], words: dict[str, str]) -> dict[str, Any]:
    text = json.dumps(body, ensure_ascii=False, sort_keys=True)
    for phrase, mask in words.items():
        text = text.replace(json.dumps(phrase, ensure_ascii=False)[1:-1], mask)
    result: dict[str, Any] = json.loads(text)
    return result


def _random_history(rng: random.Random, api: str, provider: str, model_id: str) -> list[dict[str, Any]]:
    usage = {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2,
             "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}  # fmt: skip
    image = {"type": "image", "data": "QUJD", "mimeType": "image/png"}
    messages: list[dict[str, Any]] = []
    open_calls: list[str] = []
    for _ in range(rng.randint(1, 9)):
        roll = rng.random()
        if roll < 0.3:
            blocks = [{"type": "text", "text": rng.choice(_SNIPPETS)} for _ in range(rng.randint(0, 2))]
            content: Any = rng.choice(
                [rng.choice(_SNIPPETS), blocks + ([image] if rng.random() < 0.3 else [])]
            )
            messages.append({"role": "user", "content": content, "timestamp": 1})
        elif roll < 0.6 or not open_calls:
            same = rng.random() < 0.5
            parts: list[dict[str, Any]] = []
            if rng.random() < 0.5:
                thinking: dict[str, Any] = {"type": "thinking", "thinking": rng.choice(_SNIPPETS)}
                if rng.random() < 0.7:
                    thinking["thinkingSignature"] = rng.choice(["sig", "reasoning_content", ""])
                parts.append(thinking)
            if rng.random() < 0.7:
                parts.append({"type": "text", "text": rng.choice(_SNIPPETS)})
            open_calls = []
            for _ in range(rng.randint(0, 2)):
                call_id = rng.choice([f"toolu_{rng.randint(0, 99)}", f"call|fc_{rng.randint(0, 99)}"])
                open_calls.append(call_id)
                parts.append(
                    {
                        "type": "toolCall",
                        "id": call_id,
                        "name": "read",
                        "arguments": {"p": rng.choice(_SNIPPETS)},
                    }
                )
            messages.append({"role": "assistant", "content": parts, "api": api if same else "other-api",
                             "provider": provider if same else "other", "model": model_id if same else "other-model",
                             "stopReason": rng.choice(["stop", "toolUse", "toolUse", "error", "length"]),
                             "usage": usage, "timestamp": 2})  # fmt: skip
        else:
            result = [{"type": "text", "text": rng.choice(_SNIPPETS)} for _ in range(rng.randint(0, 2))]
            messages.append({"role": "toolResult", "toolCallId": open_calls.pop(0), "toolName": "read",
                             "content": result + ([image] if rng.random() < 0.3 else []),
                             "isError": rng.random() < 0.3, "timestamp": 3})  # fmt: skip
    messages.append({"role": "user", "content": "end", "timestamp": 9})
    return messages


def test_random_histories_give_the_same_request_bodies(loopback: LoopbackServer) -> None:
    if not NODE.exists() or not PI_AI.exists():
        pytest.skip(MISSING_REASON)
    rng = random.Random(int(os.environ.get("PIWORK_PARITY_SEED", "7")))
    cases = []
    for number in range(24):
        api = "anthropic-messages" if number % 2 == 0 else "openai-completions"
        provider, model_id = (
            ("anthropic", "claude-x")
            if number % 2 == 0
            else rng.choice([("openai", "gpt-x"), ("local", "q")])
        )
        base = loopback.url if number % 2 == 0 else loopback.openai_url
        images = rng.random() < 0.5
        compat: dict[str, Any] = {}
        if provider == "local":  # every detected default spelled out, so both sides agree on the endpoint
            compat = {"supportsStore": False, "supportsDeveloperRole": False, "supportsReasoningEffort": False,
                      "maxTokensField": "max_tokens", "requiresToolResultName": rng.random() < 0.5,
                      "requiresAssistantAfterToolResult": rng.random() < 0.5}  # fmt: skip
        cases.append(
            (api, provider, model_id, base, images, compat, _random_history(rng, api, provider, model_id))
        )
    payloads = []
    for api, provider, model_id, base, images, compat, history in cases:
        loopback.script(Turn([Text("ok")]))
        ref_model = {"id": model_id, "name": model_id, "api": api, "provider": provider, "baseUrl": base,
                     "reasoning": False, "input": ["text", "image"] if images else ["text"], "contextWindow": 200000,
                     "maxTokens": 4000, "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
                     "compat": compat}  # fmt: skip
        payloads.append({"module": MODULES[api], "model": ref_model, "options": {"apiKey": "k"},
                         "context": {"systemPrompt": "S", "messages": history}})  # fmt: skip
    done = subprocess.run(
        [str(NODE), "--input-type=module", "-e", _BATCH_SCRIPT, str(PI_AI)],
        input=json.dumps(payloads), capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    theirs = [request.body for request in loopback.requests[-len(cases) :]]

    async def send_ours() -> None:
        for api, provider, model_id, base, images, compat, history in cases:
            loopback.script(Turn([Text("ok")]))
            model = Model(model_id, model_id, api, provider, base, input=("text", "image") if images else ("text",),
                          context_window=200000, max_tokens=4000, compat=compat)  # fmt: skip
            await complete(model, LlmContext("S", history), StreamOptions(api_key="k"))

    asyncio.run(send_ours())
    ours = [request.body for request in loopback.requests[-len(cases) :]]
    for case, their_body, our_body in zip(cases, theirs, ours, strict=True):
        mine, reference = (
            _masked_body(our_body, _OUR_WORDS),
            _without_stray_bridges(_masked_body(their_body, _THEIR_WORDS)),
        )
        assert mine == reference, _first_difference(mine, reference, case)


def _without_stray_bridges(body: dict[str, Any]) -> dict[str, Any]:
    """The reference inserts its bridge before an empty user message it then drops; piwork does not."""
    bridge = {"role": "assistant", "content": "<bridge>"}
    messages = body["messages"]
    kept = [
        m
        for i, m in enumerate(messages)
        if m != bridge or (i + 1 < len(messages) and messages[i + 1]["role"] == "user")
    ]
    return {**body, "messages": kept}


def _first_difference(mine: dict[str, Any], reference: dict[str, Any], case: tuple[Any, ...]) -> str:
    lines = [f"history: {json.dumps(case[-1], ensure_ascii=False)}", f"compat: {case[-2]}"]
    for index, (a, b) in enumerate(zip(mine["messages"], reference["messages"], strict=False)):
        if a != b:
            lines += [f"message {index}:", f"  ours:      {a}", f"  reference: {b}"]
            break
    lines.append(f"lengths: {len(mine['messages'])} vs {len(reference['messages'])}")
    lines += [f"field {k}: {mine.get(k)} vs {reference.get(k)}" for k in set(mine) | set(reference)
              if k != "messages" and mine.get(k) != reference.get(k)]  # fmt: skip
    return "\n".join(lines)


_FORMATS: list[dict[str, Any]] = [
    {"supportsReasoningEffort": True},
    {"thinkingFormat": "qwen", "supportsReasoningEffort": False},
    {"thinkingFormat": "qwen", "supportsReasoningEffort": True},
    {"thinkingFormat": "qwen-chat-template"},
    {"thinkingFormat": "deepseek", "supportsReasoningEffort": True},
    {"thinkingFormat": "zai", "supportsReasoningEffort": True},
    {"thinkingFormat": "together", "supportsReasoningEffort": False},
    {"thinkingFormat": "string-thinking"},
    {"thinkingFormat": "openrouter"},
    {"thinkingFormat": "chat-template", "chatTemplateKwargs": {
        "enable_thinking": {"$var": "thinking.enabled"}, "effort": {"$var": "thinking.effort"},
        "budget": {"$var": "thinking.budget", "omitWhenOff": True}, "fixed": 1}},
    {"thinkingTokenBudgetField": "thinking_budget_tokens", "supportsReasoningEffort": False},
]  # fmt: skip
_BASE_COMPAT = {"supportsStore": False, "supportsDeveloperRole": False, "supportsReasoningEffort": False,
                "maxTokensField": "max_tokens"}  # fmt: skip


def test_reasoning_formats_match_the_reference(loopback: LoopbackServer) -> None:
    if not NODE.exists() or not PI_AI.exists():
        pytest.skip(MISSING_REASON)
    cases = [(fmt, level, levels) for fmt in _FORMATS for level in ("off", "low", "high")
             for levels in (None, {"off": "none-please", "high": "hi"})]  # fmt: skip
    history = [{"role": "user", "content": "go", "timestamp": 1}]
    payloads = []
    for fmt, level, levels in cases:
        loopback.script(Turn([Text("ok")]))
        model: dict[str, Any] = {"id": "m", "name": "m", "api": "openai-completions", "provider": "local",
                                 "baseUrl": loopback.openai_url, "reasoning": True, "input": ["text"],
                                 "contextWindow": 200000, "maxTokens": 8192, "compat": {**_BASE_COMPAT, **fmt},
                                 "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}}  # fmt: skip
        if levels:
            model["thinkingLevelMap"] = levels
        options: dict[str, Any] = {"apiKey": "k"} if level == "off" else {"apiKey": "k", "reasoning": level}
        payloads.append({"module": MODULES["openai-completions"], "model": model, "options": options,
                         "context": {"systemPrompt": "S", "messages": history}})  # fmt: skip
    done = subprocess.run(
        [str(NODE), "--input-type=module", "-e", _BATCH_SCRIPT, str(PI_AI)],
        input=json.dumps(payloads), capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    theirs = [request.body for request in loopback.requests[-len(cases) :]]

    async def send_ours() -> None:
        for fmt, level, levels in cases:
            loopback.script(Turn([Text("ok")]))
            model = Model("m", "m", "openai-completions", "local", loopback.openai_url, reasoning=True,
                          context_window=200000, max_tokens=8192, compat={**_BASE_COMPAT, **fmt},
                          thinking_level_map=levels)  # fmt: skip
            await complete(model, LlmContext("S", history), StreamOptions(api_key="k", thinking_level=level))  # type: ignore[arg-type]

    asyncio.run(send_ours())
    ours = [request.body for request in loopback.requests[-len(cases) :]]
    for (fmt, level, levels), their_body, our_body in zip(cases, theirs, ours, strict=True):
        assert our_body == their_body, (fmt, level, levels)


def test_anthropic_thinking_and_token_limits_match_the_reference(loopback: LoopbackServer) -> None:
    if not NODE.exists() or not PI_AI.exists():
        pytest.skip(MISSING_REASON)
    rng = random.Random(int(os.environ.get("PIWORK_PARITY_SEED", "11")))
    levels_maps: list[dict[str, str | None] | None] = [
        None,
        {"off": None},
        {"xhigh": "xhigh", "max": "max"},
        {"minimal": None},
    ]
    cases = []
    for _ in range(40):
        compat: dict[str, Any] = rng.choice(
            [{}, {"forceAdaptiveThinking": True}, {"supportsTemperature": False}]
        )
        cases.append({
            "reasoning": rng.random() < 0.8, "compat": compat, "levels": rng.choice(levels_maps),
            "maxTokens": rng.choice([4000, 64000, 128000]), "contextWindow": rng.choice([12000, 200000, 1000000]),
            "level": rng.choice(["off", "minimal", "low", "medium", "high", "xhigh", "max"]),
            "callerMax": rng.choice([None, None, 500, 3000]), "temperature": rng.choice([None, 0.3]),
            "prompt": "word " * rng.choice([10, 20000]),
        })  # fmt: skip
    payloads = []
    for case in cases:
        loopback.script(Turn([Text("ok")]))
        model: dict[str, Any] = {"id": "claude-x", "name": "c", "api": "anthropic-messages", "provider": "anthropic",
                                 "baseUrl": loopback.url, "reasoning": case["reasoning"], "input": ["text"],
                                 "contextWindow": case["contextWindow"], "maxTokens": case["maxTokens"],
                                 "compat": case["compat"], "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}}  # fmt: skip
        if case["levels"] is not None:
            model["thinkingLevelMap"] = case["levels"]
        # The reference's agent settles the level before calling its provider; give it the settled one.
        settled = resolve_level(
            Model("claude-x", "c", "anthropic-messages", "anthropic", "", reasoning=case["reasoning"],
                  thinking_level_map=case["levels"]), case["level"])  # fmt: skip
        options: dict[str, Any] = {"apiKey": "k"}
        if settled != "off":
            options["reasoning"] = settled
        if case["callerMax"] is not None:
            options["maxTokens"] = case["callerMax"]
        if case["temperature"] is not None:
            options["temperature"] = case["temperature"]
        history = [{"role": "user", "content": case["prompt"], "timestamp": 1}]
        payloads.append({"module": MODULES["anthropic-messages"], "model": model, "options": options,
                         "context": {"systemPrompt": "S", "messages": history}})  # fmt: skip
    done = subprocess.run(
        [str(NODE), "--input-type=module", "-e", _BATCH_SCRIPT, str(PI_AI)],
        input=json.dumps(payloads), capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    theirs = [request.body for request in loopback.requests[-len(cases) :]]

    async def send_ours() -> None:
        for case in cases:
            loopback.script(Turn([Text("ok")]))
            model = Model("claude-x", "c", "anthropic-messages", "anthropic", loopback.url, reasoning=case["reasoning"],
                          context_window=case["contextWindow"], max_tokens=case["maxTokens"], compat=case["compat"],
                          thinking_level_map=case["levels"])  # fmt: skip
            options = StreamOptions(api_key="k", thinking_level=case["level"], max_tokens=case["callerMax"],
                                    temperature=case["temperature"])  # fmt: skip
            history = [{"role": "user", "content": case["prompt"], "timestamp": 1}]
            await complete(model, LlmContext("S", history), options)

    asyncio.run(send_ours())
    ours = [request.body for request in loopback.requests[-len(cases) :]]
    for case, their_body, our_body in zip(cases, theirs, ours, strict=True):
        assert _comparable("anthropic-messages", our_body) == _comparable("anthropic-messages", their_body), {
            k: v for k, v in case.items() if k != "prompt"
        }
