"""Long texts' token counts remembered by content, in memory and in a per-encoding file for the next run."""

from __future__ import annotations

from pathlib import Path

from piwork.core.llm.token_counts import MIN_CHARS, CountCache, text_key
from piwork.core.llm.tokens import Tokenizers

LONG = "def handler(event):\n    return event['body'] * 2  # doubled\n" * 40
SHORT = "hello world"


def _file(agent: Path) -> Path:
    return agent / "piwork" / "token-counts" / "cl100k_base.tsv"


def test_counts_are_remembered_for_the_next_run(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    tokenizers = Tokenizers(agent, env={})
    tokenizers.load_for("claude-sonnet-4-5")
    counter = tokenizers.counter_for("claude-sonnet-4-5")
    exact = counter.count(LONG)
    assert len(LONG) >= MIN_CHARS and exact == len(tokenizers._encodings["cl100k_base"].encode(LONG))
    assert counter.count(SHORT) == 2
    assert not _file(agent).exists()  # written only when flushed
    counter.flush()
    assert _file(agent).read_text() == f"{text_key(LONG)}\t{exact}\n"  # short texts are not kept
    counter.flush()  # nothing new: nothing appended
    assert len(_file(agent).read_text().splitlines()) == 1

    # the next run reads the file with the tokenizer: a count planted there is what it answers
    _file(agent).write_text(f"{text_key(LONG)}\t7\nnot a line\n{'z' * 32}\tx\n")
    later = Tokenizers(agent, env={})
    later.load_for("claude-sonnet-4-5")
    assert later.counter_for("claude-sonnet-4-5").count(LONG) == 7
    assert later.counter_for("claude-sonnet-4-5").count("x" + LONG) > 7  # not in the file: counted


def test_without_an_agent_folder_counts_stay_in_memory(tmp_path: Path) -> None:
    tokenizers = Tokenizers(None, bpe_dir=None, env={})
    tokenizers.load_for("gpt-4")
    counter = tokenizers.counter_for("gpt-4")
    first = counter.count(LONG)
    assert counter.count(LONG) == first
    counter.flush()  # nowhere to write: nothing happens


def test_an_unwritable_folder_keeps_counts_in_memory(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    cache = CountCache(blocker / "counts.tsv")
    cache.put("a" * 32, 5)
    assert cache.flush() == 0 and cache.get("a" * 32) == 5


def test_slices_of_one_text_add_up_to_its_count(tmp_path: Path) -> None:
    tokenizers = Tokenizers(tmp_path / "agent", env={})
    tokenizers.load_for("gpt-4")
    counter = tokenizers.counter_for("gpt-4")
    encoding = tokenizers._encodings["cl100k_base"]
    # boundaries inside a word, inside a run of spaces, between the halves of an emoji's UTF-16 pair
    # written as two code points, beside a lone surrogate and after a multi-byte letter
    tail = "\ud83d\ude00 \ud800 tail " + "é" * 7
    whole = "Ünïcode rules   apply.\n" + LONG + tail
    pair = len(whole) - len(tail) + 1
    ends = [3, 16, 20, pair - 1, pair, pair + 3, len(whole) - 3, len(whole)]
    counts = counter.count_slices(whole, ends)
    assert sum(counts) == counter.count(whole) == len(encoding.encode(whole, disallowed_special=()))
    assert all(c >= 0 for c in counts) and counts[3] > 100  # the long middle slice holds most tokens
    assert counter.count_slices(whole, [len(whole)]) == [counter.count(whole)]
    assert counter.count_slices(whole, []) == []
    # a special token's text is ordinary text here, as in the request count
    assert sum(counter.count_slices("a<|endoftext|>b", [1, 14, 15])) == counter.count("a<|endoftext|>b") > 3
    estimate = Tokenizers(None, use_package_data=False, use_offline_package=False, env={}).counter_for("x")
    assert sum(estimate.count_slices(whole, ends)) == estimate.count(whole)
