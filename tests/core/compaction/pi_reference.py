"""Ask the reference implementation (if installed) how it reads a session file.

Located through ``PI_ORACLE_DIR`` (default ``/tmp/pi-oracle``): Node 22 at ``node22/package/bin/node``
and the package under ``pi/node_modules/@earendil-works/pi-coding-agent``. Tests using it skip with
a visible reason when it is missing.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.support.reference import MISSING_REASON, NODE, PI_DIST

_SCRIPT = """
const { SessionManager } = await import(process.argv[1] + "/core/session-manager.js");
const session = SessionManager.open(process.argv[2]);
process.stdout.write(JSON.stringify({leafId: session.getLeafId(), context: session.buildSessionContext()}));
"""


def reference_context(session_file: Path) -> dict[str, Any]:
    """``{leafId, context: {messages, thinkingLevel, model}}`` as Pi builds it after opening the file."""
    if not NODE.exists() or not (PI_DIST / "core" / "session-manager.js").exists():
        pytest.skip(MISSING_REASON)
    done = subprocess.run(
        [str(NODE), "--input-type=module", "-e", _SCRIPT, str(PI_DIST), str(session_file)],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "TZ": "UTC"},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result
