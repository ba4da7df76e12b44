"""The window: PySide6 views over the engine in piwork.core."""

from __future__ import annotations

import sys
from types import ModuleType

import PySide6  # noqa: F401  (sets up the import hook patched below)


def _known_pyside_users() -> None:
    """PySide6 asks of every module imported after it whether its source mentions "PySide6" (for its opt-in
    ``__feature__`` switches, which piwork never turns on): it reads each module's whole source and keeps
    it in ``linecache``. For piwork's own modules the answer is known from where they live (the engine never
    imports Qt, an import contract), so they are answered without reading them: a tenth of the window's
    imports and a few MB of kept sources. Other modules are asked as before; a PySide6 without the hook is
    left alone."""
    feature = sys.modules.get("shibokensupport.feature")
    scan = getattr(feature, "_mod_uses_pyside", None)
    if feature is None or scan is None or getattr(scan, "piwork_known", False):
        return

    def uses_pyside(module: ModuleType) -> bool:
        name = getattr(module, "__name__", "")
        if isinstance(name, str) and name.partition(".")[0] == "piwork":
            return name == "piwork.gui" or name.startswith("piwork.gui.")
        return bool(scan(module))

    uses_pyside.piwork_known = True  # type: ignore[attr-defined]
    setattr(feature, "_mod_uses_pyside", uses_pyside)  # noqa: B010  (a module attribute without stubs)


_known_pyside_users()
