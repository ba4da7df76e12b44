"""Compaction tests: entry builders shared by the modules, and the anyio backend for coroutine tests."""

from __future__ import annotations

import pytest


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
