"""Where the reference implementation is, for the tests that compare piwork with it.

Those tests run only when it is installed (``$PI_ORACLE_DIR``, default ``/tmp/pi-oracle``: Node 22 and
the Pi packages) and skip with :data:`MISSING_REASON` otherwise; nothing else depends on it.
"""

from __future__ import annotations

import os
from pathlib import Path

REFERENCE_DIR = Path(os.environ.get("PI_ORACLE_DIR", "/tmp/pi-oracle"))
NODE = REFERENCE_DIR / "node22" / "package" / "bin" / "node"
PACKAGES = REFERENCE_DIR / "pi" / "node_modules" / "@earendil-works"
PI_DIST = PACKAGES / "pi-coding-agent" / "dist"
MISSING_REASON = f"reference implementation not installed under {REFERENCE_DIR} (set PI_ORACLE_DIR)"


def reference_installed(*required: Path) -> bool:
    """Node and the coding-agent package exist (and every extra path named)."""
    return all(p.exists() for p in (NODE, PI_DIST, *required))
