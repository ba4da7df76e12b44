from __future__ import annotations

from piwork.core.compaction.file_ops import FileOps, compute_file_lists, extract_file_ops, format_file_lists

from .builders import assistant, call


def test_read_write_edit_are_tracked_verbatim_and_sorted_like_javascript() -> None:
    messages = [
        assistant(
            "",
            call("read", path="src/～wide.txt"),
            call("read", path="src/😀.txt"),
            call("read", path="./a.py"),
        ),
        assistant("", call("read", path="a.py"), call("edit", path="a.py"), call("write", path="b.py")),
        assistant("", call("bash", command="cat c.py"), call("read", path=""), call("Read", path="x")),
        {"role": "user", "content": [call("read", path="ignored")]},
    ]
    ops = extract_file_ops(messages)
    assert list(ops.read) == ["src/～wide.txt", "src/😀.txt", "./a.py", "a.py"]
    lists = compute_file_lists(ops)
    # UTF-16 order: the surrogate pair of 😀 (U+D83D) sorts before U+FF5E
    assert lists.read_files == ["./a.py", "src/😀.txt", "src/～wide.txt"]
    assert lists.modified_files == ["a.py", "b.py"]
    assert format_file_lists(lists) == (
        "\n\n<read-files>\n./a.py\nsrc/😀.txt\nsrc/～wide.txt\n</read-files>"
        "\n\n<modified-files>\na.py\nb.py\n</modified-files>"
    )


def test_nothing_tracked_formats_to_empty_text() -> None:
    assert format_file_lists(compute_file_lists(FileOps())) == ""


def test_details_of_an_earlier_summary_are_carried() -> None:
    ops = FileOps()
    ops.add_from_details({"readFiles": ["r.txt", 7], "modifiedFiles": ["m.txt"]})
    ops.add_from_details("not a mapping")
    lists = compute_file_lists(ops)
    assert lists.to_details() == {"readFiles": ["r.txt"], "modifiedFiles": ["m.txt"]}
