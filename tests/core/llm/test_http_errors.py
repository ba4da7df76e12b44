"""Error text for non-2xx answers, per protocol, worded as the reference words the same answer."""

from __future__ import annotations

import pytest

from piwork.core.llm.http_errors import http_error_text
from piwork.core.llm.types import ANTHROPIC_MESSAGES, OPENAI_COMPLETIONS

OPENAI_429 = '{"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}}'
ANTHROPIC_429 = '{"type": "error", "error": {"type": "rate_limit_error", "message": "Slow down"}}'


@pytest.mark.parametrize(
    ("api", "status", "body", "expected"),
    [
        (OPENAI_COMPLETIONS, 429, OPENAI_429,
         '429: {"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}'),
        (OPENAI_COMPLETIONS, 400, '{"error": {"message": "bad"}}', '400: {"message":"bad"}'),
        (OPENAI_COMPLETIONS, 500, "upstream boom", "500 upstream boom"),
        (OPENAI_COMPLETIONS, 502, "", "502 status code (no body)"),
        (OPENAI_COMPLETIONS, 404, '{"detail": "no route"}', '404 {"detail":"no route"}'),
        (OPENAI_COMPLETIONS, 502, '{"error": null, "detail": "down"}', '502 {"error":null,"detail":"down"}'),
        (OPENAI_COMPLETIONS, 400, '{"message": "top-level"}', '400: {"message":"top-level"}'),
        (OPENAI_COMPLETIONS, 401, '{"error": "invalid key"}', '401 "invalid key"'),
        (OPENAI_COMPLETIONS, 400, '{"error": {}}', "400 {}"),
        (OPENAI_COMPLETIONS, 400, '{"error": {"message": {"text": "nested"}}}', '400: {"message":{"text":"nested"}}'),
        (ANTHROPIC_MESSAGES, 429, ANTHROPIC_429,
         '429 {"type":"error","error":{"type":"rate_limit_error","message":"Slow down"}}'),
        (ANTHROPIC_MESSAGES, 400, '{"message": "top-level"}', "400 top-level"),
        (ANTHROPIC_MESSAGES, 529, "Overloaded", "529 Overloaded"),
        (ANTHROPIC_MESSAGES, 413, "", "413 status code (no body)"),
        (ANTHROPIC_MESSAGES, 500, "null", "500 null"),
    ],
)  # fmt: skip
def test_wording(api: str, status: int, body: str, expected: str) -> None:
    assert http_error_text(api, status, body) == expected


def test_long_bodies_are_cut_with_the_count_of_what_was_dropped() -> None:
    text = http_error_text(ANTHROPIC_MESSAGES, 500, "y" * 4500)
    assert text == "500 " + "y" * 4000 + "... [truncated 500 chars]"
    unread = http_error_text(OPENAI_COMPLETIONS, 500, "y" * 4500, more=True)
    assert unread.endswith("... [truncated 500+ chars]")
