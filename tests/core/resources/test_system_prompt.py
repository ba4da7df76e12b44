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
    system_prompt_parts,
)

from .conftest import Tree, skill_text

SKILL_BLOCK = r'^<skill name="([^"]+)" location="([^"]+)">\n([\s\S]*?)\n</skill>(?:\n\n([\s\S]+))?$'


def skill(name: str, hidden: bool = False) -> Skill:
    return Skill(
        name, f"{name} <desc>", f"/s/{name}/SKILL.md", f"/s/{name}", hidden, SourceInfo("/s", "local", "user")
    )


def test_default_path_layout() -> None:
    text = build_system_prompt(SystemPromptInput(cwd="C:\\p\\x", active_tools=("edit",), docs_dir=None))
    assert text.startswith(T.ROLE + "\n\n" + T.TOOLS_HEADING + "\n(none)\n\n" + T.OTHER_TOOLS_NOTE + "\n\n")
    assert T.DOCS_HEADING not in text and text.endswith("\n" + T.CWD_LABEL + " C:/p/x")
    assert "<available_skills>" not in text


def test_guidelines_hint_variants_and_dedup() -> None:
    def guidelines(tools: tuple[str, ...], extra: tuple[str, ...] = ()) -> str:
        return build_system_prompt(SystemPromptInput(cwd="/w", active_tools=tools, tool_guidelines=extra))

    assert T.SHELL_HINT_BASH in guidelines(("bash",))
    assert T.SHELL_HINT_POWERSHELL in guidelines(("powershell",))
    assert T.SHELL_HINT_BOTH in guidelines(("bash", "powershell"))
    assert T.SHELL_HINT_BASH not in guidelines(("bash", "grep"))
    text = guidelines(("read",), ("  Use uv ", "Use uv", "", T.ALWAYS_GUIDELINES[0]))
    assert text.count("- Use uv\n") == 1 and text.count(T.ALWAYS_GUIDELINES[0]) == 1


def test_replacement_path_and_parts() -> None:
    prompt = SystemPromptInput(
        cwd="/w",
        custom_prompt="CUSTOM",
        append_text="APPEND",
        context_files=[ContextFile("/w/AGENTS.md", "ctx\n")],
        skills=[skill("a"), skill("b", hidden=True)],
        active_tools=("bash",),
    )
    parts = system_prompt_parts(prompt)
    assert [p.name for p in parts] == ["custom", "append", "project_context", "skills", "cwd"]
    text = build_system_prompt(prompt)
    assert text == "".join(p.text for p in parts) and text.endswith("\n" + T.CWD_LABEL + " /w\n")
    assert '<project_instructions path="/w/AGENTS.md">\nctx\n\n</project_instructions>' in text
    assert T.SKILLS_LOAD_WITH_BASH in text and "<name>b</name>" not in text and "a &lt;desc&gt;" in text
    assert build_system_prompt(prompt) == text  # byte-stable, no timestamps
    only_hidden = SystemPromptInput(cwd="/w", skills=[skill("b", hidden=True)])
    assert "available_skills" not in build_system_prompt(only_hidden)
    powershell_only = SystemPromptInput(cwd="/w", skills=[skill("a")], active_tools=("powershell",))
    assert "available_skills" not in build_system_prompt(powershell_only)


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
