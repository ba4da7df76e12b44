from __future__ import annotations

from piwork.core.resources.context_files import load_context_files
from piwork.core.resources.prompts import (
    expand_prompt_template,
    load_prompt_templates,
    parse_command_args,
    substitute_args,
)

from .conftest import Tree


def test_context_order_one_per_folder_and_bom(tree: Tree) -> None:
    tree.write("home/.pi/agent/AGENTS.md", "global")
    tree.write("w/CLAUDE.md", "w claude")
    tree.write("w/AGENTS.md", "\ufeffw agents")
    tree.mkdir("w/p/AGENTS.md")  # a folder with that name is skipped
    tree.write("w/p/CLAUDE.MD", "p")
    result = load_context_files(str(tree.root / "w/p"), str(tree.agent))
    assert [f.content for f in result.files] == ["global", "w agents", "p"]
    states = {(c.path.rsplit("/", 1)[1], c.state) for c in result.candidates if "/w/" in c.path + "/"}
    assert ("CLAUDE.md", "not-selected") in states
    assert load_context_files(str(tree.root / "w/p"), str(tree.agent), enabled=False).files == []


def test_nested_worktree_shadows_same_named_main_file(tree: Tree) -> None:
    tree.write("repo/.git/HEAD", "ref: main\n")
    tree.write("repo/AGENTS.md", "main")
    tree.write("repo/CLAUDE.md", "main claude")
    tree.write("repo/.git/worktrees/f/HEAD", "ref: f\n")
    tree.write("repo/.git/worktrees/f/commondir", "../..\n")
    tree.write("repo/wt/f/.git", f"gitdir: {tree.root}/repo/.git/worktrees/f\n")
    tree.write("repo/wt/f/AGENTS.md", "worktree")
    result = load_context_files(str(tree.root / "repo/wt/f"), str(tree.agent))
    assert [f.content for f in result.files] == ["worktree"]
    assert any(c.state == "shadowed" for c in result.candidates)


def test_argument_substitution() -> None:
    args = parse_command_args("""one "two words" 'three' four""")
    assert args == ["one", "two words", "three", "four"]
    text = "$1|$2|$@|${@:2}|${@:2:1}|${5:-dflt}|$ARGUMENTS|${@:0}|$9"
    assert substitute_args(text, args) == (
        "one|two words|one two words three four|two words three four|two words|dflt|"
        "one two words three four|one two words three four|"
    )
    assert substitute_args("$1", ["$2"]) == "$2"  # single pass


def test_template_discovery_and_expansion(tree: Tree) -> None:
    tree.write("prompts/fix.md", "---\ndescription: Fix things\nargument-hint: <file>\n---\nFix $1 now")
    tree.write("prompts/long.md", "\n\n  " + "x" * 70 + "\nmore")
    tree.write("prompts/sub/deep.md", "not top level")
    templates = load_prompt_templates(str(tree.root), str(tree.agent), ["prompts"])
    assert [t.name for t in templates] == ["fix", "long"]
    assert templates[0].argument_hint == "<file>" and templates[1].description == "  " + "x" * 58 + "..."
    assert expand_prompt_template("/fix a.py", templates) == "Fix a.py now"
    assert expand_prompt_template("/nope x", templates) == "/nope x"
