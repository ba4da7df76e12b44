"""Background work where the latest request wins: a superseded worker stops at its next check, and nothing
of it (pieces, result, failure) reaches the GUI thread once a newer request or a cancel came."""

from __future__ import annotations

import asyncio
import threading

from pytestqt.qtbot import QtBot

from piwork.gui.background import LatestWins, Request


def test_a_newer_request_supersedes_the_running_one_and_only_its_pieces_arrive(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop
) -> None:
    latest = LatestWins()
    gate = threading.Event()
    pieces: list[tuple[int, int]] = []
    results: list[str] = []
    checks: list[bool] = []

    def slow(request: Request) -> str:  # hands a piece over, then waits, then checks
        request.hand_over(lambda n: pieces.append((request.number, n)), 1)
        gate.wait(10)
        checks.append(request.superseded())
        request.hand_over(lambda n: pieces.append((request.number, n)), 2)
        return "first"

    first = latest.start(slow, results.append)
    qtbot.waitUntil(lambda: pieces == [(1, 1)])
    second = latest.start(lambda request: "second", results.append)
    assert first.superseded() and not second.superseded() and latest.current is second
    qtbot.waitUntil(lambda: results == ["second"])
    assert latest.running  # the superseded worker is still at it, until its next check
    gate.set()
    qtbot.waitUntil(lambda: not latest.running)
    assert checks == [True]  # it saw it was superseded
    assert pieces == [(1, 1)] and results == ["second"]  # nothing of it arrived after the newer start


def test_cancel_silences_the_request_and_failures_reach_only_a_current_one(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop
) -> None:
    latest = LatestWins()
    failures: list[str] = []
    results: list[object] = []

    def fail(_request: Request) -> None:
        raise OSError("the disk went away")

    latest.start(fail, results.append, lambda exc: failures.append(str(exc)))
    qtbot.waitUntil(lambda: not latest.running)
    assert failures == ["the disk went away"] and results == []

    gate = threading.Event()

    def waits_then_fails(_request: Request) -> None:
        gate.wait(10)
        raise OSError("too late to tell")

    latest.start(waits_then_fails, results.append, lambda exc: failures.append(str(exc)))
    latest.cancel()  # its owner closed
    assert latest.current is None
    gate.set()
    qtbot.waitUntil(lambda: not latest.running)
    assert failures == ["the disk went away"] and results == []
