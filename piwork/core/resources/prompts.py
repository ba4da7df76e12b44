"""Prompt templates: ``/name args`` expands a Markdown file's body with shell-like arguments."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from piwork.core.jscompat import js_trim, js_truthy, utf16_len, utf16_slice
from piwork.core.resources.diagnostics import Collision, Diagnostic
from piwork.core.resources.frontmatter import parse_frontmatter
from piwork.core.resources.skills import SourceInfo, resolve_user_path
from piwork.core.resources.textfiles import read_text

DESCRIPTION_PREVIEW = 60


@dataclass(frozen=True)
class PromptTemplate:
    name: str
    description: Any  # normally a string; Pi keeps whatever truthy value the frontmatter holds
    content: str
    file_path: str
    source_info: SourceInfo
    argument_hint: Any = None

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "argumentHint": self.argument_hint,
            "content": self.content,
            "filePath": self.file_path,
            "sourceInfo": self.source_info.to_json(),
        }


@dataclass
class PromptsResult:
    prompts: list[PromptTemplate] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)


def load_template_file(file_path: str, source_info: SourceInfo) -> PromptTemplate | None:
    """One template; a file that cannot be read or parsed is skipped (None)."""
    try:
        parsed = parse_frontmatter(read_text(file_path))
    except Exception:
        return None
    fields = parsed.fields()
    description: Any = fields.get("description") if js_truthy(fields.get("description")) else ""
    if not description:
        first = next((line for line in parsed.body.split("\n") if js_trim(line)), None)
        if first is not None:
            description = utf16_slice(first, 0, DESCRIPTION_PREVIEW)
            if utf16_len(first) > DESCRIPTION_PREVIEW:
                description += "..."
    hint = fields.get("argument-hint")
    name = os.path.basename(file_path)
    name = name[:-3] if name.endswith(".md") else name
    return PromptTemplate(
        name, description, parsed.body, file_path, source_info, hint if js_truthy(hint) else None
    )


def _prompt_source(path: str, agent_dir: str, cwd: str) -> SourceInfo:
    user_root = os.path.join(agent_dir, "prompts")
    project_root = os.path.join(cwd, ".pi", "prompts")
    for root, scope in ((user_root, "user"), (project_root, "project")):
        if path == root or path.startswith(root + os.sep):
            return SourceInfo(path, "local", scope, "top-level", root)
    base = path if os.path.isdir(path) else os.path.dirname(path)
    return SourceInfo(path, "local", "temporary", "top-level", base)


def load_prompt_templates(cwd: str, agent_dir: str, prompt_paths: Sequence[str]) -> list[PromptTemplate]:
    """Templates from explicit files and folders (a folder contributes its top-level ``*.md``)."""
    templates: list[PromptTemplate] = []
    for raw in prompt_paths:
        path = resolve_user_path(raw, cwd)
        if not os.path.exists(path):
            continue
        if os.path.isdir(path):
            try:
                names = sorted(os.listdir(path))
            except OSError:
                continue
            for name in names:
                full = os.path.join(path, name)
                if name.endswith(".md") and os.path.isfile(full):
                    template = load_template_file(full, _prompt_source(full, agent_dir, cwd))
                    if template:
                        templates.append(template)
        elif os.path.isfile(path) and path.endswith(".md"):
            template = load_template_file(path, _prompt_source(path, agent_dir, cwd))
            if template:
                templates.append(template)
    return templates


def dedupe_prompts(templates: Sequence[PromptTemplate]) -> PromptsResult:
    """First template of a name wins; later ones become collision diagnostics."""
    seen: dict[str, PromptTemplate] = {}
    diagnostics: list[Diagnostic] = []
    for template in templates:
        existing = seen.get(template.name)
        if existing is None:
            seen[template.name] = template
            continue
        collision = Collision("prompt", template.name, existing.file_path, template.file_path)
        diagnostics.append(
            Diagnostic(
                "collision", f'name "/{template.name}" collision', template.file_path, "collision", collision
            )
        )
    return PromptsResult(list(seen.values()), diagnostics)


_WHITESPACE = re.compile(r"\s")
_PLACEHOLDER = re.compile(r"\$\{(\d+|ARGUMENTS|@):-([^}]*)\}|\$\{@:(\d+)(?::(\d+))?\}|\$(ARGUMENTS|@|\d+)")
_COMMAND = re.compile(r"^/(\S+)(?:\s+([\s\S]*))?$")


def parse_command_args(text: str) -> list[str]:
    """Shell-like splitting: whitespace separates, quotes group, no escapes."""
    args: list[str] = []
    current = ""
    quote: str | None = None
    for char in text:
        if quote:
            if char == quote:
                quote = None
            else:
                current += char
        elif char in "\"'":
            quote = char
        elif _WHITESPACE.match(char):
            if current:
                args.append(current)
                current = ""
        else:
            current += char
    if current:
        args.append(current)
    return args


def substitute_args(content: str, args: Sequence[str]) -> str:
    """Fill ``$1``, ``$@``, ``$ARGUMENTS``, ``${N:-default}``, ``${@:N}``, ``${@:N:L}`` in one pass."""
    everything = " ".join(args)

    def replace(match: re.Match[str]) -> str:
        target, default, start, length, simple = match.groups()
        if target:
            value = everything if target in ("@", "ARGUMENTS") else _positional(args, int(target))
            return value if value else default
        if start:
            first = max(int(start) - 1, 0)
            chosen = args[first : first + int(length)] if length else args[first:]
            return " ".join(chosen)
        if simple in ("@", "ARGUMENTS"):
            return everything
        return _positional(args, int(simple))

    return _PLACEHOLDER.sub(replace, content)


def _positional(args: Sequence[str], number: int) -> str:
    return args[number - 1] if 0 < number <= len(args) else ""


def expand_prompt_template(text: str, templates: Sequence[PromptTemplate]) -> str:
    """``/name args`` → the template's content with arguments filled; anything else unchanged."""
    if not text.startswith("/"):
        return text
    match = _COMMAND.match(text)
    if not match:
        return text
    for template in templates:
        if template.name == match.group(1):
            return substitute_args(template.content, parse_command_args(match.group(2) or ""))
    return text
