"""piwork's own system prompt has the reference's section structure (Pi 1.6 ``buildSystemPromptSections``).

The wording of piwork's sentences is its own, so the comparison is of the structure: the same sections in
the same order, the same tool lines, the caller's rules at the same places among the rules, and every part
that holds the user's text (appended prompt, context files, the skills index, the working directory)
byte for byte once piwork's sentences are set aside.
"""

from __future__ import annotations

import json
import random
import subprocess
from typing import Any

import pytest

from piwork.core.resources import prompt_text as T
from piwork.core.resources.context_files import ContextFile
from piwork.core.resources.skills import Skill, SourceInfo
from piwork.core.resources.system_prompt import SystemPromptInput, system_prompt_sections
from tests.support.reference import MISSING_REASON, NODE, PI_DIST, reference_installed

pytestmark = pytest.mark.oracle

_SCRIPT = """
const [module, payload] = process.argv.slice(1);
const { buildSystemPromptSections } = await import(module);
const out = JSON.parse(payload).map((options) => buildSystemPromptSections(options));
process.stdout.write(JSON.stringify(out));
"""

TOOLS = ["read", "bash", "edit", "write", "grep", "find", "ls", "powershell"]
SNIPPETS = {name: f"{name} snippet" for name in TOOLS if name != "ls"}


def _cases() -> list[dict[str, Any]]:
    rng = random.Random(1600)
    skills = [
        {
            "name": "alpha",
            "description": "Does <a> & 'b'",
            "filePath": "/s/alpha/SKILL.md",
            "baseDir": "/s/alpha",
        },
        {"name": "hidden", "description": "h", "filePath": "/s/h/SKILL.md", "disableModelInvocation": True},
    ]
    files = [{"path": "/w/AGENTS.md", "content": "rules\n"}, {"path": "/w/sub/CLAUDE.md", "content": "more"}]
    cases: list[dict[str, Any]] = [
        {"cwd": "/w"},
        {"cwd": "C:\\proj", "selectedTools": []},
        {"cwd": "/w", "selectedTools": ["bash"], "skills": skills},
        {"cwd": "/w", "selectedTools": ["powershell", "edit"], "skills": skills[:1]},
        {"cwd": "/w", "selectedTools": ["read", "edit"], "hiddenTools": ["read"], "skills": skills},
        {"cwd": "/w", "selectedTools": ["bash", "read"], "hiddenTools": ["bash", "read"], "skills": skills},
        {"cwd": "/w", "skills": skills[1:], "contextFiles": files, "appendSystemPrompt": "APPEND"},
    ]
    for n in range(24):
        tools = [t for t in TOOLS if rng.random() < 0.5]
        rng.shuffle(tools)
        case: dict[str, Any] = {"cwd": rng.choice(["/w", "/home/u/p", "D:\\x\\y"]), "selectedTools": tools}
        if tools and rng.random() < 0.3:
            case["hiddenTools"] = rng.sample(tools, 1)
        case["toolSnippets"] = {k: v for k, v in SNIPPETS.items() if rng.random() < 0.8}
        if rng.random() < 0.5:
            case["promptGuidelines"] = rng.sample(["Prefer tests", "  Use uv  ", "", "Prefer tests"], 2)
        if rng.random() < 0.4:
            case["appendSystemPrompt"] = f"append {n}"
        if rng.random() < 0.5:
            case["contextFiles"] = files[: rng.randint(1, 2)]
        if rng.random() < 0.6:
            case["skills"] = rng.sample(skills, rng.randint(1, 2))
        cases.append(case)
    return cases


def _skill(d: dict[str, Any]) -> Skill:
    path = d["filePath"]
    return Skill(
        d["name"],
        d["description"],
        path,
        d.get("baseDir", ""),
        bool(d.get("disableModelInvocation")),
        SourceInfo(path, "local", "user"),
    )


def _ours(case: dict[str, Any]) -> dict[str, str]:
    tools = case.get("selectedTools", ["read", "bash", "edit", "write"])
    return system_prompt_sections(
        SystemPromptInput(
            cwd=case["cwd"],
            active_tools=tuple(tools),
            tool_snippets=case.get("toolSnippets", {}),
            tool_guidelines=tuple(case.get("promptGuidelines", ())),
            append_text=case.get("appendSystemPrompt"),
            context_files=[ContextFile(f["path"], f["content"]) for f in case.get("contextFiles", [])],
            skills=[_skill(s) for s in case.get("skills", [])],
            docs_dir="/docs",
            hidden_tools=tuple(case.get("hiddenTools", ())),
        )
    )


def _body(section: str, name: str) -> str:
    opening, closing = f"<{name}>\n", f"\n</{name}>"
    assert section.startswith(opening) and section.endswith(closing), section
    return section[len(opening) : -len(closing)]


PIWORK_RULES = {T.SHELL_HINT_BASH, T.SHELL_HINT_POWERSHELL, T.SHELL_HINT_BOTH, *T.ALWAYS_GUIDELINES}


_READERS = {
    T.SKILLS_LOAD_WITH_READ: "read",
    T.SKILLS_LOAD_WITH_BASH: "bash",
    T.SKILLS_LOAD_INDIRECT: "indirect",
    "Use the read tool to load a skill's file when the task matches its description.": "read",
    "Use bash to load a skill's file when the task matches its description.": "bash",
    "Load a skill's file when the task matches its description.": "indirect",
}


def _reader(line: str) -> str:
    """Which tool the skills hint names (piwork's sentence or the reference's)."""
    return _READERS[line]


def _compare(case: dict[str, Any], pi: dict[str, str], ours: dict[str, str]) -> None:
    assert list(ours) == list(pi), case
    for name in pi:
        if name == "preamble":
            continue
        theirs, mine = _body(pi[name], name), _body(ours[name], name)
        if name == "tools":
            assert mine.split("\n\n")[0] == theirs.split("\n\n")[0], case  # the tool lines, or (none)
            assert mine.count("\n\n") == theirs.count("\n\n") == 1
        elif name == "rules":
            their_rules, my_rules = theirs.split("\n"), mine.split("\n")
            assert len(my_rules) == len(their_rules), case
            for their_rule, my_rule in zip(their_rules, my_rules, strict=True):
                if my_rule[2:] not in PIWORK_RULES:
                    assert my_rule == their_rule, case  # the caller's own rules, trimmed, deduplicated
        elif name == "docs":
            assert mine.startswith(T.DOCS_HEADING + "\n- ")
        elif name == "project_context":
            assert mine.split("\n", 1)[1] == theirs.split("\n", 1)[1], case  # after the intro line
        elif name == "skills":
            their_head, their_xml = theirs.split("\n\n<available_skills>")
            my_head, my_xml = mine.split("\n\n<available_skills>")
            assert my_xml == their_xml and my_head.count("\n") == their_head.count("\n") == 2, case
            assert _reader(my_head.split("\n")[1]) == _reader(their_head.split("\n")[1]), case
        else:
            assert mine == theirs, (case, name)


@pytest.mark.skipif(not reference_installed(), reason=MISSING_REASON)
def test_piwork_prompt_has_the_reference_sections() -> None:
    cases = _cases()
    module = PI_DIST / "core" / "system-prompt.js"
    done = subprocess.run(
        [str(NODE), "--input-type=module", "-e", _SCRIPT, str(module), json.dumps(cases)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    results = json.loads(done.stdout)
    for case, pi in zip(cases, results, strict=True):
        _compare(case, pi, _ours(case))
    seen = {name for pi in results for name in pi}
    assert seen == {"preamble", "tools", "rules", "docs", "addendum", "project_context", "skills", "cwd"}
    assert any("Load a skill's file" in pi.get("skills", "") for pi in results)  # the hidden-reader form
    assert results[0]["cwd"] == "<cwd>\n/w\n</cwd>"
