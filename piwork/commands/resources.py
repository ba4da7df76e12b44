"""``piwork resources``: what piwork would load for a folder, in precedence order, and why.

    piwork resources [--cwd DIR] [--json] [--approve | --no-approve] [--system-prompt]
                     [--no-skills] [--skill PATH]... [--no-context-files]

Project trust is decided before any project resource is read. Without ``--approve`` and with the
``ask`` policy nobody can be asked here, so an undecided project is treated as untrusted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from typing import Any, TextIO

from piwork.core.agent import prompt_parts_for
from piwork.core.context import cap_context_files
from piwork.core.paths import agent_dir as default_agent_dir
from piwork.core.resources import (
    MCP_NOTE,
    LoadedResources,
    LoaderOptions,
    TrustResolver,
    TrustStore,
    load_project,
)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="piwork resources", description=__doc__.split("\n\n")[0])
    parser.add_argument("--cwd", default=os.getcwd(), help="project folder (default: current folder)")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    trust = parser.add_mutually_exclusive_group()
    trust.add_argument("-a", "--approve", action="store_true", help="trust the project for this run only")
    trust.add_argument(
        "-na", "--no-approve", action="store_true", help="do not trust the project for this run"
    )
    parser.add_argument("--system-prompt", action="store_true", help="also print the assembled system prompt")
    parser.add_argument("--no-skills", action="store_true", help="load only skills given with --skill")
    parser.add_argument(
        "--skill", action="append", default=[], metavar="PATH", help="an extra skill file or folder"
    )
    parser.add_argument(
        "-nc", "--no-context-files", action="store_true", help="leave out AGENTS.md/CLAUDE.md files"
    )
    return parser


def main(argv: list[str], out: TextIO | None = None) -> int:
    out = out or sys.stdout
    ns = _parser().parse_args(argv)
    cwd = os.path.abspath(ns.cwd)
    if not os.path.isdir(cwd):
        print(f"piwork resources: {cwd} is not a folder", file=sys.stderr)
        return 2
    agent = str(default_agent_dir())
    override = True if ns.approve else False if ns.no_approve else None
    options = LoaderOptions(
        additional_skill_paths=ns.skill,
        no_skills=ns.no_skills,
        no_context_files=ns.no_context_files,
        context_file_cap=cap_context_files,
    )
    resolver = TrustResolver(TrustStore(agent), ask=None)
    loaded = asyncio.run(load_project(cwd, agent, resolver, options, override=override))
    parts = prompt_parts_for(loaded)  # a new session's: the default tools, no task yet
    system_prompt = "".join(part.text for part in parts)
    if ns.json:
        doc = _as_json(loaded)
        if ns.system_prompt:
            doc["systemPrompt"] = system_prompt
            doc["systemPromptParts"] = [{"name": p.name, "text": p.text} for p in parts]
        out.write(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
        return 0
    _print_text(loaded, out)
    if ns.system_prompt:
        out.write("\n== System prompt ==\n")
        out.write(system_prompt + "\n")
    return 0


def _as_json(loaded: LoadedResources) -> dict[str, Any]:
    trust = loaded.trust.to_json() if loaded.trust else None
    return {
        "cwd": loaded.cwd,
        "agentDir": loaded.agent_dir,
        "trust": trust,
        "resources": [row.to_json() for row in loaded.rows],
        "settingsProblems": [p.to_json() for p in loaded.settings.problems],
        "settingsWarnings": loaded.settings.type_warnings,
        "warnings": loaded.prompt_sources.warnings,
    }


def _print_text(loaded: LoadedResources, out: TextIO) -> None:
    state = loaded.trust
    out.write(f"Folder: {loaded.cwd}\n")
    if state is not None:
        out.write(f"Project trust: {state.describe()}\n")
        for resource in state.resources:
            note = f"; {MCP_NOTE}" if resource.kind == "mcp" else ""
            out.write(f"  needs trust: {resource.path} ({resource.kind}{note})\n")
        for warning in state.warnings:
            out.write(f"  warning: {warning}\n")
        if state.source == "no-ui":
            out.write("  (pass --approve to load this project's resources for one run)\n")
    current = None
    for row in loaded.rows:
        if row.kind != current:
            current = row.kind
            out.write(f"\n== {row.kind} ==\n")
        extra = f" (winner: {row.winner_path})" if row.winner_path else ""
        settings_scope = f"/{row.settings_scope}" if row.settings_scope else ""
        hidden = (
            ""
            if row.kind != "skill" or row.model_visible or row.state != "active"
            else " [hidden from model]"
        )
        out.write(
            f"  [{row.state}] {row.name}  {row.scope}{settings_scope}  {row.path or '-'}{extra}{hidden}\n"
        )
        for diagnostic in row.diagnostics:
            out.write(f"      {diagnostic.type}: {diagnostic.message}\n")
    for problem in loaded.settings.problems:
        out.write(f"\nsettings {problem.scope}: {problem.path}: {problem.message}\n")
    for warning in [*loaded.settings.type_warnings, *loaded.prompt_sources.warnings]:
        out.write(f"warning: {warning}\n")
