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
