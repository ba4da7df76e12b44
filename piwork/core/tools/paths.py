"""Path resolution shared by the tools: ``@`` prefix, Unicode spaces, ``~``, ``file://``, cwd-relative."""

from __future__ import annotations

import os
import re
import unicodedata
from urllib.parse import unquote, urlparse

from piwork.core.paths import expand_home

_UNICODE_SPACES = re.compile("[\u00a0\u2000-\u200a\u202f\u205f\u3000]")
_AM_PM = re.compile(r" (AM|PM)\.", re.IGNORECASE)


def normalize_path(path: str) -> str:
    """The path as the model meant it, before making it absolute."""
    text = _UNICODE_SPACES.sub(" ", path)
    if text.startswith("@"):
        text = text[1:]
    text = expand_home(text)
    if text.startswith("file://"):
        text = unquote(urlparse(text).path)
    return text


def resolve_to_cwd(path: str, cwd: str) -> str:
    """Absolute, lexically normalised path; relative paths resolve against ``cwd``."""
    text = normalize_path(path)
    base = os.path.abspath(expand_home(cwd))
    return os.path.normpath(os.path.join(base, text))


def resolve_read_path(path: str, cwd: str) -> str:
    """Like :func:`resolve_to_cwd`, trying macOS screenshot-name variants when the path is missing."""
    resolved = resolve_to_cwd(path, cwd)
    if os.path.lexists(resolved):
        return resolved
    nfd = unicodedata.normalize("NFD", resolved)
    variants = (
        _AM_PM.sub(lambda m: f"\u202f{m.group(1)}.", resolved),
        nfd,
        resolved.replace("'", "\u2019"),
        nfd.replace("'", "\u2019"),
    )
    for variant in variants:
        if variant != resolved and os.path.lexists(variant):
            return variant
    return resolved
