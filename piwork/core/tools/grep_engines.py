"""Where grep finds its matches: ripgrep when available, otherwise an equivalent Python search.

Both report the lines to show (matches and their context, in order) to a :class:`GrepCollector`, which
tells them when to stop, and return a :class:`SearchOutcome` with error lines for files that could
not be searched.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from piwork.core.tools.base import ToolError
from piwork.core.tools.grep_output import GrepCollector
from piwork.core.tools.walk import IgnoreMatcher, walk

if TYPE_CHECKING:
    import pathspec

BINARY_SNIFF_BYTES = 8192


@dataclass(frozen=True, slots=True)
class GrepQuery:
    pattern: str
    path: str  # absolute file or folder
    is_dir: bool
    glob: str | None
    ignore_case: bool
    literal: bool
    limit: int
    context: int = 0


@dataclass(slots=True)
class SearchOutcome:
    errors: list[str] = field(default_factory=list)


def find_ripgrep(bin_dir: str | None = None) -> str | None:
    """``rg`` from PATH, else from the agent's ``bin`` folder; never downloaded."""
    found = shutil.which("rg")
    if found:
        return found
    if bin_dir:
        candidate = os.path.join(bin_dir, "rg")
        if os.access(candidate, os.X_OK):
            return candidate
    return None


# -- ripgrep ---------------------------------------------------------------------------------------


def _rg_text(field_value: object) -> str | None:
    if not isinstance(field_value, dict):
        return None
    if isinstance(field_value.get("text"), str):
        return str(field_value["text"])
    if isinstance(field_value.get("bytes"), str):
        return base64.b64decode(field_value["bytes"]).decode("utf-8", "replace")
    return None


def ripgrep_args(query: GrepQuery) -> list[str]:
    """ripgrep's arguments; a folder is searched as ``.`` from inside it, where ``--glob`` is rooted."""
    # --no-config: what the tool promises must not depend on the user's ripgrep configuration
    args = ["--no-config", "--json", "--line-number", "--color=never", "--hidden", "--sort", "path"]
    args += ["--glob", "!.git"]
    if query.ignore_case:
        args.append("--ignore-case")
    if query.literal:
        args.append("--fixed-strings")
    if query.glob:
        args += ["--glob", strip_dot_slash(query.glob)]
    if query.context > 0:
        args += ["--context", str(query.context)]
    # "." rather than the absolute folder: ripgrep resolves its working directory, so a folder reached
    # through a symlink would otherwise not lie under the glob's root
    args += ["--", query.pattern, "." if query.is_dir else query.path]
    return args


def strip_dot_slash(glob: str) -> str:
    """ripgrep never matches a leading ``./`` (``./src/*.py`` finds nothing): drop it, keeping ``!``."""
    return re.sub(r"^(!?)(?:\./)+", r"\1", glob)


async def search_with_ripgrep(rg: str, query: GrepQuery, collector: GrepCollector) -> SearchOutcome:
    proc = await asyncio.create_subprocess_exec(
        rg,
        *ripgrep_args(query),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        limit=1 << 24,
        cwd=query.path if query.is_dir else None,
    )
    assert proc.stdout is not None and proc.stderr is not None
    stderr_task = asyncio.ensure_future(proc.stderr.read())
    outcome = SearchOutcome()
    stopped = False
    try:
        async for raw in proc.stdout:
            try:
                event = json.loads(raw)
            except ValueError:
                continue
            if not isinstance(event, dict) or event.get("type") not in ("match", "context"):
                continue
            data = event.get("data") or {}
            path = _rg_text(data.get("path"))
            line_number = data.get("line_number")
            if not path or not isinstance(line_number, int) or isinstance(line_number, bool):
                continue
            collector.add(path, line_number, _rg_text(data.get("lines")) or "", event["type"] == "match")
            if collector.done:
                stopped = True
                proc.kill()
                break
        code = await proc.wait()
        stderr = (await stderr_task).decode("utf-8", "replace").strip()
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
        stderr_task.cancel()
    if stopped or code in (0, 1):
        if stderr and collector.match_count:
            outcome.errors = stderr.splitlines()
        return outcome
    if collector.match_count:
        outcome.errors = stderr.splitlines() or [f"ripgrep exited with code {code}"]
        return outcome
    raise ToolError(stderr or f"ripgrep exited with code {code}")


# -- Python ----------------------------------------------------------------------------------------


def compile_pattern(query: GrepQuery) -> re.Pattern[str]:
    source = re.escape(query.pattern) if query.literal else query.pattern
    try:
        return re.compile(source, re.IGNORECASE if query.ignore_case else 0)
    except re.error as err:
        caret = " " * (4 + (err.pos or 0)) + "^"
        raise ToolError(f"regex parse error:\n    {query.pattern}\n{caret}\nerror: {err.msg}") from None


def _glob_filter(glob: str | None) -> tuple[pathspec.GitIgnoreSpec | None, bool]:
    if not glob:
        return None, True
    glob = strip_dot_slash(glob)
    negated = glob.startswith("!")
    import pathspec  # tens of milliseconds to import: only once a search filters by a glob

    spec = pathspec.GitIgnoreSpec.from_lines([glob[1:] if negated else glob])
    return spec, not negated


def _candidate_files(query: GrepQuery) -> list[tuple[str, str]]:
    """(absolute path, path relative to the search folder) of every file to search."""
    if not query.is_dir:
        return [(query.path, os.path.basename(query.path))]
    spec, wanted = _glob_filter(query.glob)
    files: list[tuple[str, str]] = []
    for entry in walk(query.path, IgnoreMatcher(query.path, ".rgignore", require_git=True)):
        if entry.is_dir:
            continue
        if spec is not None and spec.match_file(entry.rel) != wanted:
            continue
        files.append((entry.path, entry.rel))
    return files


def _reported_lines(lines: list[str], regex: re.Pattern[str], context: int) -> Iterator[tuple[int, bool]]:
    """(1-based number, is match) of each line ripgrep would report: matches and merged context."""
    shown_until = 0  # last line number already reported
    pending_end = 0  # context after the latest match reaches this line
    for index, line in enumerate(lines):
        number = index + 1
        if regex.search(line):
            for before in range(max(shown_until + 1, number - context), number):
                yield before, False
            yield number, True
            shown_until = number
            pending_end = number + context
        elif number <= pending_end:
            yield number, False
            shown_until = number


def search_in_python(query: GrepQuery, collector: GrepCollector, cancelled: list[bool]) -> SearchOutcome:
    """Search with Python's ``re`` (blocking; checks ``cancelled[0]`` between files)."""
    regex = compile_pattern(query)
    outcome = SearchOutcome()
    for absolute, _rel in _candidate_files(query):
        if cancelled[0] or collector.done:
            break
        try:
            with open(absolute, "rb") as handle:
                data = handle.read()
        except OSError as err:
            reason = err.strerror or str(err)
            outcome.errors.append(f"rg: {absolute}: {reason} (os error {err.errno})")
            continue
        if b"\0" in data[:BINARY_SNIFF_BYTES] or (query.is_dir and b"\0" in data):
            continue
        lines = data.decode("utf-8", "replace").split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        for number, is_match in _reported_lines(lines, regex, query.context):
            collector.add(absolute, number, lines[number - 1], is_match)
            if collector.done:
                break
    return outcome
