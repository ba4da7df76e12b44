"""resources suite: context_files, load_skills, load_resources, format_skills_for_prompt,
build_system_prompt."""

from __future__ import annotations

from typing import Any

from piwork.conformance.harness import CaseEnv
from piwork.core.resources.context_files import load_context_files
from piwork.core.resources.diagnostics import Diagnostic
from piwork.core.resources.skills import load_skills


def _diag(d: Diagnostic) -> dict[str, Any]:
    out: dict[str, Any] = {"type": d.type, "kind": d.kind or "parse_error", "path": d.path}
    if d.collision is not None:
        out["collision"] = d.collision.to_json()
    return out


def _agent_dir(env: CaseEnv) -> str:
    assert env.agent_dir is not None
    return env.agent_dir


def _context_files(args: dict[str, Any], env: CaseEnv) -> Any:
    result = load_context_files(args["cwd"], _agent_dir(env))
    return {"files": [f.to_json() for f in result.files]}


def _load_skills(args: dict[str, Any], env: CaseEnv) -> Any:
    include = args.get("includeDefaults")
    result = load_skills(
        args["cwd"], _agent_dir(env), args.get("skillPaths") or [], True if include is None else include
    )
    return {
        "skills": [s.to_json() for s in result.skills],
        "diagnostics": [_diag(d) for d in result.diagnostics],
    }


OPS = {
    "context_files": _context_files,
    "load_skills": _load_skills,
}
