"""Each engine package imports a public name's module when the name is first used (``piwork.core.lazy_exports``).

The names a package's ``if TYPE_CHECKING:`` block imports (what mypy, the import contracts and bundlers read)
and the table it hands to ``lazy_exports`` (what runs) must agree, or a name would type-check and fail at run
time, or load from the wrong module.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

import piwork.core

CORE = Path(piwork.core.__file__).parent
ROOT = CORE.parent.parent
PACKAGES = sorted(p.parent.name for p in CORE.glob("*/__init__.py"))


def _declared(name: str) -> tuple[dict[str, str], dict[str, str], list[str]]:
    """The package's names as its ``TYPE_CHECKING`` block imports them, as its ``lazy_exports`` table maps
    them (both ``name -> module[:attribute]``), and its ``__all__``."""
    tree = ast.parse((CORE / name / "__init__.py").read_text(encoding="utf-8"))
    typed: dict[str, str] = {}
    table: dict[str, str] = {}
    names: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for item in node.body:
                assert isinstance(item, ast.ImportFrom) and item.module is not None
                for alias in item.names:
                    renamed = alias.asname is not None and alias.asname != alias.name
                    typed[alias.asname or alias.name] = item.module + (f":{alias.name}" if renamed else "")
        elif isinstance(node, ast.If) and isinstance(node.test, ast.UnaryOp):  # if not TYPE_CHECKING
            call = node.body[0].value  # type: ignore[attr-defined]
            assert isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
            assert call.func.id == "lazy_exports"
            table = ast.literal_eval(call.args[1])
        elif isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "__all__":
            names = ast.literal_eval(node.value)
    return typed, table, names


@pytest.mark.parametrize("name", PACKAGES)
def test_the_lazy_table_matches_the_typed_imports_and_all(name: str) -> None:
    typed, table, names = _declared(name)
    assert table, f"piwork.core.{name} hands no table to lazy_exports"
    assert table == typed
    assert sorted(table) == sorted(names)


def test_importing_a_package_imports_none_of_its_modules_until_a_name_is_used() -> None:
    code = (
        "import json, sys\n"
        f"names = {PACKAGES!r}\n"
        "import piwork.core\n"
        "for n in names: __import__('piwork.core.' + n)\n"
        "first = sorted(m for m in sys.modules if m.count('.') > 2 and m.startswith('piwork.core.'))\n"
        "from piwork.core.session import SessionTree\n"
        "print(json.dumps([first, 'piwork.core.session.tree' in sys.modules, SessionTree.__module__]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    first, tree_loaded, module = json.loads(done.stdout)
    assert first == []
    assert tree_loaded and module == "piwork.core.session.tree"
