"""Project-wide fixtures: the loopback model-provider server (see tests/support/loopback_server.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.loopback_server import LoopbackServer


@pytest.fixture
def loopback() -> Iterator[LoopbackServer]:
    """A started loopback provider server; script turns with ``loopback.script(Turn(...), ...)``."""
    with LoopbackServer() as server:
        yield server
