"""Compiled dataclass methods kept across runs, as Python keeps modules' bytecode.

Making a dataclass writes the source of its ``__init__``, ``__repr__``, ``__eq__``... and compiles it; for the
two hundred dataclasses a ``-p`` run imports, compiling that source is a third of the whole import. Within
:func:`dataclass_methods` the ``exec`` that ``dataclasses`` compiles and runs that source with finds the
code already compiled by an earlier run when the source is the same — the very code ``exec`` would make
of it (compiled as ``dataclasses`` compiles it, inheriting no ``__future__`` flags) — and the methods made
are the same. What is compiled anew is added to ``__pycache__/dataclass-methods.<tag>.bin`` beside
piwork's own bytecode when the block ends (never where bytecode is not written). The file holds code
objects keyed by their source, behind the interpreter's bytecode magic number; a file of another
interpreter, or one that cannot be read, is left aside.
"""

from __future__ import annotations

import builtins
import contextlib
import dataclasses
import gc
import importlib.util
import marshal
import os
import sys
import threading
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

MAX_ENTRIES = 20_000  # beyond this the file starts over with the methods of the last run
_compile = builtins.compile
_exec = builtins.exec


def cache_file() -> Path | None:
    tag = sys.implementation.cache_tag
    if tag is None:
        return None
    if sys.flags.optimize:  # compiled with ``-O``: kept apart, as its bytecode is
        tag = f"{tag}.opt-{sys.flags.optimize}"
    return Path(__file__).resolve().parent / "__pycache__" / f"dataclass-methods.{tag}.bin"


def _read(path: Path) -> dict[str, types.CodeType]:
    try:
        data = path.read_bytes()
    except OSError:
        return {}
    magic = importlib.util.MAGIC_NUMBER
    if not data.startswith(magic):
        return {}
    try:
        codes = marshal.loads(data[len(magic) :])
    except (EOFError, ValueError, TypeError):
        return {}
    if not isinstance(codes, dict):
        return {}
    return {k: v for k, v in codes.items() if type(k) is str and type(v) is types.CodeType}


def _write(path: Path, codes: dict[str, types.CodeType]) -> None:
    with contextlib.suppress(OSError, ValueError):
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # as bytecode is: the umask's
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(importlib.util.MAGIC_NUMBER + marshal.dumps(codes))
            os.replace(temporary, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise


@contextlib.contextmanager
def dataclass_methods(path: Path | None = None) -> Iterator[None]:
    """Dataclasses made in this block reuse the methods' code compiled by earlier runs (see the module)."""
    path = path if path is not None else cache_file()
    if path is None or "exec" in vars(dataclasses):  # no place for it, or another block already active
        yield
        return
    known = _read(path)
    used: dict[str, types.CodeType] = {}
    added: list[str] = []

    def cached_exec(source: Any, globals: Any = None, locals: Any = None, /) -> None:
        if type(source) is not str:
            _exec(source, globals, locals)
            return
        code = known.get(source)
        if code is None:
            code = _compile(source, "<string>", "exec", dont_inherit=True)
            added.append(source)
        used[source] = code
        _exec(code, globals, locals)

    dataclasses.exec = cached_exec  # type: ignore[attr-defined]
    try:
        yield
    finally:
        with contextlib.suppress(AttributeError):
            del dataclasses.exec  # type: ignore[attr-defined]
        if added and not sys.dont_write_bytecode:
            kept = {**known, **used} if len(known) + len(added) <= MAX_ENTRIES else used
            _write(path, kept)


@contextlib.contextmanager
def long_lived_imports() -> Iterator[None]:
    """Imports whose modules live as long as the process: their dataclasses reuse the methods' code compiled
    by earlier runs (:func:`dataclass_methods`, unless a block of it is already active), no cycle collections
    walk the objects they make while they load (some 100,000, all kept: the walks took a tenth of a start-up),
    and what they made is left out of later collections too (frozen), which keeps those short."""
    from piwork.core.collector import paused_gc  # the pause the session parts' builds share (other threads)

    with paused_gc():
        try:
            with dataclass_methods():
                yield
        finally:
            gc.freeze()
