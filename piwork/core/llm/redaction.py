"""Keeping secrets out of logs and messages: header values and any loaded key become ``***``."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

MASK = "***"
SECRET_HEADERS = frozenset({"authorization", "x-api-key", "api-key", "cookie", "proxy-authorization"})
MIN_SECRET_LENGTH = 4  # shorter strings would mask ordinary words


def redact_text(text: str, secrets: Iterable[str]) -> str:
    # Longest first, so a key that contains another key is masked whole.
    for secret in sorted({s for s in secrets if s and len(s) >= MIN_SECRET_LENGTH}, key=len, reverse=True):
        text = text.replace(secret, MASK)
    return text


def redact_headers(headers: Mapping[str, str], secrets: Iterable[str] = ()) -> dict[str, str]:
    kept = list(secrets)
    return {
        name: MASK if name.lower() in SECRET_HEADERS else redact_text(value, kept)
        for name, value in headers.items()
    }
