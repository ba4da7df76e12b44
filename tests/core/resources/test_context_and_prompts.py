from __future__ import annotations

import os

import pytest

from piwork.core.resources.context_files import load_context_files
from piwork.core.resources.prompts import (
    PromptsResult,
    dedupe_prompts,
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
    loaded = load_prompt_templates(str(tree.root), str(tree.agent), ["prompts"])
    templates = loaded.prompts
    assert [t.name for t in templates] == ["fix", "long"] and loaded.diagnostics == []
    assert templates[0].argument_hint == "<file>" and templates[1].description == "  " + "x" * 58 + "..."
    assert templates[1].argument_hint is None
    assert expand_prompt_template("/fix a.py", templates) == "Fix a.py now"
    assert expand_prompt_template("/nope x", templates) == "/nope x"
    assert expand_prompt_template("/fix\u00a0b.py", templates) == "Fix b.py now"  # JS whitespace


def test_non_text_description_and_hint_are_ignored(tree: Tree) -> None:
    tree.write("p/num.md", "---\ndescription: 42\nargument-hint: [a, b]\n---\nFirst line\nsecond")
    tree.write("p/yes.md", "---\ndescription: true\nargument-hint: ''\n---\n\n  Body line")
    tree.write("p/empty.md", "---\ndescription: ''\n---\n")
    tree.write("p/list.md", "---\n- a\n- b\n---\nList body")
    loaded = load_prompt_templates(str(tree.root), str(tree.agent), ["p"])
    assert [(t.name, t.description, t.argument_hint) for t in loaded.prompts] == [
        ("empty", "", None),
        ("list", "List body", None),
        ("num", "First line", None),
        ("yes", "Body line", None),  # the body after frontmatter is trimmed
    ]
    assert [t.to_json()["argumentHint"] for t in loaded.prompts] == [None, None, None, None]


def test_a_template_that_does_not_parse_is_skipped_with_a_warning(tree: Tree) -> None:
    bad = tree.write("p/bad.md", "---\na: 1\na: 2\n---\nBody")
    tree.write("p/good.md", "Good")
    unreadable = tree.write("p/locked.md", "x")
    unreadable.chmod(0)
    try:
        loaded = load_prompt_templates(str(tree.root), str(tree.agent), ["p"])
    finally:
        unreadable.chmod(0o644)
    root = os.geteuid() == 0  # root reads any file
    assert [t.name for t in loaded.prompts] == (["good", "locked"] if root else ["good"])
    problems = [(d.type, d.kind, d.path, d.message) for d in loaded.diagnostics]
    assert problems[0] == (
        "warning",
        "parse_error",
        str(bad),
        "invalid YAML frontmatter: duplicate key 'a'; the template is skipped",
    )
    if not root:
        assert problems[1] == (
            "warning",
            "read_error",
            str(unreadable),
            "the file could not be read (Permission denied); the template is skipped",
        )
    # collisions come after the loader's own warnings
    deduped = dedupe_prompts(PromptsResult([loaded.prompts[0], loaded.prompts[0]], [loaded.diagnostics[0]]))
    assert [d.type for d in deduped.diagnostics] == ["warning", "collision"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("one \"two words\" 'three' four", ["one", "two words", "three", "four"]),
        ("don't stop", ["don't", "stop"]),  # a quote inside a word is text
        ('it\'s "ok"', ["it's", "ok"]),
        ('say "a \\"b\\" c"', ["say", 'a "b" c']),  # a backslash keeps the open quote as text
        ("'it\\'s' x", ["it's", "x"]),
        ('"a\\b"', ["a\\b"]),  # other backslashes stay
        ("\"\" x ''", ["", "x", ""]),  # quoted empty strings are arguments
        ('"unclosed words', ['"unclosed', "words"]),  # an unclosed quote is text
        ("a 'b c", ["a", "'b", "c"]),
        ('"ab"cd "e', ["abcd", '"e']),
        ('"x\\"', ['"x\\"']),  # escaped closing quote at the end: unclosed
        ("a\u00a0b\u2028c\ufeffd\x1ce", ["a", "b", "c", "d\x1ce"]),  # JavaScript's whitespace
        ("", []),
        ("   ", []),
    ],
)
def test_argument_quoting(text: str, expected: list[str]) -> None:
    assert parse_command_args(text) == expected


def test_a_worktree_file_linked_to_the_main_checkouts_file_loads_once(tree: Tree) -> None:
    tree.write("repo/.git/HEAD", "ref: main\n")
    main = tree.write("repo/AGENTS.md", "main")
    tree.write("repo/.git/worktrees/f/HEAD", "ref: f\n")
    tree.write("repo/.git/worktrees/f/commondir", "../..\n")
    tree.write("repo/wt/f/.git", f"gitdir: {tree.root}/repo/.git/worktrees/f\n")
    (tree.root / "repo/wt/f/AGENTS.md").symlink_to(main)
    result = load_context_files(str(tree.root / "repo/wt/f"), str(tree.agent))
    assert [(f.path, f.content) for f in result.files] == [(str(tree.root / "repo/wt/f/AGENTS.md"), "main")]
