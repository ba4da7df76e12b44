"""Agent tests are coroutines run on asyncio through anyio's pytest plugin (installed with httpx).

Test modules set ``pytestmark = pytest.mark.anyio``.
"""

from __future__ import annotations

import pytest


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
