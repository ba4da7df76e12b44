"""Listing a server's models ends in bounded time even when the server drips its answer."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterator

import pytest

from piwork.core.llm.model_listing import list_models


@pytest.fixture
def dripping_server() -> Iterator[str]:
    """Answers any request with headers at once, then one body byte every 0.1 s (never finishing soon)."""
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def serve() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            with conn:
                conn.recv(65536)
                conn.sendall(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n"
                )
                while not stop.wait(0.1):
                    try:
                        conn.sendall(b" ")
                    except OSError:
                        break

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
    finally:
        stop.set()
        thread.join(5)
        listener.close()


def test_a_dripping_models_answer_is_cut_off(dripping_server: str) -> None:
    started = time.monotonic()
    listing = asyncio.run(list_models(dripping_server, timeout=0.5))
    assert time.monotonic() - started < 10
    assert not listing.ok and listing.problem == "127.0.0.1 did not finish answering within 1.5 s."
