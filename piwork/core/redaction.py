"""Keeping keys out of what piwork writes about a request: header values and loaded keys become ``***``.

Masking happens only where piwork itself could leak a key: error texts (an echoed header, a provider
body quoting the key), piwork's logs and the full-output logs of commands. What a tool returns (a file's
text, a command's output) is never altered, since masking it would corrupt what the model reads and
then writes back into the user's files.

Not every key is a secret: local servers take placeholders (``ollama``, vLLM's ``EMPTY``, ``lm-studio``,
llama.cpp's ``sk-no-key-required``) that also occur in ordinary text. A value shorter than
``MIN_SECRET_LENGTH`` or equal to a known placeholder is never masked anywhere.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

MASK = "***"
SECRET_HEADERS = frozenset({"authorization", "x-api-key", "api-key", "cookie", "proxy-authorization"})
# Real provider keys are 30+ random characters; anything under 16 is a placeholder or a word.
MIN_SECRET_LENGTH = 16
PLACEHOLDER_KEYS = frozenset(
    {
        "ollama",
        "empty",
        "lm-studio",
        "lmstudio",
        "test",
        "none",
        "null",
        "dummy",
        "local",
        "no-key",
        "no-key-needed",
        "nokey",
        "not-needed",
        "placeholder",
        "api-key",
        "your-api-key",
        "sk-no-key-required",
        "sk-xxx",
    }
)


def is_secret(value: str) -> bool:
    """Whether ``value`` is worth masking: long enough to be a real key and not a known placeholder."""
    stripped = value.strip()
    return len(stripped) >= MIN_SECRET_LENGTH and stripped.lower() not in PLACEHOLDER_KEYS


def _spellings(secret: str) -> set[str]:
    """The secret as typed, and as error texts quote it (escaped, as in a ``repr`` of its bytes)."""
    escaped = secret.encode("unicode_escape").decode("ascii")
    quoted = repr(secret.encode("utf-8", "surrogateescape"))[2:-1]
    return {secret, escaped, quoted}


def redact_text(text: str, secrets: Iterable[str]) -> str:
    forms = {form for s in secrets if is_secret(s) for form in _spellings(s)}
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


class StreamRedactor:
    """Masks secrets in a byte stream cut into arbitrary chunks (a key may straddle two chunks).

    ``feed`` returns the bytes that are safe to write; the last ``longest - 1`` bytes are held back
    until the next chunk or :meth:`finish`.
    """

    def __init__(self, secrets: Iterable[str]) -> None:
        forms = {f for s in secrets if is_secret(s) for f in _spellings(s)}
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
