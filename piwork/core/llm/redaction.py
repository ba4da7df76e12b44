"""Keeping secrets out of logs and messages: header values and any loaded key become ``***``."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

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


def redact_value(value: Any, secrets: Sequence[str]) -> Any:
    """``value`` with every string in it (lists and objects walked) passed through :func:`redact_text`.
    Returns the same object when nothing needed masking."""
    if not secrets:
        return value
    if isinstance(value, str):
        return redact_text(value, secrets)
    if isinstance(value, list):
        items = [redact_value(item, secrets) for item in value]
        return value if all(a is b for a, b in zip(items, value, strict=True)) else items
    if isinstance(value, dict):
        pairs = {key: redact_value(item, secrets) for key, item in value.items()}
        return value if all(pairs[k] is value[k] for k in value) else pairs
    return value


class StreamRedactor:
    """Masks secrets in a byte stream cut into arbitrary chunks (a key may straddle two chunks).

    ``feed`` returns the bytes that are safe to write; the last ``longest - 1`` bytes are held back
    until the next chunk or :meth:`finish`.
    """

    def __init__(self, secrets: Iterable[str]) -> None:
        forms = {f for s in secrets if s and len(s) >= MIN_SECRET_LENGTH for f in _spellings(s)}
        self._forms = sorted((f.encode("utf-8", "surrogateescape") for f in forms), key=len, reverse=True)
        self._keep = max((len(f) for f in self._forms), default=1) - 1
        self._held = b""

    @property
    def active(self) -> bool:
        return bool(self._forms)

    def feed(self, data: bytes) -> bytes:
        if not self._forms:
            return data
        text = self._mask(self._held + data)
        cut = max(0, len(text) - self._keep)
        self._held = text[cut:]
        return text[:cut]

    def finish(self) -> bytes:
        rest, self._held = self._mask(self._held), b""
        return rest

    def _mask(self, data: bytes) -> bytes:
        for form in self._forms:
            data = data.replace(form, MASK.encode())
        return data
