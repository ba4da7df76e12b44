"""The engine's imports form no cycle, so every module can import what it needs plainly.

Importing ``piwork.core.x.mod`` first runs ``piwork.core.x``'s ``__init__``; a name imported from a package
(``from piwork.core.x import Name``) loads the module that defines it right then. A cycle through these would
fail for whichever module happens to be imported first. The graph is
read from the source (imports at module level, ``TYPE_CHECKING`` blocks left out, imports inside
functions left out: they run later), and checked for real by importing each package first in a fresh
interpreter.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import piwork.core

CORE = Path(piwork.core.__file__).parent
ROOT = CORE.parent.parent
PACKAGES = sorted(p.parent.name for p in CORE.glob("*/__init__.py"))


def _module_name(path: Path) -> str:
    name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
    return name.removesuffix(".__init__")


def _run_time_imports(body: list[ast.stmt]) -> Iterator[ast.Import | ast.ImportFrom]:
    """The imports a module runs as it loads: module level, inside ``if``/``try``/``with`` blocks, never in
    a ``TYPE_CHECKING`` block or a function."""
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.If):
            test = node.test
            if (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
                isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
            ):
                yield from _run_time_imports(node.orelse)
            else:
                yield from _run_time_imports(node.body)
                yield from _run_time_imports(node.orelse)
        elif isinstance(node, ast.Try):
            for block in (node.body, *(h.body for h in node.handlers), node.orelse, node.finalbody):
                yield from _run_time_imports(block)
        elif isinstance(node, ast.With):
            yield from _run_time_imports(node.body)


def _lazy_names(path: Path) -> dict[str, str]:
    """A package's public names -> the module each is imported from when first used (its ``TYPE_CHECKING``
    block: the table handed to ``lazy_exports`` matches it, see test_lazy_exports.py)."""
    names: dict[str, str] = {}
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for item in node.body:
                if isinstance(item, ast.ImportFrom) and item.module is not None:
                    names.update({alias.asname or alias.name: item.module for alias in item.names})
    return names


def _import_graph() -> dict[str, set[str]]:
    """Engine module -> the engine modules and packages loading it loads first (a name imported from a
    package loads the module that defines it, at once)."""
    files = {_module_name(path): path for path in CORE.rglob("*.py")}
    lazy = {name: _lazy_names(path) for name, path in files.items() if path.name == "__init__.py"}
    graph: dict[str, set[str]] = {name: set() for name in files}
    for name, path in files.items():
        for node in _run_time_imports(ast.parse(path.read_text(encoding="utf-8")).body):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                assert node.level == 0 and node.module is not None, f"{name}: a relative import"
                targets = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
                from_package = lazy.get(node.module, {})
                targets += [from_package[alias.name] for alias in node.names if alias.name in from_package]
            for target in targets:
                parts = target.split(".")
                # importing a.b.c runs a's and a.b's __init__ first
                for depth in range(1, len(parts) + 1):
                    loaded = ".".join(parts[:depth])
                    if loaded in files and loaded != name and not name.startswith(loaded + "."):
                        graph[name].add(loaded)
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of ``graph``, as the modules along it, or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)) is not None:
                return found
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (found := visit(start)) is not None:
            return found
    return None


def test_the_engine_imports_form_no_cycle() -> None:
    cycle = _cycle(_import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_the_cycle_check_finds_a_cycle_through_a_package_init() -> None:
    graph = {
        "piwork.core.a": {"piwork.core.a.one"},
        "piwork.core.a.one": {"piwork.core.b", "piwork.core.b.two"},
        "piwork.core.b": {"piwork.core.b.two"},
        "piwork.core.b.two": {"piwork.core.a", "piwork.core.a.three"},
        "piwork.core.a.three": set(),
    }
    assert _cycle(graph) == [
        "piwork.core.a",
        "piwork.core.a.one",
        "piwork.core.b",
        "piwork.core.b.two",
        "piwork.core.a",
    ]
    graph["piwork.core.b.two"] = {"piwork.core.a.three"}
    assert _cycle(graph) is None


def test_the_graph_follows_a_name_imported_from_a_package_to_its_module() -> None:
    graph = _import_graph()
    assert graph["piwork.core.session"] == {"piwork.core.lazy_exports"}  # its names load when used
    assert "piwork.core.checkpoints.hook" in graph["piwork.core.agent.session"]  # ``Checkpointer``, at once
    assert "piwork.core.session" in graph["piwork.core.agent.session"]  # a.b.c loads a.b first


@pytest.mark.parametrize("name", PACKAGES)
def test_engine_modules_import_their_own_package_by_module_path(name: str) -> None:
    """Inside a package, ``from piwork.core.x import y`` would read ``y`` off a half-run ``__init__``."""
    offenders = []
    for path in (CORE / name).rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module == f"piwork.core.{name}":
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert offenders == []


@pytest.mark.parametrize("name", PACKAGES)
def test_each_package_imports_first_in_a_fresh_interpreter(name: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", f"import piwork.core.{name}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
