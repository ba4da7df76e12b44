"""Dataclass methods compiled by an earlier run are reused (``piwork.code_cache``): the classes made are the
same as without it, in every way a program can look at them; a damaged or foreign file is left aside."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from piwork import code_cache

ROOT = Path(__file__).resolve().parents[2]

_DESCRIBE = r"""
import dataclasses, inspect, json, sys
from typing import ClassVar
from pathlib import Path
from piwork.code_cache import dataclass_methods

def make():
    @dataclasses.dataclass(frozen=True, order=True)
    class Point:
        x: int
        y: int = 0
        tags: tuple[str, ...] = ()
        label: str = dataclasses.field(default="p", repr=False, compare=False)

    @dataclasses.dataclass
    class Box:
        items: list[int] = dataclasses.field(default_factory=list)
        name: "str" = "box"
        count: ClassVar[int] = 0
        scale: dataclasses.InitVar[float] = 1.0

        def __post_init__(self, scale: float) -> None:
            self.items = [int(i * scale) for i in self.items]

    @dataclasses.dataclass(kw_only=True, slots=True, unsafe_hash=True)
    class Opts:
        a: int
        b: str = "b"

    @dataclasses.dataclass(eq=False)
    class Child(Box):
        extra: bool = False

    return Point, Box, Opts, Child

def describe(classes):
    out = {}
    for cls in classes:
        methods = {}
        for name in ("__init__", "__repr__", "__eq__", "__lt__", "__hash__", "__setattr__", "__delattr__"):
            fn = cls.__dict__.get(name)
            code = getattr(fn, "__code__", None)
            if code is None:
                methods[name] = repr(fn) if fn is None else "builtin"
                continue
            methods[name] = [code.co_code.hex(), repr(code.co_consts), code.co_names, code.co_varnames,
                             code.co_filename, code.co_firstlineno, code.co_qualname, str(inspect.signature(fn)),
                             repr(getattr(fn, "__annotations__", None)), repr(fn.__defaults__),
                             repr(fn.__kwdefaults__)]
        out[cls.__name__] = methods
    Point, Box, Opts, Child = classes
    p = Point(1, 2, ("a",))
    try:
        p.x = 3
        frozen = "no"
    except dataclasses.FrozenInstanceError as err:
        frozen = type(err).__name__
    out["behaviour"] = [repr(p), p == Point(1, 2, ("a",), "q"), p < Point(2), hash(p) == hash(Point(1, 2, ("a",))),
                        frozen, repr(Box([1, 2], scale=2.0)), repr(Opts(a=1)), hash(Opts(a=1)) == hash(Opts(a=1)),
                        repr(Child([3], extra=True)), Child() == Child()]
    return out

mode, path = sys.argv[1], Path(sys.argv[2])
if mode == "plain":
    print(json.dumps(describe(make())))
else:
    with dataclass_methods(path):
        print(json.dumps(describe(make())))
"""


def _describe(mode: str, path: Path, **env: str) -> object:
    done = subprocess.run(
        [sys.executable, "-c", _DESCRIBE, mode, str(path)],
        env={
            **{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
            "PYTHONPATH": str(ROOT),
            **env,
        },
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_classes_made_with_kept_methods_are_those_made_without(tmp_path: Path) -> None:
    path = tmp_path / "methods.bin"
    plain = _describe("plain", path)
    first = _describe("cached", path)  # compiles them, and keeps them
    assert path.is_file()
    kept = path.stat().st_mtime_ns
    again = _describe("cached", path)  # every method from the file: nothing to add
    assert path.stat().st_mtime_ns == kept
    assert plain == first == again


def test_a_damaged_or_foreign_file_is_left_aside_and_written_anew(tmp_path: Path) -> None:
    path = tmp_path / "methods.bin"
    plain = _describe("plain", path)
    for junk in (b"", b"\x00\x01garbage", b"XXXX" + b"\xe3" * 40):
        path.write_bytes(junk)
        assert _describe("cached", path) == plain
        assert code_cache._read(path)  # written anew, readable
    path.unlink()
    assert _describe("cached", path, PYTHONDONTWRITEBYTECODE="1") == plain
    assert not path.exists()  # where bytecode is not written, neither is this


_LONG_LIVED = r"""
import dataclasses, gc, json, sys
from pathlib import Path
from piwork.code_cache import long_lived_imports

frozen_before = gc.get_freeze_count()
with long_lived_imports():
    collecting_inside = gc.isenabled()
    kept = [{"n": i} for i in range(1000)]  # what an import leaves behind

    @dataclasses.dataclass
    class Made:
        x: int = 1

    kept_methods = "exec" in vars(dataclasses)
print(json.dumps({
    "collecting_inside": collecting_inside,
    "collecting_after": gc.isenabled(),
    "kept_methods": kept_methods,
    "frozen_grew_by": gc.get_freeze_count() - frozen_before,
    "made": Made().x,
    "cache_written": any(Path(sys.argv[1]).glob("*.bin")),
}))
"""


def test_long_lived_imports_load_without_collections_then_are_left_out_of_later_ones(tmp_path: Path) -> None:
    # the block's kept methods go beside piwork's bytecode; run on a copy of the module to keep that in tmp_path
    package = tmp_path / "piwork"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "code_cache.py").write_text((ROOT / "piwork" / "code_cache.py").read_text())
    (package / "core").mkdir()  # the collector's pause the block shares with the builds of other threads
    (package / "core" / "__init__.py").write_text("")
    (package / "core" / "collector.py").write_text((ROOT / "piwork" / "core" / "collector.py").read_text())
    done = subprocess.run(
        [sys.executable, "-c", _LONG_LIVED, str(package / "__pycache__")],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(tmp_path), "PYTHONDONTWRITEBYTECODE": ""},
        capture_output=True,
        text=True,
        check=True,
    )
    seen = json.loads(done.stdout)
    assert seen["collecting_inside"] is False
    assert seen["collecting_after"] is True
    assert seen["kept_methods"] is True
    assert seen["frozen_grew_by"] >= 1000  # what the block made is out of later collections
    assert seen["made"] == 1
    assert seen["cache_written"] is True
