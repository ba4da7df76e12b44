"""Package namespaces whose names are imported when first used (PEP 562).

Each engine package's ``__init__`` names its public API; importing all of it at once took a third of a
second (some 200 modules, each dataclass built as its module runs) while a headless run or ``inspect``
uses half of it. A package therefore lists its names in an ``if TYPE_CHECKING:`` block (what type
checkers, the import contracts and bundlers read) and hands the same table to ``lazy_exports``: the
first ``from piwork.core.session import SessionTree`` imports ``piwork.core.session.tree`` then, and the
name is kept in the package for every later use. ``tests/core/test_lazy_exports.py`` checks that the
table and the imports agree.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(
    package: str, exports: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``: ``exports`` maps each public name to the module that
    defines it, as ``"module"`` or ``"module:attribute"`` when the package names it differently."""
    namespace = sys.modules[package].__dict__

    def __getattr__(name: str) -> Any:
        where = exports.get(name)
        if where is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, _, attribute = where.partition(":")
        value = getattr(importlib.import_module(module), attribute or name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(exports))

    return __getattr__, __dir__
