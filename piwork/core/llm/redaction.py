"""Keeping secrets out of logs and messages: header values and any loaded key become ``***``."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

MASK = "***"
SECRET_HEADERS = frozenset({"authorization", "x-api-key", "api-key", "cookie", "proxy-authorization"})
MIN_SECRET_LENGTH = 4  # shorter strings would mask ordinary words


def _spellings(secret: str) -> set[str]:
    """The secret as typed, and as error texts quote it (escaped, as in a ``repr`` of its bytes)."""
    escaped = secret.encode("unicode_escape").decode("ascii")
    quoted = repr(secret.encode("utf-8", "surrogateescape"))[2:-1]
    return {secret, escaped, quoted}


def redact_text(text: str, secrets: Iterable[str]) -> str:
    forms = {form for s in secrets if s and len(s) >= MIN_SECRET_LENGTH for form in _spellings(s)}
    # Longest first, so a key that contains another key is masked whole.
    for form in sorted(forms, key=len, reverse=True):
        text = text.replace(form, MASK)
    return text


def redact_headers(headers: Mapping[str, str], secrets: Iterable[str] = ()) -> dict[str, str]:
    kept = list(secrets)
    return {
        name: MASK if name.lower() in SECRET_HEADERS else redact_text(value, kept)
        for name, value in headers.items()
    }


def header_secrets(headers: Mapping[str, str]) -> tuple[str, ...]:
    """Values of credential headers (and the token after an auth scheme), to mask in error texts."""
    found: list[str] = []
    for name, value in headers.items():
        if name.lower() in SECRET_HEADERS:
            found.append(value)
            scheme, _, token = value.partition(" ")
            if token and scheme.isalpha():
                found.append(token)
    return tuple(found)


def unsendable_header(headers: Mapping[str, str]) -> str | None:
    """The first header whose value HTTP cannot carry (a line break, a control or non-ASCII character)."""
    for name, value in headers.items():
        if any(not (" " <= c <= "~" or c == "\t") for c in value):
            return name
    return None
