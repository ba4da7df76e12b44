"""Search across session files: what is searched, branches, prefilter, limits, cancellation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from piwork.core.session.search import SESSION_NAME, SearchQuery, make_snippet, search_file, search_sessions
from tests.support.search_sessions import two_branches

from .helpers import HEADER, assistant, stamp, user, write_session


def branched_session(path: Path, session_id: str = HEADER["id"]) -> Path:
    """u1 → a1 → (abandoned: u2 → t2 → r2 → a2) and (active: u3 → a3)."""
    entries = [
        *two_branches(
            "Why does the build fail?",
            "Try the zebra approach",
            "grep -rn ZEBRA_FLAG src/",
            "src/config.py:12: ZEBRA_FLAG = 'quagga-77'",
            "The zebra flag is set in config.py.",
            "Forget that; check the linker",
            thinking="Maybe the flaky fixture is to blame",
        ),
        {
            "type": "branch_summary",
            "id": "s1",
            "parentId": "a3",
            "timestamp": stamp(9),
            "fromId": "a2",
            "summary": "Tried the zebra flag; no luck",
        },
        {"type": "session_info", "id": "n1", "parentId": "s1", "timestamp": stamp(10), "name": "Build woes"},
    ]
    return write_session(path, entries, {**HEADER, "id": session_id})


def test_query_parsing_keeps_phrases_and_lowercases() -> None:
    query = SearchQuery.parse('Zebra  "linker needs" ZEBRA é')
    assert query.words == ("zebra", "linker needs", "é")
    assert set(query.patterns) == {b"zebra", b"linker needs"}  # non-ASCII words are not prefiltered
    assert SearchQuery.parse("   ").empty


def test_hits_in_every_kind_of_text_with_their_branch(tmp_path: Path) -> None:
    path = branched_session(tmp_path / "s.jsonl")
    result = search_file(path, SearchQuery.parse("zebra"))
    assert result is not None
    assert result.name == "Build woes" and result.first_message == ""  # named: no title needed
    by_id = {hit.entry_id: hit for hit in result.hits}
    assert list(by_id) == ["u2", "t2", "r2", "a2", "s1"]
    assert by_id["u2"].kind == "user"
    assert by_id["t2"].kind == "tool call" and by_id["t2"].detail == "bash"
    assert by_id["r2"].kind == "tool output"
    assert by_id["s1"].kind == "summary"
    for entry_id in ("u2", "t2", "r2", "a2"):
        assert not by_id[entry_id].on_active_path
        assert by_id[entry_id].branch_point == "a1"
    assert by_id["s1"].on_active_path and by_id["s1"].branch_point is None


def test_every_word_must_occur_in_the_same_entry(tmp_path: Path) -> None:
    path = branched_session(tmp_path / "s.jsonl")
    only = search_file(path, SearchQuery.parse("quagga config.py"))
    assert only is not None and [h.entry_id for h in only.hits] == ["r2"]
    assert search_file(path, SearchQuery.parse("quagga linker")) is None


def test_thinking_and_arguments_are_searched_but_json_keys_are_not(tmp_path: Path) -> None:
    path = branched_session(tmp_path / "s.jsonl")
    thinking = search_file(path, SearchQuery.parse("flaky fixture"))
    assert thinking is not None and [h.kind for h in thinking.hits] == ["thinking"]
    # "toolCallId" and "stopReason" are in the raw lines, never in a searchable text.
    assert search_file(path, SearchQuery.parse("toolcallid")) is None
    assert search_file(path, SearchQuery.parse("stopreason")) is None


def test_non_ascii_and_escaped_text_match(tmp_path: Path) -> None:
    entries = [
        user("u1", None, 'Sửa lỗi "quoted" path C:\\temp\nnext line', 1),
        assistant("a1", "u1", "Đã sửa", 2),
    ]
    path = write_session(tmp_path / "v.jsonl", entries)
    assert [h.entry_id for h in search_file(path, SearchQuery.parse("sửa")).hits] == ["u1", "a1"]  # type: ignore[union-attr]
    assert search_file(path, SearchQuery.parse('quoted" path')) is not None  # escaped quote in the file
    assert search_file(path, SearchQuery.parse("c:\\temp")) is not None


def test_snippet_is_centred_on_the_word_with_spans() -> None:
    text = "x " * 200 + "needle in\nthe haystack " + "y " * 200
    snippet, spans = make_snippet(text, ("needle", "haystack"))
    assert snippet.startswith("…") and snippet.endswith("…")
    assert "\n" not in snippet
    for start, end in spans:
        assert snippet[start:end] in ("needle", "haystack")
    assert len(spans) == 2


def test_limit_per_session_counts_the_rest(tmp_path: Path) -> None:
    entries: list[dict[str, Any]] = []
    parent = None
    for n in range(30):
        entries.append(user(f"u{n}", parent, f"repeat word {n}", n + 1))
        parent = f"u{n}"
    path = write_session(tmp_path / "r.jsonl", entries)
    result = search_file(path, SearchQuery.parse("repeat"), limit=5)
    assert result is not None and len(result.hits) == 5 and result.total == 5 and result.more
    whole = search_file(path, SearchQuery.parse("repeat"), limit=50)
    assert whole is not None and whole.total == 30 and not whole.more
    assert result.first_message == "repeat word 0"


def test_small_blocks_split_lines_correctly(tmp_path: Path) -> None:
    path = branched_session(tmp_path / "s.jsonl")
    whole = search_file(path, SearchQuery.parse("zebra"))
    tiny = search_file(path, SearchQuery.parse("zebra"), block_size=37)
    assert whole is not None and tiny is not None
    # Several blocks: the branch facts come from the full reader instead of the line fronts; same answer.
    assert [(h.entry_id, h.on_active_path, h.branch_point) for h in tiny.hits] == [
        (h.entry_id, h.on_active_path, h.branch_point) for h in whole.hits
    ]


def test_not_sessions_and_broken_lines_are_skipped(tmp_path: Path) -> None:
    (tmp_path / "notes.jsonl").write_text('{"hello":"zebra"}\n', encoding="utf-8")
    broken = branched_session(tmp_path / "b.jsonl")
    with open(broken, "a", encoding="utf-8") as out:
        out.write('{"type":"message","id":"x","zebra\n')  # a torn line that mentions the word
    results = list(search_sessions([tmp_path / "notes.jsonl", broken, tmp_path / "gone.jsonl"], "zebra"))
    assert [r.path for r in results] == [broken]


def test_streams_in_order_and_stops_when_cancelled(tmp_path: Path) -> None:
    files = [branched_session(tmp_path / f"{n:02d}.jsonl", f"id-{n}") for n in range(6)]
    seen: list[Path] = []
    progress: list[tuple[int, int]] = []
    for result in search_sessions(files, "zebra", progress=lambda d, t: progress.append((d, t))):
        seen.append(result.path)
    assert seen == files and progress[-1] == (6, 6)

    stop_after: list[Path] = []
    for result in search_sessions(files, "zebra", cancelled=lambda: len(stop_after) >= 2):
        stop_after.append(result.path)
    assert stop_after == files[:2]


def test_entries_written_in_another_key_order_still_get_their_branch(tmp_path: Path) -> None:
    path = branched_session(tmp_path / "s.jsonl")
    lines = path.read_text(encoding="utf-8").splitlines()
    import json

    odd = json.loads(lines[3])  # u2 with its keys in another order: the line fronts cannot be trusted
    lines[3] = json.dumps(
        {
            "parentId": odd["parentId"],
            "message": odd["message"],
            "id": odd["id"],
            "type": "message",
            "timestamp": odd["timestamp"],
        }
    )
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = search_file(path, SearchQuery.parse("zebra"))
    assert result is not None
    assert [(h.entry_id, h.on_active_path, h.branch_point) for h in result.hits][:2] == [
        ("u2", False, "a1"),
        ("t2", False, "a1"),
    ]


def test_snippet_of_a_long_text_is_cut_around_the_word_alike() -> None:
    text = "x " * 20_000 + "needle in\n\nthe haystack " + "y " * 20_000
    snippet, spans = make_snippet(text, ("needle", "haystack"))
    assert snippet.startswith("…") and snippet.endswith("…") and "\n" not in snippet
    assert sorted(snippet[a:b] for a, b in spans) == ["haystack", "needle"]
    assert (
        snippet == make_snippet(text[39_000:41_000], ("needle", "haystack"))[0]
    )  # same excerpt as a short text


def test_branches_are_placed_alike_whatever_way_the_lines_are_written(tmp_path: Path) -> None:
    """The quick link scan and the full reader agree: CRLF endings, a blank line, keys in another order."""
    plain = branched_session(tmp_path / "plain.jsonl")
    expected = [
        (h.entry_id, h.on_active_path, h.branch_point)
        for h in search_file(plain, SearchQuery.parse("zebra")).hits
    ]  # type: ignore[union-attr]
    assert expected == [
        ("u2", False, "a1"),
        ("t2", False, "a1"),
        ("r2", False, "a1"),
        ("a2", False, "a1"),
        ("s1", True, None),
    ]
    lines = plain.read_text(encoding="utf-8").splitlines()
    variants = {
        "crlf.jsonl": "\r\n".join(lines) + "\r\n",
        "blank.jsonl": "\n".join([*lines[:3], "", *lines[3:]]) + "\n",
        "no-final-newline.jsonl": "\n".join(lines),
        "reordered.jsonl": "\n".join(
            lines[:1]
            + [
                json.dumps(dict(reversed(list(json.loads(line).items()))), separators=(",", ":"))
                for line in lines[1:]
            ]
        )
        + "\n",
        # Valid JSON from another writer: a space (or a tab) after every colon and comma.
        "spaced.jsonl": "\n".join(json.dumps(json.loads(line)) for line in lines) + "\n",
        "tabbed.jsonl": "\n".join(json.dumps(json.loads(line), separators=(",\t", ":\t ")) for line in lines)
        + "\n",
    }
    for name, text in variants.items():
        path = tmp_path / name
        path.write_text(text, encoding="utf-8", newline="")
        found = search_file(path, SearchQuery.parse("zebra"))
        assert found is not None, name
        assert [(h.entry_id, h.on_active_path, h.branch_point) for h in found.hits] == expected, name
        assert found.name == "Build woes", name


def test_a_session_written_with_spaces_after_the_colons_keeps_its_name_and_first_message(
    tmp_path: Path,
) -> None:
    """Any valid JSON spacing: the name comes from its session_info line, the title of an unnamed session
    from its first user message, as for compact lines; also when the name is in a later block."""
    entries = [
        user("u1", None, "Why does the zebra build fail?", 1),
        assistant("a1", "u1", "The zebra flag is unset.", 2),
        {"type": "session_info", "id": "n1", "parentId": "a1", "timestamp": stamp(3), "name": "Zebra hunt"},
    ]
    named = tmp_path / "named.jsonl"
    named.write_text("\n".join(json.dumps(v) for v in [HEADER, *entries]) + "\n", encoding="utf-8")
    assert '"type": "session_info"' in named.read_text(encoding="utf-8")
    for block_size in (1 << 20, 64):  # the whole file in one block, and one line per block
        found = search_file(named, SearchQuery.parse("zebra"), block_size=block_size)
        assert found is not None and found.name == "Zebra hunt", block_size
        assert [h.entry_id for h in found.hits] == ["n1", "u1", "a1"]  # the name matches too
        assert [s.name for s in search_sessions([named], "zebra")] == ["Zebra hunt"]

    unnamed = tmp_path / "unnamed.jsonl"
    unnamed.write_text("\n".join(json.dumps(v) for v in [HEADER, *entries[:2]]) + "\n", encoding="utf-8")
    found = search_file(unnamed, SearchQuery.parse("flag"))
    assert found is not None and found.name is None
    assert found.first_message == "Why does the zebra build fail?"


def test_a_session_is_found_by_its_current_name(tmp_path: Path) -> None:
    """The name is a searchable text of its own: a hit of kind SESSION_NAME first among the session's hits,
    found through the same byte prefilter whatever the block size; a name it was renamed from is not."""
    path = branched_session(tmp_path / "s.jsonl")  # named "Build woes"; no message says "woes"
    for block_size in (1 << 20, 64):
        found = search_file(path, SearchQuery.parse("WOES build"), block_size=block_size)
        assert found is not None and found.name == "Build woes", block_size
        assert [(h.entry_id, h.kind) for h in found.hits] == [("n1", SESSION_NAME)]
        hit = found.hits[0]
        assert hit.snippet == "Build woes" and hit.spans == ((0, 5), (6, 10))
        assert hit.on_active_path and hit.branch_point is None and found.total == 1
    # With message hits too, the name comes first; the per-session limit never hides it.
    found = search_file(path, SearchQuery.parse("zebra"))
    assert found is not None and found.hits[0].kind == "user"  # the name does not say zebra
    entries = [
        user("u1", None, "Why does the zebra build fail?", 1),
        assistant("a1", "u1", "The zebra flag is unset.", 2),
        {"type": "session_info", "id": "n1", "parentId": "a1", "timestamp": stamp(3), "name": "Zebra hunt"},
        user("u2", "n1", "And the zebra tests?", 4),
    ]
    named = write_session(tmp_path / "named.jsonl", entries)
    for block_size in (1 << 20, 64):
        found = search_file(named, SearchQuery.parse("zebra"), limit=1, block_size=block_size)
        assert found is not None and [h.entry_id for h in found.hits] == ["n1", "u1"], block_size
        assert found.more and found.hits[0].kind == SESSION_NAME

    renamed = write_session(
        tmp_path / "renamed.jsonl",
        [
            *entries,
            {
                "type": "session_info",
                "id": "n2",
                "parentId": "u2",
                "timestamp": stamp(5),
                "name": "Linker woes",
            },
        ],
    )
    for block_size in (1 << 20, 64):
        assert search_file(renamed, SearchQuery.parse("hunt"), block_size=block_size) is None
        found = search_file(renamed, SearchQuery.parse("linker"), block_size=block_size)
        assert found is not None and [(h.entry_id, h.snippet) for h in found.hits] == [("n2", "Linker woes")]
    assert [s.name for s in search_sessions([renamed, named, path], "woes")] == ["Linker woes", "Build woes"]

    accented = write_session(
        tmp_path / "accented.jsonl",
        [
            *entries[:2],
            {
                "type": "session_info",
                "id": "n1",
                "parentId": "a1",
                "timestamp": stamp(3),
                "name": "Überprüfung",
            },
        ],
    )
    found = search_file(accented, SearchQuery.parse("überprüfung"))
    assert found is not None and [h.kind for h in found.hits] == [SESSION_NAME]


def test_an_abandoned_branch_is_named_as_the_tree_shows_it(tmp_path: Path) -> None:
    """By its label, else its first prompt, else the entry it leaves from; never by an id."""
    path = branched_session(tmp_path / "s.jsonl")
    found = search_file(path, SearchQuery.parse("zebra"))
    assert found is not None
    abandoned = [h for h in found.hits if not h.on_active_path]
    assert abandoned and {h.branch_name for h in abandoned} == {"“Try the zebra approach”"}
    assert all(h.branch_name is None for h in found.hits if h.on_active_path)

    label = {"type": "label", "id": "l1", "parentId": "n1", "timestamp": stamp(11), "targetId": "t2",
             "label": "zebra experiment"}  # fmt: skip
    with path.open("a", encoding="utf-8") as out:
        out.write(json.dumps(label) + "\n")
    labelled = search_file(path, SearchQuery.parse("quagga"))
    assert labelled is not None and [h.branch_name for h in labelled.hits] == ["“zebra experiment”"]

    no_prompt = [
        user("u1", None, "Why does the build fail?", 1),
        assistant("a1", "u1", "Let me look at the Makefile.", 2),
        assistant("x1", "a1", "An okapi detour that went nowhere", 3),
        user("u3", "a1", "check the linker", 4),
    ]
    side = write_session(tmp_path / "side.jsonl", no_prompt)
    detour = search_file(side, SearchQuery.parse("okapi"))
    assert detour is not None
    assert [h.branch_name for h in detour.hits] == ["from “Let me look at the Makefile.”"]
