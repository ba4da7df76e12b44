"""Prompt templates: ``/name args`` expands a Markdown file's body with shell-like arguments.

A template's ``description`` and ``argument-hint`` count only when the frontmatter gives them as text
(anything else is ignored: the description then comes from the body's first line). A file that cannot
be read or whose frontmatter does not parse is skipped with a warning naming it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from piwork.core.jscompat import JS_WHITESPACE, js_trim, utf16_len, utf16_slice
from piwork.core.resources.diagnostics import Collision, Diagnostic
from piwork.core.resources.skills import SourceInfo, resolve_user_path
from piwork.core.resources.textfiles import read_text
from piwork.core.safe_read import PROMPT_TEMPLATE

DESCRIPTION_PREVIEW = 60


@dataclass(frozen=True)
class PromptTemplate:
    name: str
    description: str
    content: str
    file_path: str
    source_info: SourceInfo
    argument_hint: str | None = None

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


def load_template_file(
    file_path: str, source_info: SourceInfo
) -> tuple[PromptTemplate | None, list[Diagnostic]]:
    """One template, or None with a warning when the file cannot be read or its frontmatter parsed."""
    try:
        text = read_text(file_path, PROMPT_TEMPLATE)
    except OSError as exc:
        reason = exc.strerror or str(exc) or "unknown error"
        message = f"the file could not be read ({reason}); the template is skipped"
        return None, [Diagnostic("warning", message, file_path, "read_error")]
    # the YAML parser is imported only once a file has frontmatter to read
    from piwork.core.resources.frontmatter import parse_frontmatter

    try:
        parsed = parse_frontmatter(text)
    except Exception as exc:  # any parser failure skips this one file
        reason = str(exc) or "the frontmatter could not be parsed"
        return None, [Diagnostic("warning", f"{reason}; the template is skipped", file_path, "parse_error")]
    fields = parsed.fields()
    raw = fields.get("description")
    description = raw if isinstance(raw, str) else ""
    if not description:
        first = next((line for line in parsed.body.split("\n") if js_trim(line)), None)
        if first is not None:
            description = utf16_slice(first, 0, DESCRIPTION_PREVIEW)
            if utf16_len(first) > DESCRIPTION_PREVIEW:
                description += "..."
    hint = fields.get("argument-hint")
    name = os.path.basename(file_path)
    name = name[:-3] if name.endswith(".md") else name
    argument_hint = hint if isinstance(hint, str) and hint else None
    return PromptTemplate(name, description, parsed.body, file_path, source_info, argument_hint), []


def _prompt_source(path: str, agent_dir: str, cwd: str) -> SourceInfo:
    user_root = os.path.join(agent_dir, "prompts")
    project_root = os.path.join(cwd, ".pi", "prompts")
    for root, scope in ((user_root, "user"), (project_root, "project")):
        if path == root or path.startswith(root + os.sep):
            return SourceInfo(path, "local", scope, "top-level", root)
    base = path if os.path.isdir(path) else os.path.dirname(path)
    return SourceInfo(path, "local", "temporary", "top-level", base)


def load_prompt_templates(cwd: str, agent_dir: str, prompt_paths: Sequence[str]) -> PromptsResult:
    """Templates from explicit files and folders (a folder contributes its top-level ``*.md``), with the
    warnings of the files that were skipped."""
    result = PromptsResult()

    def load(path: str) -> None:
        template, problems = load_template_file(path, _prompt_source(path, agent_dir, cwd))
        if template is not None:
            result.prompts.append(template)
        result.diagnostics.extend(problems)

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
                    load(full)
        elif os.path.isfile(path) and path.endswith(".md"):
            load(path)
    return result


def dedupe_prompts(loaded: PromptsResult) -> PromptsResult:
    """First template of a name wins; later ones become collision diagnostics (after the others)."""
    seen: dict[str, PromptTemplate] = {}
    diagnostics: list[Diagnostic] = list(loaded.diagnostics)
    for template in loaded.prompts:
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


_JS_SPACE = "[" + re.escape(JS_WHITESPACE) + "]"  # what JavaScript's \s matches
_JS_NOT_SPACE = "[^" + re.escape(JS_WHITESPACE) + "]"
_PLACEHOLDER = re.compile(r"\$\{(\d+|ARGUMENTS|@):-([^}]*)\}|\$\{@:(\d+)(?::(\d+))?\}|\$(ARGUMENTS|@|\d+)")
_COMMAND = re.compile(rf"/({_JS_NOT_SPACE}+)(?:{_JS_SPACE}+([\s\S]*))?")


def parse_command_args(text: str) -> list[str]:
    """Shell-like splitting as Pi does it: whitespace separates; a quote opens only at the start of an
    argument (an apostrophe inside a word is text) and groups up to the same quote, where a backslash
    before that quote keeps it as text; a quoted empty string is an argument; an unclosed quote is
    text and the rest is split as usual."""
    args: list[str] = []
    current = ""
    has_token = False
    quote: str | None = None
    quote_start = 0
    i = 0
    n = len(text)
    while i < n:
        char = text[i]
        if quote:
            if char == "\\" and i + 1 < n and text[i + 1] == quote:
                current += quote
                i += 1
            elif char == quote:
                quote = None
            else:
                current += char
        elif char in "\"'" and not has_token:
            quote, quote_start, has_token = char, i, True
        elif char in JS_WHITESPACE:
            if has_token:
                args.append(current)
                current, has_token = "", False
        else:
            current += char
            has_token = True
        if quote and i == n - 1:  # unclosed: the quote is text, and what follows it is read again
            quote = None
            current = text[quote_start]
            i = quote_start
        i += 1
    if has_token:
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
    match = _COMMAND.fullmatch(text)
    if not match:
        return text
    for template in templates:
        if template.name == match.group(1):
            return substitute_args(template.content, parse_command_args(match.group(2) or ""))
    return text
