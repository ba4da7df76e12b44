from __future__ import annotations

import pytest

from piwork.core.resources import prompt_text as T
from piwork.core.resources.context_files import ContextFile
from piwork.core.resources.skills import Skill, SourceInfo, load_skill_file
from piwork.core.resources.system_prompt import (
    SkillExpansionError,
    SystemPromptInput,
    build_system_prompt,
    expand_skill_command,
    parse_skill_invocation,
    render_system_sections,
    section_of,
    system_prompt_parts,
    system_prompt_sections,
)

from .conftest import Tree, skill_text

SKILL_BLOCK = r'^<skill name="([^"]+)" location="([^"]+)">\n([\s\S]*?)\n</skill>(?:\n\n([\s\S]+))?$'


def skill(name: str, hidden: bool = False) -> Skill:
    return Skill(
        name, f"{name} <desc>", f"/s/{name}/SKILL.md", f"/s/{name}", hidden, SourceInfo("/s", "local", "user")
    )


def test_default_path_is_the_role_then_tagged_sections() -> None:
    text = build_system_prompt(SystemPromptInput(cwd="C:\\p\\x", active_tools=("edit",), docs_dir=None))
    rules = "\n".join(f"- {rule}" for rule in T.ALWAYS_GUIDELINES)
    assert text == (
        f"{T.ROLE}\n\n<tools>\n(none)\n\n{T.OTHER_TOOLS_NOTE}\n</tools>\n\n<rules>\n{rules}\n</rules>"
        "\n\n<cwd>\nC:/p/x\n</cwd>"
    )


def test_default_path_with_every_section() -> None:
    prompt = SystemPromptInput(
        cwd="/w",
        active_tools=("read", "bash", "edit"),
        tool_snippets={"read": "Read\r\n  a file ", "edit": "Edit files", "write": "not active"},
        tool_guidelines=("Prefer tests",),
        append_text="APPEND",
        context_files=[ContextFile("/w/AGENTS.md", "ctx\n")],
        skills=[skill("a")],
        docs_dir="/docs",
    )
    parts = system_prompt_parts(prompt)
    assert [p.name for p in parts] == [
        "role", "tools", "rules", "docs", "addendum", "project_context", "skills", "cwd"
    ]  # fmt: skip
    assert (
        parts[1].text
        == f"\n\n<tools>\n- read: Read a file\n- edit: Edit files\n\n{T.OTHER_TOOLS_NOTE}\n</tools>"
    )
    assert (
        parts[2].text
        == "\n\n<rules>\n"
        + "\n".join(f"- {rule}" for rule in (T.SHELL_HINT_BASH, "Prefer tests", *T.ALWAYS_GUIDELINES))
        + "\n</rules>"
    )
    assert parts[3].text == "\n\n<docs>\n" + "\n".join([T.DOCS_HEADING, *T.docs_lines("/docs")]) + "\n</docs>"
    assert parts[4].text == "\n\n<addendum>\nAPPEND\n</addendum>"
    assert parts[5].text == (
        f"\n\n<project_context>\n{T.PROJECT_CONTEXT_INTRO}\n\n"
        '<project_instructions path="/w/AGENTS.md">\nctx\n\n</project_instructions>\n</project_context>'
    )
    assert parts[6].text == (
        f"\n\n<skills>\n{T.SKILLS_PREAMBLE}\n{T.SKILLS_LOAD_WITH_READ}\n{T.SKILLS_RELATIVE_PATHS}\n\n"
        "<available_skills>\n  <skill>\n    <name>a</name>\n    <description>a &lt;desc&gt;</description>\n"
        "    <location>/s/a/SKILL.md</location>\n  </skill>\n</available_skills>\n</skills>"
    )
    assert parts[7].text == "\n\n<cwd>\n/w\n</cwd>"


def test_sections_render_to_the_prompt() -> None:
    prompt = SystemPromptInput(cwd="/w", custom_prompt="CUSTOM", append_text="A", skills=[skill("a")])
    sections = system_prompt_sections(prompt)
    assert list(sections) == ["preamble", "addendum", "skills", "cwd"]
    assert sections["preamble"] == "CUSTOM" and sections["addendum"] == "<addendum>\nA\n</addendum>"
    assert render_system_sections("", sections) == build_system_prompt(prompt)
    assert render_system_sections("", {**sections, "addendum": None}) == (
        "CUSTOM\n\n" + sections["skills"] + "\n\n<cwd>\n/w\n</cwd>"
    )
    assert render_system_sections("FORCED", {}) == "FORCED"
    assert [section_of(p.name) for p in system_prompt_parts(prompt)] == list(sections)


def test_rules_hint_variants_and_dedup() -> None:
    def rules(tools: tuple[str, ...], extra: tuple[str, ...] = ()) -> str:
        return build_system_prompt(SystemPromptInput(cwd="/w", active_tools=tools, tool_guidelines=extra))

    assert T.SHELL_HINT_BASH in rules(("bash",))
    assert T.SHELL_HINT_POWERSHELL in rules(("powershell",))
    assert T.SHELL_HINT_BOTH in rules(("bash", "powershell"))
    assert T.SHELL_HINT_BASH not in rules(("bash", "grep"))
    text = rules(("read",), ("  Use uv ", "Use uv", "", T.ALWAYS_GUIDELINES[0]))
    assert text.count("- Use uv\n") == 1 and text.count(T.ALWAYS_GUIDELINES[0]) == 1


def test_replacement_path_keeps_only_the_added_sections() -> None:
    prompt = SystemPromptInput(
        cwd="/w",
        custom_prompt="CUSTOM",
        append_text="APPEND",
        context_files=[ContextFile("/w/AGENTS.md", "ctx\n"), ContextFile("/AGENTS.md", "")],
        skills=[skill("a"), skill("b", hidden=True)],
        active_tools=("bash",),
    )
    parts = system_prompt_parts(prompt)
    assert [p.name for p in parts] == ["custom", "addendum", "project_context", "skills", "cwd"]
    text = build_system_prompt(prompt)
    assert text == "".join(p.text for p in parts) and text.endswith("\n\n<cwd>\n/w\n</cwd>")
    assert text.startswith("CUSTOM\n\n<addendum>\nAPPEND\n</addendum>\n\n<project_context>\n")
    assert (
        '<project_instructions path="/w/AGENTS.md">\nctx\n\n</project_instructions>\n\n'
        '<project_instructions path="/AGENTS.md">\n\n</project_instructions>\n</project_context>'
    ) in text
    assert T.SKILLS_LOAD_WITH_BASH in text and "<name>b</name>" not in text and "a &lt;desc&gt;" in text
    assert build_system_prompt(prompt) == text  # byte-stable, no timestamps
    only_hidden = SystemPromptInput(cwd="/w", skills=[skill("b", hidden=True)])
    assert "skills>" not in build_system_prompt(only_hidden)
    powershell_only = SystemPromptInput(cwd="/w", skills=[skill("a")], active_tools=("powershell",))
    assert "skills>" not in build_system_prompt(powershell_only)
    # an empty replacement counts as none: piwork's own role and sections
    assert build_system_prompt(SystemPromptInput(cwd="/w", custom_prompt="")).startswith(
        T.ROLE + "\n\n<tools>"
    )


def test_a_hidden_reader_keeps_the_skills_with_a_hint_naming_no_tool() -> None:
    prompt = SystemPromptInput(
        cwd="/w", skills=[skill("a")], active_tools=("read", "edit"), hidden_tools=("read",)
    )
    text = build_system_prompt(prompt)
    assert T.SKILLS_LOAD_INDIRECT in text and "<name>a</name>" in text
    assert "- read:" not in text  # a hidden tool is not declared in <tools>
    shown = build_system_prompt(
        SystemPromptInput(cwd="/w", skills=[skill("a")], active_tools=("bash", "read"))
    )
    assert T.SKILLS_LOAD_WITH_READ in shown and T.SKILLS_LOAD_INDIRECT not in shown


def test_skill_command_expansion(tree: Tree) -> None:
    import re

    path = tree.write("s/hidden/SKILL.md", skill_text("hidden", extra="disable-model-invocation: true\n"))
    loaded, _ = load_skill_file(str(path), "user")
    assert loaded is not None and loaded.disable_model_invocation
    text = expand_skill_command("/skill:hidden\nplease do it ", [loaded])
    match = re.match(SKILL_BLOCK, text)
    assert match and match.group(1) == "hidden" and match.group(4) == "please do it"
    assert "Body of hidden." in match.group(3) and "name:" not in match.group(3)
    assert expand_skill_command("/skill:hidden", [loaded]).endswith("</skill>")
    parsed = parse_skill_invocation(text)
    assert parsed is not None and (parsed.name, parsed.location) == ("hidden", str(path))
    assert parsed.args == "please do it" and parsed.body == match.group(3)
    bare = parse_skill_invocation(expand_skill_command("/skill:hidden", [loaded]))
    assert bare is not None and bare.args == ""
    assert parse_skill_invocation("plain <skill> talk") is None
    assert expand_skill_command("/skill:unknown x", [loaded]) == "/skill:unknown x"
    path.unlink()
    with pytest.raises(SkillExpansionError, match=r"SKILL\.md"):
        expand_skill_command("/skill:hidden", [loaded])
