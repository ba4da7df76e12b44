"""Diffs for the edit tool's details: a numbered display diff and a unified patch (UI only)."""

from __future__ import annotations

import difflib
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class _Part:
    kind: str  # "equal", "removed" or "added"
    lines: list[str]


def _split_keep_ends(text: str) -> list[str]:
    if not text:
        return []
    parts = text.split("\n")
    lines = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def _parts(old: str, new: str) -> list[_Part]:
    a, b = _split_keep_ends(old), _split_keep_ends(new)
    parts: list[_Part] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            parts.append(_Part("equal", a[i1:i2]))
            continue
        if i2 > i1:
            parts.append(_Part("removed", a[i1:i2]))
        if j2 > j1:
            parts.append(_Part("added", b[j1:j2]))
    return parts


@dataclass(frozen=True, slots=True)
class DisplayDiff:
    diff: str
    first_changed_line: int | None


def display_diff(old: str, new: str, context: int = 4) -> DisplayDiff:
    """``+NN line`` / ``-NN line`` / `` NN line`` rows, `` ...`` for skipped context."""
    parts = _parts(old, new)
    width = len(str(max(len(old.split("\n")), len(new.split("\n")))))
    out: list[str] = []
    old_no = new_no = 1
    first: int | None = None
    last_was_change = False

    def context_rows(lines: list[str]) -> None:
        nonlocal old_no, new_no
        for line in lines:
            out.append(f" {str(old_no).rjust(width)} {line}")
            old_no += 1
            new_no += 1

    def skip(count: int) -> None:
        nonlocal old_no, new_no
        out.append(f" {''.rjust(width)} ...")
        old_no += count
        new_no += count

    for index, part in enumerate(parts):
        lines = [line[:-1] if line.endswith("\n") else line for line in part.lines]
        if part.kind != "equal":
            if first is None:
                first = new_no
            for line in lines:
                if part.kind == "added":
                    out.append(f"+{str(new_no).rjust(width)} {line}")
                    new_no += 1
                else:
                    out.append(f"-{str(old_no).rjust(width)} {line}")
                    old_no += 1
            last_was_change = True
            continue
        next_is_change = index + 1 < len(parts) and parts[index + 1].kind != "equal"
        if last_was_change and next_is_change:
            if len(lines) <= context * 2:
                context_rows(lines)
            else:
                context_rows(lines[:context])
                skip(len(lines) - 2 * context)
                context_rows(lines[-context:])
        elif last_was_change:
            context_rows(lines[:context])
            if len(lines) > context:
                skip(len(lines) - context)
        elif next_is_change:
            skipped = max(0, len(lines) - context)
            if skipped:
                skip(skipped)
            context_rows(lines[skipped:])
        else:
            old_no += len(lines)
            new_no += len(lines)
        last_was_change = False
    return DisplayDiff("\n".join(out), first)


def unified_patch(path: str, old: str, new: str, context: int = 4) -> str:
    """A unified diff with ``--- path`` / ``+++ path`` headers."""
    a, b = _split_keep_ends(old), _split_keep_ends(new)
    rows = [f"--- {path}\n", f"+++ {path}\n"]
    for row in list(difflib.unified_diff(a, b, n=context))[2:]:
        if row.endswith("\n"):
            rows.append(row)
        else:
            rows.append(row + "\n\\ No newline at end of file\n")
    return "".join(rows)
