"""A large branched session file for the session benchmark (Pi's line layout, ~1 KB per entry).

Texts are mostly ASCII, like code, logs and prose in coding sessions; one text in twenty carries
non-ASCII characters and emoji (Python keeps such strings at 2 or 4 bytes per character, so their
share drives the memory figure).
"""

from __future__ import annotations

import json
import random
import time
from pathlib import Path
from typing import Any

WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "read",
    "write",
    "edit",
    "bash",
    "src/main.py",
    "error:",
    "ok",
    "TODO",
    "def",
    "return",
    "self.value",
    "{}",
    "(x)",
]
WORDS += ["line\nbreak", '"quoted"']
WIDE_WORDS = ["ñ", "é", "中文", "😀", "tiếng Việt"]


def _iso(ms: int) -> str:
    seconds, millis = divmod(ms, 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{millis:03d}Z"


def _texts(rng: random.Random, size: int, count: int = 64, wide_every: int = 20) -> list[str]:
    """``count`` texts of about ``size`` characters; one in ``wide_every`` has non-ASCII words."""
    texts = []
    for n in range(count):
        words = WORDS + WIDE_WORDS if n % wide_every == 0 else WORDS
        texts.append(" ".join(rng.choice(words) for _ in range(size // 5)))
    return texts


def _dump(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False) + "\n"


def write_large_session(
    path: Path,
    entries: int = 100_000,
    body_chars: int = 900,
    branches: int = 8,
    seed: int = 7,
    wide_every: int = 20,
    side_every: int = 0,
    turn_entries: int = 3,
) -> dict[str, Any]:
    """Write ``entries`` message entries in ``branches`` branches; return the deepest leaf and more.

    ``wide_every=1`` puts emoji and other non-ASCII words in every text (the memory worst case).
    ``side_every`` (with ``branches=1``) keeps one main line and forks a two-entry side branch from
    a few entries back every ``side_every`` entries. A prompt opens every ``turn_entries`` entries, then
    tool calls and their results take turns.
    """
    rng = random.Random(seed)
    texts = _texts(rng, body_chars, wide_every=wide_every)
    halves = _texts(rng, body_chars // 2, wide_every=wide_every)
    start_ms = 1_733_234_400_000
    header = {
        "type": "session",
        "version": 3,
        "id": "0193e5b2-7c1d-7a4e-9f00-1234567890ab",
        "timestamp": _iso(start_ms),
        "cwd": "/home/user/project",
    }
    depth: dict[str, int] = {}
    ids: list[str] = []
    leaf: str | None = None
    per_branch = max(1, entries // branches)
    main_tip: str | None = None
    with open(path, "w", encoding="utf-8") as out:
        out.write(_dump(header))
        for n in range(entries):
            if n and n % per_branch == 0 and n % 3 == 0:
                leaf = ids[rng.randrange(len(ids) // 2, len(ids))]
            if side_every and n >= side_every:
                if n % side_every == side_every - 2:  # a side branch forks a few entries back
                    main_tip, leaf = leaf, ids[-5]
                elif n % side_every == 0 and main_tip is not None:  # the main line goes on
                    leaf, main_tip = main_tip, None
            entry_id = f"{n:08x}"
            ts = start_ms + n * 1000
            kind = n % turn_entries
            if kind == 0:
                message: dict[str, Any] = {"role": "user", "content": rng.choice(texts), "timestamp": ts}
            elif kind % 2 == 1:
                message = {
                    "role": "assistant",
                    "content": [
                        {"type": "text", "text": rng.choice(halves)},
                        {
                            "type": "toolCall",
                            "id": f"call_{n}",
                            "name": "read",
                            "arguments": {"path": "a.py"},
                        },
                    ],
                    "api": "anthropic-messages",
                    "provider": "anthropic",
                    "model": "claude-sonnet-4-5",
                    "usage": {
                        "input": 100,
                        "output": 50,
                        "cacheRead": 0,
                        "cacheWrite": 0,
                        "totalTokens": 150,
                        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
                    },
                    "stopReason": "toolUse",
                    "timestamp": ts,
                }
            else:
                message = {
                    "role": "toolResult",
                    "toolCallId": f"call_{n - 1}",
                    "toolName": "read",
                    "content": [{"type": "text", "text": rng.choice(texts)}],
                    "isError": False,
                    "timestamp": ts,
                }
            out.write(
                _dump(
                    {
                        "type": "message",
                        "id": entry_id,
                        "parentId": leaf,
                        "timestamp": _iso(ts),
                        "message": message,
                    }
                )
            )
            depth[entry_id] = depth[leaf] + 1 if leaf else 1
            ids.append(entry_id)
            leaf = entry_id
    deepest = max(depth, key=depth.__getitem__)
    return {"entries": entries, "deepest_leaf": deepest, "deepest_depth": depth[deepest]}


def write_small_sessions(folder: Path, count: int, entries: int = 20, seed: int = 3) -> None:
    """``count`` small sessions (a user/assistant conversation each) for the listing benchmark."""
    rng = random.Random(seed)
    texts = _texts(rng, 200, 16)
    folder.mkdir(parents=True, exist_ok=True)
    for k in range(count):
        start = 1_733_234_400_000 + k * 60_000
        header = {
            "type": "session",
            "version": 3,
            "id": f"{k:08x}-0000-7000-8000-000000000000",
            "timestamp": _iso(start),
            "cwd": "/home/user/project",
        }
        lines = [_dump(header)]
        parent = None
        for n in range(entries):
            role = "user" if n % 2 == 0 else "assistant"
            content: Any = (
                rng.choice(texts) if role == "user" else [{"type": "text", "text": rng.choice(texts)}]
            )
            message = {"role": role, "content": content, "timestamp": start + n * 1000}
            entry_id = f"{k:04x}{n:04x}"
            lines.append(
                _dump(
                    {
                        "type": "message",
                        "id": entry_id,
                        "parentId": parent,
                        "timestamp": _iso(start + n * 1000),
                        "message": message,
                    }
                )
            )
            parent = entry_id
        (folder / f"{_iso(start).replace(':', '-').replace('.', '-')}_{header['id']}.jsonl").write_text(
            "".join(lines), encoding="utf-8"
        )
