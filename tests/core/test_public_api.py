"""Each engine package's public API: what its ``__init__`` imports from its modules is what ``__all__``
lists, each name described in the package's docstring."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path
from types import ModuleType

import pytest

import piwork.core

CORE = Path(piwork.core.__file__).parent
PACKAGES = sorted(p.parent.name for p in CORE.glob("*/__init__.py"))


def _package(name: str) -> ModuleType:
    return importlib.import_module(f"piwork.core.{name}")


def _package_imports(name: str) -> dict[str, tuple[str, str]]:
    """The names the package's ``__init__`` imports from its modules (in its ``TYPE_CHECKING`` block: they load
    when first used): public name -> (module, name there)."""
    tree = ast.parse((CORE / name / "__init__.py").read_text(encoding="utf-8"))
    found: dict[str, tuple[str, str]] = {}
    typed = [
        stmt.body
        for stmt in tree.body
        if isinstance(stmt, ast.If) and isinstance(stmt.test, ast.Name) and stmt.test.id == "TYPE_CHECKING"
    ]
    for stmt in [statement for block in typed for statement in block]:
        if not isinstance(stmt, ast.ImportFrom):
            continue
        prefix = f"piwork.core.{name}."
        assert stmt.module is not None and stmt.module.startswith(prefix), stmt.module
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
    exports = _package_imports(name)
    assert sorted(package.__all__) == sorted(exports)
    assert len(set(package.__all__)) == len(package.__all__)
    for public, (module, attribute) in exports.items():
        source = importlib.import_module(f"piwork.core.{name}.{module}")
        assert getattr(package, public) is getattr(source, attribute)


@pytest.mark.parametrize("name", PACKAGES)
def test_an_unknown_name_is_an_attribute_error(name: str) -> None:
    package = _package(name)
    with pytest.raises(AttributeError, match="no_such_name"):
        package.no_such_name  # noqa: B018
    assert not hasattr(package, "no_such_name")
