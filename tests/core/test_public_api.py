"""Each engine package's public API: what its ``__init__`` lists is what it hands out, typed the same
for mypy as at run time, and importing the package loads none of its modules until a name is used."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

import piwork.core

CORE = Path(piwork.core.__file__).parent
PACKAGES = sorted(p.parent.name for p in CORE.glob("*/__init__.py"))
ROOT = CORE.parent.parent


def _package(name: str) -> ModuleType:
    return importlib.import_module(f"piwork.core.{name}")


def _is_lazy(name: str) -> bool:
    return hasattr(_package(name), "_EXPORTS")


def _type_checking_imports(name: str) -> dict[str, tuple[str, str]]:
    """The names the package imports (for type checkers only, when its names load lazily):
    public name -> (module, name there)."""
    tree = ast.parse((CORE / name / "__init__.py").read_text(encoding="utf-8"))
    lazy = _is_lazy(name)
    statements: list[ast.stmt] = []
    for node in tree.body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            statements.extend(node.body)
        elif not lazy and isinstance(node, ast.ImportFrom) and node.module != "__future__":
            statements.append(node)
    found: dict[str, tuple[str, str]] = {}
    for stmt in statements:
        assert isinstance(stmt, ast.ImportFrom) and stmt.module is not None
        prefix = f"piwork.core.{name}."
        assert stmt.module.startswith(prefix), stmt.module
        for alias in stmt.names:
            found[alias.asname or alias.name] = (stmt.module.removeprefix(prefix), alias.name)
    return found


def test_every_engine_package_with_a_public_api_is_covered() -> None:
    assert {
        "agent",
        "compaction",
        "context",
        "export",
        "fs",
        "llm",
        "resources",
        "session",
        "tools",
        "workflows",
    } <= set(PACKAGES)


@pytest.mark.parametrize("name", PACKAGES)
def test_the_package_says_what_it_offers(name: str) -> None:
    package = _package(name)
    assert package.__doc__ and package.__doc__.strip()
    if hasattr(package, "__all__"):
        assert "Public API" in package.__doc__
        for public in package.__all__:
            assert f"``{public}``" in package.__doc__, f"{name}: {public} is not described"


@pytest.mark.parametrize("name", PACKAGES)
def test_all_lists_exactly_what_the_package_hands_out(name: str) -> None:
    package = _package(name)
    if not hasattr(package, "__all__"):
        pytest.skip("no public names")
    exports = _type_checking_imports(name)
    assert sorted(package.__all__) == sorted(exports)
    assert len(set(package.__all__)) == len(package.__all__)
    if _is_lazy(name):
        assert exports == package._EXPORTS
    for public, (module, attribute) in exports.items():
        source = importlib.import_module(f"piwork.core.{name}.{module}")
        assert getattr(package, public) is getattr(source, attribute)


@pytest.mark.parametrize("name", PACKAGES)
def test_an_unknown_name_is_an_attribute_error(name: str) -> None:
    package = _package(name)
    with pytest.raises(AttributeError, match="no_such_name"):
        package.no_such_name  # noqa: B018
    assert not hasattr(package, "no_such_name")


LAZY_PACKAGES = [name for name in PACKAGES if (CORE / name / "__init__.py").read_text().count("_EXPORTS")]


@pytest.mark.parametrize("name", LAZY_PACKAGES)
def test_importing_the_package_loads_none_of_its_modules(name: str) -> None:
    """A package whose names load lazily imports none of its modules until a name is used (packages of
    plain imports load theirs, and are not listed here)."""
    assert _is_lazy(name)
    probe = (
        "import sys\n"
        f"import piwork.core.{name}\n"
        f"print(sorted(m for m in sys.modules if m.startswith('piwork.core.{name}.')))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == "[]"
