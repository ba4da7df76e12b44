"""grep, find and ls against real folder trees: formats, limits, notices, ignore files."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from piwork.core.tools.base import ToolContext
from piwork.core.tools.grep import GrepTool

from .helpers import REGISTRY, call, text

HAVE_RG = shutil.which("rg") is not None


@pytest.fixture(autouse=True, params=["python", "ripgrep"])
def grep_engine(request: pytest.FixtureRequest) -> Iterator[str]:
    """Every test runs with the Python search and, when installed, with ripgrep."""
    if request.param == "ripgrep" and not HAVE_RG:
        pytest.skip("ripgrep not installed")
    tool = REGISTRY.get("grep")
    assert isinstance(tool, GrepTool)
    tool.use_ripgrep = request.param == "ripgrep"
    yield request.param
    tool.use_ripgrep = True


def _tree(root: Path, files: dict[str, str]) -> None:
    for rel, body in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body)


def _git_init(root: Path) -> None:
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("needle in git internals\n")


def test_grep_formats_matches_relative_to_the_search_folder(tmp_path: Path) -> None:
    _tree(
        tmp_path, {"src/a.py": "x = 1\nneedle = 2\n", "b.txt": "no\r\nneedle here\r\n", ".hidden": "needle"}
    )
    out = call("grep", {"pattern": "needle"}, tmp_path)
    assert text(out) == ".hidden:1: needle\nb.txt:2: needle here\nsrc/a.py:2: needle = 2"
    single = call("grep", {"pattern": "NEEDLE", "path": "src/a.py", "ignoreCase": True}, tmp_path)
    assert text(single) == "a.py:2: needle = 2"


def test_grep_context_lines_are_merged_as_ripgrep_reports_them(tmp_path: Path) -> None:
    _tree(tmp_path, {"f.txt": "a\nhit1\nb\nhit2\nc\nd\ne\nf\nhit3\n"})
    out = call("grep", {"pattern": "hit", "context": 1}, tmp_path)
    assert text(out) == (
        "f.txt-1- a\nf.txt:2: hit1\nf.txt-3- b\nf.txt:4: hit2\nf.txt-5- c\nf.txt-8- f\nf.txt:9: hit3"
    )


def test_grep_context_keeps_a_carriage_return_inside_a_line(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_bytes(b"x\ra\r\nhit\r\nz\n")
    out = call("grep", {"pattern": "hit", "context": 1}, tmp_path)
    assert text(out) == "f.txt-1- x\ra\nf.txt:2: hit\nf.txt-3- z"


def test_grep_limit_notice_only_when_a_further_match_exists(tmp_path: Path) -> None:
    _tree(tmp_path, {"f.txt": "m1\nm2\nm3\n"})
    exact = call("grep", {"pattern": "m", "limit": 3}, tmp_path)
    assert text(exact) == "f.txt:1: m1\nf.txt:2: m2\nf.txt:3: m3"
    assert exact.details is None
    more = call("grep", {"pattern": "m", "limit": 2}, tmp_path)
    assert text(more) == (
        "f.txt:1: m1\nf.txt:2: m2\n\n[2 matches limit reached. Use limit=4 for more, or refine pattern]"
    )
    assert call("grep", {"pattern": "m", "limit": 2.9}, tmp_path).details == {"matchLimitReached": 2}


def test_grep_limit_keeps_the_last_match_trailing_context(tmp_path: Path) -> None:
    _tree(tmp_path, {"a.txt": "m1\nx\nm2\ny\nz\n", "b.txt": "m3\n"})
    out = call("grep", {"pattern": "m", "limit": 1, "context": 2}, tmp_path)
    assert text(out) == (
        "a.txt:1: m1\na.txt-2- x\na.txt-3- m2\n\n[1 matches limit reached. Use limit=2 for more, or refine pattern]"
    )
    last = call("grep", {"pattern": "m3", "limit": 1, "context": 2}, tmp_path)
    assert text(last) == "b.txt:1: m3"


def test_grep_glob_is_rooted_at_the_search_path(tmp_path: Path) -> None:
    _tree(tmp_path, {"pkg/src/a.py": "hit\n", "pkg/lib/src/b.py": "hit\n", "src/c.py": "hit\n"})
    (tmp_path / "link").symlink_to(tmp_path / "pkg")
    for folder in ("pkg", "link", str(tmp_path / "link")):
        assert text(call("grep", {"pattern": "hit", "path": folder, "glob": "src/*.py"}, tmp_path)) == (
            "src/a.py:1: hit"
        )
        assert text(call("grep", {"pattern": "hit", "path": folder, "glob": "./src/*.py"}, tmp_path)) == (
            "src/a.py:1: hit"
        )
    everywhere = call("grep", {"pattern": "hit", "path": "pkg", "glob": "*.py"}, tmp_path)
    assert text(everywhere) == "lib/src/b.py:1: hit\nsrc/a.py:1: hit"


@pytest.mark.skipif(not HAVE_RG, reason="ripgrep not installed")
def test_grep_ignores_the_users_ripgrep_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "rgrc"
    config.write_text("--fixed-strings\n--max-count=1\n--glob=!*.txt\n")
    monkeypatch.setenv("RIPGREP_CONFIG_PATH", str(config))
    _tree(tmp_path, {"w/f.txt": "a1\na2\n"})
    assert text(call("grep", {"pattern": "a\\d", "path": "w"}, tmp_path)) == "f.txt:1: a1\nf.txt:2: a2"


def test_grep_limits_and_notices(tmp_path: Path) -> None:
    _tree(tmp_path, {"f.txt": "".join(f"match {i} " + "🙂" * 300 + "\n" for i in range(5))})
    out = call("grep", {"pattern": "match", "limit": 3}, tmp_path)
    body = text(out)
    assert body.endswith(
        "\n\n[3 matches limit reached. Use limit=6 for more, or refine pattern. "
        "Some lines truncated to 500 chars. Use read tool to see full lines]"
    )
    first = body.split("\n")[0]
    assert first.endswith("... [truncated]") and "\ud83d" not in first.removesuffix("... [truncated]")[-1:]
    assert out.details == {"matchLimitReached": 3, "linesTruncated": True}
    zero = call("grep", {"pattern": "match", "limit": 0}, tmp_path)
    assert (zero.details or {}).get("matchLimitReached") == 1


def test_grep_byte_limit(tmp_path: Path) -> None:
    _tree(tmp_path, {"f.txt": "".join("m" + "x" * 400 + "\n" for _ in range(200))})
    out = call("grep", {"pattern": "m", "limit": 300}, tmp_path)
    assert text(out).endswith("\n\n[50.0KB limit reached]")
    assert (out.details or {})["truncation"]["truncatedBy"] == "bytes"


def test_grep_no_match_missing_path_bad_regex_literal_and_glob(tmp_path: Path) -> None:
    _tree(tmp_path, {"a.py": "a(b\n", "a.md": "a(b\n"})
    assert text(call("grep", {"pattern": "zzz"}, tmp_path)) == "No matches found"
    assert (
        text(call("grep", {"pattern": "x", "path": "nope"}, tmp_path))
        == f"Path not found: {tmp_path / 'nope'}"
    )
    bad = call("grep", {"pattern": "a(b"}, tmp_path)
    assert bad.is_error and "regex parse error" in text(bad)
    assert text(call("grep", {"pattern": "a(b", "literal": True, "glob": "*.py"}, tmp_path)) == "a.py:1: a(b"
    assert text(call("grep", {"pattern": "a(b", "literal": True, "glob": "!*.py"}, tmp_path)) == "a.md:1: a(b"
    _tree(tmp_path, {"src/deep/c.py": "a(b\n"})
    assert (
        text(call("grep", {"pattern": "a(b", "literal": True, "glob": "src/**"}, tmp_path))
        == "src/deep/c.py:1: a(b"
    )


def test_grep_honours_gitignore_in_repos_and_never_searches_git(tmp_path: Path) -> None:
    _tree(
        tmp_path,
        {
            "keep.txt": "needle\n",
            "build/out.txt": "needle\n",
            "x.log": "needle\n",
            ".gitignore": "build/\n*.log\n",
        },
    )
    assert text(call("grep", {"pattern": "needle"}, tmp_path)).count("needle") == 3  # not a repo yet
    _git_init(tmp_path)
    assert text(call("grep", {"pattern": "needle"}, tmp_path)) == "keep.txt:1: needle"
    _tree(tmp_path, {".ignore": "keep.txt\n"})
    assert text(call("grep", {"pattern": "needle"}, tmp_path)) == "No matches found"


def test_grep_skips_binary_files(tmp_path: Path) -> None:
    (tmp_path / "bin.dat").write_bytes(b"needle\0\1\2")
    _tree(tmp_path, {"t.txt": "needle\n"})
    assert text(call("grep", {"pattern": "needle"}, tmp_path)) == "t.txt:1: needle"


def test_find_matches_names_and_paths_in_sorted_order(tmp_path: Path) -> None:
    _tree(tmp_path, {"b.py": "", "a/c.py": "", "a/d.txt": "", "node_modules/m.py": "", "README.md": ""})
    _git_init(tmp_path)
    assert text(call("find", {"pattern": "*.py"}, tmp_path)) == "a/c.py\nb.py"
    assert text(call("find", {"pattern": "a/*.txt"}, tmp_path)) == "a/d.txt"
    assert text(call("find", {"pattern": "readme*"}, tmp_path)) == "README.md"  # smart case
    assert text(call("find", {"pattern": "README*"}, tmp_path)) == "README.md"
    assert text(call("find", {"pattern": "Readme*"}, tmp_path)) == "No files found matching pattern"
    assert text(call("find", {"pattern": "a"}, tmp_path)) == "a/"
    assert text(call("find", {"pattern": "*.{md,txt}"}, tmp_path)) == "README.md\na/d.txt"


def test_find_limit_gitignore_outside_repos_and_errors(tmp_path: Path) -> None:
    _tree(tmp_path, {f"f{i}.txt": "" for i in range(5)} | {".gitignore": "f4.txt\n"})
    out = call("find", {"pattern": "*.txt", "limit": 2}, tmp_path)
    assert text(out) == "f0.txt\nf1.txt\n\n[2 results limit reached. Use limit=4 for more, or refine pattern]"
    assert out.details == {"resultLimitReached": 2}
    assert "f4.txt" not in text(call("find", {"pattern": "*.txt"}, tmp_path))
    assert (
        text(call("find", {"pattern": "*", "path": "nope"}, tmp_path))
        == f"Path not found: {tmp_path / 'nope'}"
    )


def test_find_anchors_relative_path_patterns_at_the_search_folder(tmp_path: Path) -> None:
    _tree(tmp_path, {"src/a.py": "", "pkg/src/b.py": "", "pkg/src/c.txt": ""})
    assert text(call("find", {"pattern": "src/*.py"}, tmp_path)) == "src/a.py"
    assert text(call("find", {"pattern": "./src/*.py"}, tmp_path)) == "src/a.py"
    assert text(call("find", {"pattern": "**/src/*.py"}, tmp_path)) == "pkg/src/b.py\nsrc/a.py"
    assert text(call("find", {"pattern": "src/*.py", "path": "pkg"}, tmp_path)) == "src/b.py"
    absolute = call("find", {"pattern": f"{tmp_path}/pkg/**/*.txt"}, tmp_path)
    assert text(absolute) == "pkg/src/c.txt"


def test_find_limit_notice_only_when_more_results_exist(tmp_path: Path) -> None:
    _tree(tmp_path, {"a.txt": "", "b.txt": ""})
    exact = call("find", {"pattern": "*.txt", "limit": 2}, tmp_path)
    assert text(exact) == "a.txt\nb.txt" and exact.details is None
    assert call("find", {"pattern": "*.txt", "limit": 1.7}, tmp_path).details == {"resultLimitReached": 1}
    assert call("find", {"pattern": "*.txt", "limit": 0}, tmp_path).details == {"resultLimitReached": 1}


def test_ls_limit_below_one_means_one_and_fractions_round_down(tmp_path: Path) -> None:
    _tree(tmp_path, {"a": "", "b": "", "c": ""})
    assert text(call("ls", {"limit": 0}, tmp_path)) == "a\n\n[1 entries limit reached. Use limit=2 for more]"
    assert text(call("ls", {"limit": -3}, tmp_path)).startswith("a\n\n[1 entries limit reached")
    assert (
        text(call("ls", {"limit": 2.5}, tmp_path))
        == "a\nb\n\n[2 entries limit reached. Use limit=4 for more]"
    )


def test_ls_sorts_marks_folders_and_limits(tmp_path: Path) -> None:
    _tree(tmp_path, {"b.txt": "", "A.txt": "", ".env": "", "sub/x": "", "Émile": ""})
    (tmp_path / "broken").symlink_to(tmp_path / "missing")
    assert text(call("ls", {}, tmp_path)) == ".env\nA.txt\nb.txt\nÉmile\nsub/"
    out = call("ls", {"limit": 2}, tmp_path)
    assert text(out) == ".env\nA.txt\n\n[2 entries limit reached. Use limit=4 for more]"
    assert out.details == {"entryLimitReached": 2}
    (tmp_path / "empty").mkdir()
    assert text(call("ls", {"path": "empty"}, tmp_path)) == "(empty directory)"
    assert text(call("ls", {"path": "b.txt"}, tmp_path)) == f"Not a directory: {tmp_path / 'b.txt'}"
    assert text(call("ls", {"path": "nope"}, tmp_path)) == f"Path not found: {tmp_path / 'nope'}"


def test_ls_byte_limit(tmp_path: Path) -> None:
    for i in range(400):
        (tmp_path / (f"{i:03d}" + "n" * 200)).touch()
    out = call("ls", {}, tmp_path)
    assert text(out).endswith("\n\n[50.0KB limit reached]")


@pytest.mark.skipif(not HAVE_RG, reason="ripgrep not installed")
def test_ripgrep_and_python_search_agree(tmp_path: Path, grep_engine: str) -> None:
    _tree(
        tmp_path,
        {"src/a.py": "x\nneedle 1\n", "b.txt": "needle\r\n", ".gitignore": "b.txt\n", "c/d.md": "Needle\n"},
    )
    _git_init(tmp_path)
    ctx = ToolContext(cwd=str(tmp_path))
    for args in (
        {"pattern": "needle"},
        {"pattern": "needle", "ignoreCase": True, "context": 1},
        {"pattern": "n", "limit": 1},
    ):
        with_rg = asyncio.run(GrepTool(use_ripgrep=True).execute("c", args, ctx))
        without = asyncio.run(GrepTool(use_ripgrep=False).execute("c", args, ctx))
        assert text(with_rg) == text(without)
