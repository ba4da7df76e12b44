"""Worst GUI-thread stall while 20,000 tokens stream into the chat (target: under 50 ms).

A real ChatPanel (offscreen) is fed the engine's own event objects at a steady pace: one text delta per token,
with fenced code blocks in the text, then the message end (the one-time Markdown render). The conversation
already holds 2,000 rows, so the lazy model and the per-row re-layout are exercised. A 5 ms QTimer heartbeat
records the longest gap between its ticks: that is the worst time the GUI thread was busy.
Prints one JSON line.
"""

from __future__ import annotations

import json
import os
import sys
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QEventLoop, QTimer
from PySide6.QtWidgets import QApplication

from piwork.core.agent import events as ev
from piwork.core.llm import types as lt
from piwork.gui.chat.chat_panel import ChatPanel
from piwork.gui.chat.markdown import warm_up_lexers
from piwork.gui.theme import load_theme
from tests.support.heartbeat import Heartbeat

TOKENS = 20_000
TOKENS_PER_TICK = 8  # 8 tokens every 2 ms ≈ 4,000 tokens/s, faster than any provider streams
TICK_MS = 2
HISTORY = 2_000


def token_stream() -> list[str]:
    words = []
    for i in range(TOKENS):
        if i % 400 == 0:
            words.append("\n\n```python\ndef f(x):\n    return x * 2  # doubled\n```\n\n")
        elif i % 60 == 0:
            words.append("\n\n")
        else:
            words.append(f"word{i % 97} ")
    return words


def history() -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for i in range(HISTORY // 2):
        out.append({"role": "user", "content": f"question {i}", "timestamp": i})
        out.append(
            {
                "role": "assistant",
                "content": [{"type": "text", "text": f"Answer {i} with `code` and **bold**."}],
                "stopReason": "stop",
                "timestamp": i,
            }
        )
    return out


def main() -> None:
    app = QApplication(sys.argv[:1])
    warm_up_lexers()  # the app does this on a worker thread at start-up
    panel = ChatPanel(load_theme("light"))
    panel.resize(1000, 800)
    panel.show()
    panel.presenter.show_messages(history())
    app.processEvents()

    heartbeat = Heartbeat()
    tokens = token_stream()
    message: dict[str, object] = {
        "role": "assistant",
        "content": [{"type": "text", "text": ""}],
        "timestamp": 0,
    }
    presenter = panel.presenter
    sent = [0]
    done = QEventLoop()
    timings: dict[str, float] = {}

    def feed() -> None:
        if sent[0] == 0:
            presenter.handle(ev.MessageStart(message))
            presenter.handle(ev.MessageUpdate(message, lt.TextStartEvent(0, message)))
        end = min(len(tokens), sent[0] + TOKENS_PER_TICK)
        for token in tokens[sent[0] : end]:
            presenter.handle(ev.MessageUpdate(message, lt.TextDeltaEvent(0, token, message)))
        sent[0] = end
        if end >= len(tokens):
            feeder.stop()
            full = "".join(tokens)
            started = time.perf_counter()
            presenter.handle(ev.MessageUpdate(message, lt.TextEndEvent(0, full, message)))
            message["stopReason"] = "stop"
            presenter.handle(ev.MessageEnd(message))
            timings["end_handling_ms"] = (time.perf_counter() - started) * 1000
            QTimer.singleShot(300, done.quit)

    feeder = QTimer()
    feeder.setInterval(TICK_MS)
    feeder.timeout.connect(feed)
    started = time.perf_counter()
    heartbeat.start()
    feeder.start()
    done.exec()
    heartbeat.stop()
    elapsed = time.perf_counter() - started
    rows = panel.model.rowCount()
    worst = heartbeat.worst_stall_ms
    print(
        json.dumps(
            {
                "benchmark": "gui_streaming",
                "tokens": TOKENS,
                "history_rows": HISTORY,
                "visible_rows": rows,
                "stream_seconds": round(elapsed, 2),
                "worst_stall_ms": worst,
                "p99_stall_ms": heartbeat.p99_stall_ms,
                "heartbeats": len(heartbeat.gaps),
                "final_render_ms": round(timings.get("end_handling_ms", 0.0), 1),
                "target_ms": 50,
                "ok": worst < 50,
            }
        )
    )
    panel.close()


if __name__ == "__main__":
    main()
