"""What a trust-gated resource contains, for reading before deciding: its files and their text.

Used by the trust dialog (off the GUI thread) and by the snapshot taken when the user decides.
Listing is capped (a folder of thousands of files lists the first ``MAX_LISTED``), previews are
capped (``PREVIEW_BYTES``), and a binary file is named as such instead of being shown as garbage.
Markdown resources the agent would load (skills, prompt templates) also carry the name and
description the model would be told, read from their frontmatter.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from piwork.core import safe_read
from piwork.core.errors import PiworkError
from piwork.core.resources.trust_resource import MCP_NOTE
from piwork.core.safe_read import UnreadableFile
from piwork.core.truncate import format_size

MAX_LISTED = 500
PREVIEW_BYTES = 64 * 1024
_SNIFF_BYTES = 8 * 1024

# What each kind of resource does once trusted, in a few words (shown above its content).
KIND_ROLES = {
    "settings": "Project settings, merged over your global settings",
    "mcp": f"MCP servers for Pi ({MCP_NOTE})",
    "skills": "Skills the agent is told about and can read",
    "agents-skills": "Skills the agent is told about and can read",
    "prompts": "Prompt templates, run as /name",
    "extensions": "Project plugins (code that would run)",
    "themes": "Themes",
    "system": "Replaces the built-in system prompt",
    "append": "Appended to the system prompt",
    "profile": "piwork project profile",
    "snapshot": "piwork project context snapshot",
    "context-index": "piwork context index",
    "memory": "piwork project memory",
}


@dataclass(frozen=True)
class ResourceListing:
    """The files of one resource: absolute paths, sorted, at most ``MAX_LISTED``."""

    root: str
    files: tuple[str, ...]
    truncated: bool = False
    error: str = ""


@dataclass(frozen=True)
class FilePreview:
    """A file as the dialog shows it: a heading (what the agent would see it as), text, and a note."""

    path: str
    text: str
    size: int = 0
    heading: str = ""  # e.g. 'Skill "deploy"' for a SKILL.md
    description: str = ""
    note: str = ""  # cut, binary, unreadable
    binary: bool = False


def list_resource_files(root: str, limit: int = MAX_LISTED) -> ResourceListing:
    """Every file under ``root`` (or ``root`` itself when it is a file); symlinked folders once."""
    if not os.path.isdir(root):
        if not os.path.exists(root):
            return ResourceListing(root, (), error="missing")
        return ResourceListing(root, (root,))
    found: list[str] = []
    seen: set[str] = set()
    errors: list[str] = []

    def on_error(exc: OSError) -> None:
        errors.append(f"{exc.filename}: {exc.strerror or exc}")

    for directory, dirnames, filenames in os.walk(root, onerror=on_error, followlinks=True):
        real = os.path.realpath(directory)
        if real in seen:
            dirnames[:] = []
            continue
        seen.add(real)
        dirnames.sort()
        for name in sorted(filenames):
            if len(found) >= limit:
                return ResourceListing(root, tuple(found), truncated=True, error="; ".join(errors))
            found.append(os.path.join(directory, name))
    return ResourceListing(root, tuple(found), error="; ".join(errors))


def looks_binary(data: bytes) -> bool:
    """NUL bytes, or text that is not UTF-8, in the first few kilobytes."""
    sample = data[:_SNIFF_BYTES]
    if b"\0" in sample:
        return True
    try:
        sample.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start < len(sample) - 4  # a character cut at the sample's end is still text
    return False


def preview_file(path: str, kind: str = "", limit: int = PREVIEW_BYTES) -> FilePreview:
    """The beginning of ``path`` as text (``limit`` bytes), with what the agent would make of it."""
    try:
        data, size = safe_read.read_start(path, safe_read.GATED_FILE, limit + 1)
    except UnreadableFile as exc:  # a pipe or device: opening it could wait forever, reading never end
        return FilePreview(path, "", note=f"Not read: {exc.strerror}.")
    except OSError as exc:
        return FilePreview(path, "", note=f"Cannot read this file: {exc.strerror or exc}")
    if looks_binary(data):
        return FilePreview(path, "", size, note=f"Binary file ({format_size(size)}); not shown.", binary=True)
    cut = len(data) > limit
    text = data[:limit].decode("utf-8", errors="replace")
    if text.startswith("\ufeff"):
        text = text[1:]
    note = f"Showing the first {format_size(limit)} of {format_size(size)}." if cut else ""
    heading, description = _what_it_is(path, kind, text, cut)
    return FilePreview(path, text, size, heading, description, note)


def preview_of_text(path: str, kind: str, text: str, limit: int = PREVIEW_BYTES) -> FilePreview:
    """A file as the trust reading holds it, its first ``limit`` bytes shown, with what the agent
    would make of it."""
    data = text.encode("utf-8", "surrogatepass")
    cut = len(data) > limit
    shown = data[:limit].decode("utf-8", errors="ignore") if cut else text
    shown = shown[1:] if shown.startswith("\ufeff") else shown
    note = f"Showing the first {format_size(limit)} of {format_size(len(data))}." if cut else ""
    heading, description = _what_it_is(path, kind, shown, cut)
    return FilePreview(path, shown, len(data), heading, description, note)


def _what_it_is(path: str, kind: str, text: str, cut: bool) -> tuple[str, str]:
    name = os.path.basename(path)
    if kind in ("skills", "agents-skills") and name.endswith(".md"):
        fields = _frontmatter_fields(text, cut)
        skill = fields.get("name") if isinstance(fields.get("name"), str) and fields.get("name") else None
        skill = skill or os.path.basename(os.path.dirname(path))
        return f'Skill "{skill}"', _text(fields.get("description"))
    if kind == "prompts" and name.endswith(".md"):
        fields = _frontmatter_fields(text, cut)
        return f"Prompt template /{name[:-3]}", _text(fields.get("description"))
    if kind == "mcp":
        return "mcp.json — MCP servers for Pi", MCP_NOTE + "."
    if kind == "system":
        return "SYSTEM.md — replaces the built-in system prompt", ""
    if kind == "append":
        return "APPEND_SYSTEM.md — appended to the system prompt", ""
    return "", ""


def _frontmatter_fields(text: str, cut: bool) -> dict[str, object]:
    if cut and "\n---" not in text[3:]:
        return {}
    # the YAML parser is imported only once a file has frontmatter to read
    from piwork.core.resources.frontmatter import parse_frontmatter

    try:
        return parse_frontmatter(text).fields()
    except PiworkError:
        return {}


def _text(value: object) -> str:
    return value.strip() if isinstance(value, str) else ""


def display_path(path: str, folder: str) -> str:
    """``path`` relative to the project folder when inside it, else as it is."""
    try:
        rel = os.path.relpath(path, folder)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel
