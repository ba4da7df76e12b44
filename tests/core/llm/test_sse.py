"""The SSE decoder against awkward chunking, line endings, comments and torn endings."""

from __future__ import annotations

import asyncio
import random

import pytest

from piwork.core.llm.sse import SseDecoder, SseEvent, aiter_sse

STREAM = (
    ": keep-alive comment\n"
    "event: message_start\n"
    'data: {"a": 1}\n'
    "\n"
    "event: content_block_delta\r\n"
    "data: line one\r\n"
    "data:line two\r\n"
    "id: 7\r\n"
    "\r\n"
    "data: ünïcødé 🐍\r"
    "\r"
    "event: ping\n"
    "data:\n"
    "\n"
)
EXPECTED = [
    SseEvent("message_start", '{"a": 1}'),
    SseEvent("content_block_delta", "line one\nline two", id="7"),
    SseEvent("message", "ünïcødé 🐍", id="7"),
    SseEvent("ping", "", id="7"),  # the last event id persists, as in browsers
]


def decode_all(chunks: list[bytes]) -> list[SseEvent]:
    decoder = SseDecoder()
    events: list[SseEvent] = []
    for chunk in chunks:
        events.extend(decoder.feed(chunk))
    events.extend(decoder.finish())
    return events


def test_whole_stream() -> None:
    assert decode_all([STREAM.encode()]) == EXPECTED


def test_every_two_way_split_gives_the_same_events() -> None:
    raw = STREAM.encode()
    for cut in range(len(raw) + 1):
        assert decode_all([raw[:cut], raw[cut:]]) == EXPECTED, cut


def test_byte_at_a_time_and_random_chunks() -> None:
    raw = STREAM.encode()
    assert decode_all([raw[i : i + 1] for i in range(len(raw))]) == EXPECTED
    rng = random.Random(5)
    for _ in range(200):
        cuts = sorted(rng.sample(range(1, len(raw)), 6))
        pieces = [raw[a:b] for a, b in zip([0, *cuts], [*cuts, len(raw)], strict=True)]
        assert decode_all(pieces) == EXPECTED


def test_crlf_split_between_chunks_counts_as_one_line_end() -> None:
    # "\r" ends one chunk and "\n" starts the next: no phantom blank line (which would dispatch early).
    events = decode_all([b"data: a\r", b"\ndata: b\r\n\r\n"])
    assert events == [SseEvent("message", "a\nb")]


def test_torn_last_event_is_dispatched_at_eof() -> None:
    assert decode_all([b'event: x\ndata: {"done": tr']) == [SseEvent("x", '{"done": tr')]
    assert decode_all([b"data: last"]) == [SseEvent("message", "last")]


def test_field_without_colon_and_unknown_fields() -> None:
    assert decode_all([b"data\nfoo: bar\n\n"]) == [SseEvent("message", "")]
    assert decode_all([b"retry: 1500\ndata: x\n\n"]) == [SseEvent("message", "x", retry=1500)]


def test_comment_only_stream_yields_nothing() -> None:
    assert decode_all([b": hello\n\n: again\n"]) == []


def test_invalid_utf8_is_replaced_not_raised() -> None:
    assert decode_all([b"data: \xff\xfe ok\n\n"]) == [SseEvent("message", "\ufffd\ufffd ok")]


def test_async_layer() -> None:
    async def chunks():  # type: ignore[no-untyped-def]
        for piece in (b"data: 1\n", b"\ndata: 2"):
            yield piece

    async def collect() -> list[SseEvent]:
        return [event async for event in aiter_sse(chunks())]

    assert asyncio.run(collect()) == [SseEvent("message", "1"), SseEvent("message", "2")]


@pytest.mark.parametrize("text", ["data: x\n\n", "data: x\r\n\r\n", "data: x\r\r"])
def test_line_endings(text: str) -> None:
    assert decode_all([text.encode()]) == [SseEvent("message", "x")]
