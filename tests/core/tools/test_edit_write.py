"""The edit and write tools: matching rules, Pi's error texts, line endings, in-place writes, serialising."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from piwork.core.tools.base import ToolContext
from piwork.core.tools.edit import EditTool
from piwork.core.tools.mutation import PathLocks

from .helpers import call, text


def _edit(tmp_path: Path, content: str | bytes, edits: Any, name: str = "f.txt") -> tuple[Any, bytes]:
    target = tmp_path / name
    target.write_bytes(content.encode() if isinstance(content, str) else content)
    out = call("edit", {"path": name, "edits": edits}, tmp_path)
    return out, target.read_bytes()


def test_single_exact_replacement_with_diff_details(tmp_path: Path) -> None:
    lines = "".join(f"line {i}\n" for i in range(1, 21))
    out, data = _edit(tmp_path, lines, [{"oldText": "line 10\n", "newText": "changed\n"}])
    assert text(out) == "Successfully replaced 1 block(s) in f.txt."
    assert data == lines.replace("line 10\n", "changed\n").encode()
    details = out.details or {}
    assert details["firstChangedLine"] == 10
    assert "-10 line 10" in details["diff"] and "+10 changed" in details["diff"]
    assert details["diff"].splitlines()[0] == "    ..."
    assert details["patch"].startswith("--- f.txt\n+++ f.txt\n@@ -6,9 +6,9 @@\n")


def test_multiple_edits_are_matched_against_the_original(tmp_path: Path) -> None:
    out, data = _edit(tmp_path, "a b c", [{"oldText": "a", "newText": "b"}, {"oldText": "b", "newText": "a"}])
    assert text(out) == "Successfully replaced 2 block(s) in f.txt." and data == b"b a c"


@pytest.mark.parametrize(
    ("content", "edits", "message"),
    [
        (
            "abc",
            [{"oldText": "zzz", "newText": "y"}],
            "Could not find the exact text in f.txt. The old text must match exactly including all whitespace and newlines.",
        ),
        (
            "abc",
            [{"oldText": "a", "newText": "y"}, {"oldText": "zzz", "newText": "y"}],
            "Could not find edits[1] in f.txt. The oldText must match exactly including all whitespace and newlines.",
        ),
        (
            "x x",
            [{"oldText": "x", "newText": "y"}],
            "Found 2 occurrences of the text in f.txt. The text must be unique. Please provide more context to make it unique.",
        ),
        (
            "x x y",
            [{"oldText": "y", "newText": "z"}, {"oldText": "x", "newText": "y"}],
            "Found 2 occurrences of edits[1] in f.txt. Each oldText must be unique. Please provide more context to make it unique.",
        ),
        (
            "abcdef",
            [{"oldText": "cde", "newText": "1"}, {"oldText": "bcd", "newText": "2"}],
            "edits[1] and edits[0] overlap in f.txt. Merge them into one edit or target disjoint regions.",
        ),
        ("abc", [{"oldText": "", "newText": "y"}], "oldText must not be empty in f.txt."),
        (
            "abc",
            [{"oldText": "a", "newText": "y"}, {"oldText": "", "newText": "y"}],
            "edits[1].oldText must not be empty in f.txt.",
        ),
        (
            "abc",
            [{"oldText": "b", "newText": "b"}],
            "No changes made to f.txt. The replacement produced identical content. This might indicate an issue "
            "with special characters or the text not existing as expected.",
        ),
        (
            "abc",
            [{"oldText": "a", "newText": "a"}, {"oldText": "b", "newText": "b"}],
            "No changes made to f.txt. The replacements produced identical content.",
        ),
        ("abc", [], "Edit tool input is invalid. edits must contain at least one replacement."),
        (
            "dash – 🙂",
            [{"oldText": "  ", "newText": "y"}, {"oldText": "zz", "newText": "y"}],
            # whitespace-only text is empty once normalised; Pi then counts UTF-16 units minus one
            "Found 8 occurrences of edits[0] in f.txt. Each oldText must be unique. Please provide more context "
            "to make it unique.",
        ),
    ],
)
def test_error_texts(tmp_path: Path, content: str, edits: Any, message: str) -> None:
    out, data = _edit(tmp_path, content, edits)
    assert out.is_error and text(out) == message and data == content.encode()


def test_missing_file(tmp_path: Path) -> None:
    out = call("edit", {"path": "nope.txt", "edits": [{"oldText": "a", "newText": "b"}]}, tmp_path)
    assert text(out) == "Could not edit file: nope.txt. Error code: ENOENT."


def test_fuzzy_match_keeps_untouched_lines_byte_for_byte(tmp_path: Path) -> None:
    content = "keep “smart”   \nsay \u201chello\u201d \u2013 now   \nlast\u00a0line  \n"
    out, data = _edit(tmp_path, content, [{"oldText": 'say "hello" - now', "newText": "replaced"}])
    assert not out.is_error
    assert data.decode() == "keep “smart”   \nreplaced\nlast\u00a0line  \n"


def test_crlf_and_bom_round_trip(tmp_path: Path) -> None:
    content = "\ufeffone\r\ntwo\r\nthree\r\n"
    out, data = _edit(tmp_path, content, [{"oldText": "two\nthree", "newText": "2\n3"}])
    assert not out.is_error and data == "\ufeffone\r\n2\r\n3\r\n".encode()


def test_edit_keeps_permissions_and_writes_in_place(tmp_path: Path) -> None:
    target = tmp_path / "run.sh"
    target.write_text("echo a\n")
    target.chmod(0o751)
    inode = target.stat().st_ino
    out = call("edit", {"path": "run.sh", "edits": [{"oldText": "a", "newText": "b"}]}, tmp_path)
    assert not out.is_error and target.read_text() == "echo b\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o751 and target.stat().st_ino == inode
    assert [p.name for p in tmp_path.iterdir()] == ["run.sh"]  # no temporary file left behind


def test_edit_through_a_symlink_edits_the_target_and_keeps_the_link(tmp_path: Path) -> None:
    real = tmp_path / "real.txt"
    real.write_text("old\n")
    inode = real.stat().st_ino
    (tmp_path / "link.txt").symlink_to(real)
    out = call("edit", {"path": "link.txt", "edits": [{"oldText": "old", "newText": "new"}]}, tmp_path)
    assert not out.is_error
    assert (tmp_path / "link.txt").is_symlink() and real.read_text() == "new\n"
    assert real.stat().st_ino == inode


_EDIT_IN_CHILD = """
import asyncio, json, sys
from piwork.core.tools.base import ToolContext
from piwork.core.tools.registry import create_default_tools
registry = create_default_tools(["edit"])
for path in sys.argv[2:]:
    args = {"path": path, "edits": [{"oldText": "old", "newText": "new"}]}
    out = asyncio.run(registry.run("c", "edit", args, ToolContext(cwd=sys.argv[1])))
    print(json.dumps([out.is_error, out.content[0]["text"]]))
"""


def _edit_without_override(cwd: Path, *paths: str) -> list[list[Any]]:
    """Edits in a child process that file permissions bind (root gives up its override first)."""
    command = [sys.executable, "-c", _EDIT_IN_CHILD, str(cwd), *paths]
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("running as root without setpriv to give up the permission override")
        command = ["setpriv", "--bounding-set=-dac_override,-dac_read_search", "--", *command]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=True)
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_edit_in_a_read_only_folder(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    (folder / "f.txt").write_text("old\n")
    (folder / "locked.txt").write_text("old\n")
    (folder / "locked.txt").chmod(0o444)
    folder.chmod(0o555)
    try:
        results = _edit_without_override(tmp_path, "ro/f.txt", "ro/locked.txt")
    finally:
        folder.chmod(0o755)
    assert results == [
        [False, "Successfully replaced 1 block(s) in ro/f.txt."],
        [True, "Could not edit file: ro/locked.txt. Error code: EACCES."],
    ]
    assert (folder / "f.txt").read_text() == "new\n" and (folder / "locked.txt").read_text() == "old\n"
    assert sorted(p.name for p in folder.iterdir()) == ["f.txt", "locked.txt"]


def test_edit_keeps_each_lines_own_ending(tmp_path: Path) -> None:
    content = "a\r\nb\nc\r\nd\n"
    out, data = _edit(tmp_path, content, [{"oldText": "b\nc", "newText": "B\nC"}])
    assert not out.is_error and data == b"a\r\nB\nC\r\nd\n"
    out, data = _edit(tmp_path, "x\ny\r\nz\r\n", [{"oldText": "y", "newText": "1\n2"}])
    assert data == b"x\ny1\r\n2\r\nz\r\n".replace(b"y1", b"1")
    out, data = _edit(tmp_path, "lf\nonly\n", [{"oldText": "only", "newText": "a\nb"}])
    assert data == b"lf\na\nb\n"
    out, data = _edit(tmp_path, "m\ra\rc", [{"oldText": "a", "newText": "1\n2"}])
    assert data == b"m\r1\r2\rc"  # classic Mac line endings throughout


def test_hard_linked_files_are_edited_in_place(tmp_path: Path) -> None:
    target = tmp_path / "a.txt"
    target.write_text("old\n")
    os.link(target, tmp_path / "b.txt")
    call("edit", {"path": "a.txt", "edits": [{"oldText": "old", "newText": "new"}]}, tmp_path)
    assert (tmp_path / "b.txt").read_text() == "new\n"


def test_parallel_edits_to_one_file_are_serialised(tmp_path: Path) -> None:
    target = tmp_path / "shared.txt"
    target.write_text("".join(f"k{i}=0\n" for i in range(20)))
    tool = EditTool(PathLocks())
    ctx = ToolContext(cwd=str(tmp_path))

    async def run_all() -> list[Any]:
        calls = [
            tool.execute(
                f"c{i}",
                {
                    "path": "shared.txt" if i % 2 else str(target),
                    "edits": [{"oldText": f"k{i}=0", "newText": f"k{i}=1"}],
                },
                ctx,
            )
            for i in range(20)
        ]
        return await asyncio.gather(*calls)

    asyncio.run(run_all())
    assert target.read_text() == "".join(f"k{i}=1\n" for i in range(20))


def test_write_creates_parents_and_reports_bytes(tmp_path: Path) -> None:
    out = call("write", {"path": "a/b/c.txt", "content": "héllo"}, tmp_path)
    assert text(out) == "Successfully wrote to a/b/c.txt"
    assert out.details == {"bytes": 6, "created": True}
    assert (tmp_path / "a/b/c.txt").read_text() == "héllo"
    again = call("write", {"path": "a/b/c.txt", "content": ""}, tmp_path)
    assert again.details == {"bytes": 0, "created": False} and (tmp_path / "a/b/c.txt").read_bytes() == b""


def test_write_follows_symlinks_and_outside_cwd(tmp_path: Path) -> None:
    real = tmp_path / "real.txt"
    real.write_text("x")
    project = tmp_path / "p"
    project.mkdir()
    (project / "link.txt").symlink_to(real)
    call("write", {"path": "link.txt", "content": "via link"}, project)
    assert (project / "link.txt").is_symlink() and real.read_text() == "via link"
    call("write", {"path": "../out.txt", "content": "outside"}, project)
    assert (tmp_path / "out.txt").read_text() == "outside"


def test_write_errors_are_reported(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    out = call("write", {"path": "file/child.txt", "content": "y"}, tmp_path)
    assert out.is_error and text(out) == f"EEXIST: file already exists, mkdir '{tmp_path / 'file'}'"
    deeper = call("write", {"path": "file/sub/child.txt", "content": "y"}, tmp_path)
    assert text(deeper) == f"ENOTDIR: not a directory, mkdir '{tmp_path / 'file' / 'sub'}'"


def test_lone_surrogates_are_written_as_replacement_characters(tmp_path: Path) -> None:
    call("write", {"path": "s.txt", "content": "a\ud800b"}, tmp_path)
    assert (tmp_path / "s.txt").read_text() == "a\ufffdb"
