"""Seeded mutants of a real session file, for fuzz tests: each mutant is the file with one to three
damages of the kinds met in the wild or made on purpose (a raw TAB in a string, NaN/Infinity/1e400,
deep nesting, a header version that is a path, truncated, dropped, repeated or bit-flipped lines, fields
of the wrong type, dangling parents, a missing final newline)."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator

Mutation = Callable[[random.Random, list[bytes], int], None]


def _raw_tab(rng: random.Random, lines: list[bytes], i: int) -> None:
    at = lines[i].find(b'"text":"')
    if at < 0:
        at = lines[i].find(b'"content":"')
    if at >= 0:
        cut = lines[i].index(b'"', lines[i].index(b":", at) + 1) + 1
        lines[i] = lines[i][:cut] + rng.choice([b"\t", b"\r", b"\x01", b"\x1f"]) + lines[i][cut:]


def _not_json_number(rng: random.Random, lines: list[bytes], i: int) -> None:
    word = rng.choice([b"NaN", b"Infinity", b"-Infinity", b"1e400", b"-1e400", b"1e-400"])
    for field in (b'"input":', b'"output":', b'"tokensBefore":', b'"timestamp":1'):
        at = lines[i].find(field)
        if at >= 0:
            start = at + len(field) - (1 if field.endswith(b"1") else 0)
            end = start
            while end < len(lines[i]) and lines[i][end : end + 1] in b"0123456789.-e":
                end += 1
            lines[i] = lines[i][:start] + word + lines[i][end:]
            return


def _deep(rng: random.Random, lines: list[bytes], i: int) -> None:
    if lines[i].endswith(b"}"):
        depth = rng.choice([40, 1500, 50_000])
        opener, closer = rng.choice([(b"[", b"]"), (b'{"a":', b"}")])
        lines[i] = lines[i][:-1] + b',"deep":' + opener * depth + b"1" + closer * depth + b"}"


def _header_version(rng: random.Random, lines: list[bytes], _i: int) -> None:
    version = rng.choice([b'"1/x"', b'"../x"', b'"2/../../y"', b"-1", b"2.5", b"null", b'"3"', b"1e400"])
    lines[0] = lines[0].replace(b'"version":3', b'"version":' + version)


def _truncate(rng: random.Random, lines: list[bytes], i: int) -> None:
    lines[i] = lines[i][: rng.randrange(len(lines[i]) + 1)]


def _drop(_rng: random.Random, lines: list[bytes], i: int) -> None:
    if len(lines) > 1:
        del lines[i]


def _repeat(_rng: random.Random, lines: list[bytes], i: int) -> None:
    lines.insert(i, lines[i])


def _flip(rng: random.Random, lines: list[bytes], i: int) -> None:
    if lines[i]:
        j = rng.randrange(len(lines[i]))
        lines[i] = lines[i][:j] + bytes([rng.randrange(256)]) + lines[i][j + 1 :]


def _wrong_type(rng: random.Random, lines: list[bytes], i: int) -> None:
    swaps = [
        (b'"role":"assistant"', b'"role":5'),
        (b'"content":[', b'"content":{"a":['),
        (b'"usage":{', b'"usage":[{'),
        (b'"message":{', b'"message":["x",{'),
        (b'"stopReason":"stop"', b'"stopReason":null'),
        (b'"thinkingLevel":"', b'"thinkingLevel":["'),
        (b'"id":"', b'"id":7,"x":"'),
        (b'"summary":"', b'"summary":{"s":"'),
    ]
    rng.shuffle(swaps)
    for old, new in swaps:
        if old in lines[i]:
            lines[i] = lines[i].replace(old, new, 1)
            return


def _dangling(_rng: random.Random, lines: list[bytes], i: int) -> None:
    lines[i] = lines[i].replace(b'"parentId":"', b'"parentId":"gone-', 1)


MUTATIONS: tuple[Mutation, ...] = (
    _raw_tab,
    _not_json_number,
    _deep,
    _header_version,
    _truncate,
    _drop,
    _repeat,
    _flip,
    _wrong_type,
    _dangling,
)


def mutants(original: bytes, seed: int, count: int) -> Iterator[bytes]:
    """``count`` mutants of ``original`` (a session file ending with a newline), the same for a seed."""
    rng = random.Random(seed)
    lines = original.split(b"\n")[:-1]
    for _ in range(count):
        damaged = list(lines)
        for _ in range(rng.randint(1, 3)):
            rng.choice(MUTATIONS)(rng, damaged, rng.randrange(len(damaged)))
        yield b"\n".join(damaged) + (b"\n" if rng.random() < 0.9 else b"")
