"""Op implementations, one module per suite, discovered automatically.

Each module defines ``OPS: dict[str, OpFunction]``. An op receives the case's ``args`` (with
``$ROOT`` already replaced) and a :class:`~piwork.conformance.harness.CaseEnv`, and returns a
JSON-like value (objects with ``to_json`` are converted).
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from functools import cache
from typing import Any

OpFunction = Callable[[dict[str, Any], Any], Any]


@cache
def all_ops() -> dict[str, OpFunction]:
    ops: dict[str, OpFunction] = {}
    for info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{info.name}")
        ops.update(getattr(module, "OPS", {}))
    return ops
