"""Public names of an engine package, imported on first use.

A package's ``__init__`` lists what it offers and loads each name from its module only when it is
first asked for. Importing a package therefore costs nothing and cannot close an import cycle between
the engine's modules, which import one another freely.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Mapping


def load_export(package: str, exports: Mapping[str, tuple[str, str]], name: str) -> object:
    """The public ``name`` of ``package``: ``exports`` maps it to (module within the package, name
    there). The value is kept on the package, so later look-ups are plain attribute reads."""
    try:
        module_name, attribute = exports[name]
    except KeyError:
        raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
    value = getattr(importlib.import_module(f"{package}.{module_name}"), attribute)
    setattr(sys.modules[package], name, value)
    return value
