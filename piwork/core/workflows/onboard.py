"""``/onboard run``: create the project's context layers that are missing.

With trust decided (the files configure behaviour and reach the model), it writes, each only when it is
not there yet (``refresh`` rewrites the generated ones):

- ``.pi/context-index.json``: built deterministically from the repository (:mod:`.index_builder`);
- ``.pi/project-context.md``: one model call summarising the index (through the session's summarizer),
  or, without a model or when the call fails, a deterministic snapshot assembled from the index;
- ``.pi/piwork-profile.json``: the profile template (never overwritten: it is the user's configuration).

Every file is written atomically (a temporary file, then a link or rename into place), so a reader never
sees half a file and an existing file is never replaced unless asked.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
import uuid
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from piwork.core.compaction.summarize import Summarizer, SummaryCancelled, SummaryFailed, check_response
from piwork.core.context.index import ContextIndex, index_path, sanitize, write_index
from piwork.core.context.index_builder import build_index, folder_summaries, project_files
from piwork.core.context.layers import PROFILE_PATH, SNAPSHOT_PATH
from piwork.core.errors import PiworkError
from piwork.core.llm.types import LlmContext
from piwork.core.resources.profile import PROFILE_TEMPLATE, inferred_verify

FileStatus = Literal["created", "refreshed", "kept", "failed"]
SNAPSHOT_MAX_TOKENS = 2_048
SNAPSHOT_ENTRIES = 120  # index entries shown to the model (and in the deterministic snapshot)
SNAPSHOT_SYSTEM = (
    "You write short project snapshots for a coding agent. You receive a map of a repository (one line per "
    "folder with a summary and its files) and describe the project from it. Use only what the map says."
)
SNAPSHOT_INSTRUCTIONS = """Write the project snapshot as Markdown, at most about 400 words:

# Project snapshot
One or two sentences: what the project is.
## Layout
The main folders and what each holds (a bullet each, the most important first).
## Entry points
Where execution starts and where a newcomer should begin reading, if the map shows it.
## Tests and tooling
Where the tests live and what tools the files suggest, if the map shows it.

Say nothing the map does not support; the agent will read the real files before acting on it."""


@dataclass(frozen=True)
class OnboardFile:
    kind: str  # index | snapshot | profile
    path: str
    status: FileStatus
    detail: str = ""

    def to_json(self) -> dict[str, Any]:
        out = {"kind": self.kind, "path": self.path, "status": self.status}
        if self.detail:
            out["detail"] = self.detail
        return out


@dataclass(frozen=True)
class OnboardResult:
    ok: bool
    message: str
    files: tuple[OnboardFile, ...] = ()
    modules: int = 0
    cited_files: int = 0
    file_source: str = ""  # git | walk
    snapshot_source: str | None = None  # model | index (deterministic) | None (not written)
    notes: tuple[str, ...] = field(default=())
    usage: dict[str, Any] | None = None  # the snapshot call's usage: billed traffic like any model call

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "message": self.message,
            "files": [f.to_json() for f in self.files],
            "modules": self.modules,
            "citedFiles": self.cited_files,
            "fileSource": self.file_source,
            "snapshotSource": self.snapshot_source,
            "notes": list(self.notes),
            "usage": self.usage,
        }


# ----------------------------------------------------------------------------- writing files


def write_new_file(path: str, text: str, replace_existing: bool = False) -> bool:
    """Write ``text`` to ``path`` atomically; unless ``replace_existing``, never over an existing file.
    Returns False (writing nothing) when the file exists and may not be replaced."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    with open(tmp, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(text)
    try:
        if replace_existing:
            os.replace(tmp, path)
            return True
        try:
            os.link(tmp, path)  # fails when the file exists: no window in which it could be replaced
        except FileExistsError:
            return False
        except OSError:  # a file system without hard links
            if os.path.lexists(path):
                return False
            os.replace(tmp, path)
        return True
    finally:
        if os.path.lexists(tmp):
            os.unlink(tmp)


# ----------------------------------------------------------------------------- the snapshot


def _map_lines(index: ContextIndex) -> list[str]:
    lines = []
    folders = folder_summaries(index.entries)
    for folder in folders[:SNAPSHOT_ENTRIES]:
        names = folder.names
        files = ", ".join(names[:12])
        more = f" (+{len(names) - 12} more)" if len(names) > 12 else ""
        count = f"({len(names)} file{'s' if len(names) != 1 else ''})"
        about = f"{sanitize(folder.summary)} {count}" if folder.summary else count
        lines.append(f"- {sanitize(folder.folder, 120)}: {about} [files: {files}{more}]")
    if len(folders) > SNAPSHOT_ENTRIES:
        lines.append(f"- … {len(folders) - SNAPSHOT_ENTRIES} more folders")
    return lines


def snapshot_prompt(index: ContextIndex, project: str) -> str:
    body = "\n".join(_map_lines(index))
    return f'<repository_map project="{sanitize(project, 120)}">\n{body}\n</repository_map>\n\n{SNAPSHOT_INSTRUCTIONS}'


def deterministic_snapshot(index: ContextIndex, project: str) -> str:
    """The snapshot without a model: the index's folders and summaries, as a Markdown list."""
    root = next((f for f in folder_summaries(index.entries) if f.folder == "." and f.summary), None)
    lines = [
        "# Project snapshot",
        "",
        f"{sanitize(project, 120)}: {sanitize(root.summary) if root else 'a repository'}.",
        "",
        "Assembled by piwork from the context index, without a model. These are hints: read the real "
        "files before editing.",
        "",
        "## Layout",
        *_map_lines(index),
    ]
    return "\n".join(lines) + "\n"


async def model_snapshot(
    summarizer: Summarizer, index: ContextIndex, project: str
) -> tuple[str, dict[str, Any] | None]:
    """One model call summarising the index (no retries, no tools) and its usage; raises when it gives no
    usable text."""
    user = {
        "role": "user",
        "content": [{"type": "text", "text": snapshot_prompt(index, project)}],
        "timestamp": int(time.time() * 1000),
    }
    options = replace(
        summarizer.base_options,
        api_key=summarizer.api_key,
        headers=summarizer.headers,
        max_tokens=SNAPSHOT_MAX_TOKENS,
        thinking_level="off",
        cache_retention="none",
        session_id=str(uuid.uuid4()),
    )
    response = await summarizer.complete(summarizer.model, LlmContext(SNAPSHOT_SYSTEM, [user], []), options)
    text = check_response(response, "The project snapshot").strip()
    if not text:
        raise SummaryFailed("The project snapshot came back empty")
    usage = response.get("usage")
    return text + "\n", dict(usage) if isinstance(usage, dict) else None


# ----------------------------------------------------------------------------- /onboard run


async def onboard(
    cwd: str, trusted: bool, summarizer: Summarizer | None, refresh: bool = False
) -> OnboardResult:
    """Create the missing context layers of ``cwd`` (``refresh``: rebuild the index and the snapshot)."""
    root = os.path.abspath(cwd)
    if not trusted:
        return OnboardResult(
            False,
            "The project is not trusted: /onboard run writes files that configure piwork and reach the model. "
            "Trust the project first (/trust).",
        )
    files: list[OnboardFile] = []
    notes: list[str] = []
    listed = await asyncio.to_thread(project_files, root)
    index = await asyncio.to_thread(build_index, root, listed)
    if listed.truncated:
        notes.append(f"Only the first {len(listed.paths):,} files were indexed.")
    path = index_path(root)
    existed = os.path.lexists(path)
    if existed and not refresh:
        files.append(OnboardFile("index", path, "kept", "exists; /onboard run --refresh rebuilds it"))
    else:
        try:
            await asyncio.to_thread(write_index, root, index)
            files.append(OnboardFile("index", path, "refreshed" if existed else "created"))
        except OSError as err:
            files.append(OnboardFile("index", path, "failed", err.strerror or str(err)))

    snapshot_source: str | None = None
    usage: dict[str, Any] | None = None
    snapshot = os.path.join(root, SNAPSHOT_PATH)
    existed = os.path.lexists(snapshot)
    if existed and not refresh:
        files.append(OnboardFile("snapshot", snapshot, "kept", "exists; /onboard run --refresh rewrites it"))
    else:
        project = os.path.basename(root)
        text: str | None = None
        if summarizer is None:
            notes.append("No model is chosen: the snapshot was assembled from the index.")
        else:
            try:
                text, usage = await model_snapshot(summarizer, index, project)
                snapshot_source = "model"
            except SummaryCancelled:
                raise
            except (PiworkError, OSError) as err:
                notes.append(f"The model's snapshot failed ({err}); it was assembled from the index instead.")
        if text is None:
            text = deterministic_snapshot(index, project)
            snapshot_source = "index"
        try:
            written = await asyncio.to_thread(write_new_file, snapshot, text, refresh)
            status: FileStatus = "refreshed" if existed else "created"
            files.append(OnboardFile("snapshot", snapshot, status if written else "kept"))
        except OSError as err:
            files.append(OnboardFile("snapshot", snapshot, "failed", err.strerror or str(err)))
            snapshot_source = None

    profile = os.path.join(root, PROFILE_PATH)
    verify = await asyncio.to_thread(inferred_verify, root)  # the project's own test command, when found
    template = json.dumps({**PROFILE_TEMPLATE, "verify": verify}, indent=2) + "\n"
    try:
        created = await asyncio.to_thread(write_new_file, profile, template)
        detail = "" if created else "exists; your profile is never replaced"
        files.append(OnboardFile("profile", profile, "created" if created else "kept", detail))
    except OSError as err:
        files.append(OnboardFile("profile", profile, "failed", err.strerror or str(err)))

    failed = [f for f in files if f.status == "failed"]
    done = [f for f in files if f.status in ("created", "refreshed")]
    if failed:
        message = (
            "Onboarding could not write " + ", ".join(os.path.relpath(f.path, root) for f in failed) + "."
        )
    elif done:
        message = "Onboarded: " + ", ".join(f"{os.path.relpath(f.path, root)} {f.status}" for f in done) + "."
    else:
        message = "Nothing to do: every context layer exists (/onboard run --refresh rebuilds the index and snapshot)."
    return OnboardResult(
        not failed,
        message,
        tuple(files),
        len(folder_summaries(index.entries)),  # folders ("modules") holding indexed files
        sum(len(e.files) for e in index.entries),
        listed.source,
        snapshot_source,
        tuple(notes),
        usage,
    )
