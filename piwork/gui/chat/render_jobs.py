"""Renders long finished messages as Markdown a slice at a time, so the GUI thread never stalls on one.

A 20,000-token reply is ~140 KB: parsing, laying out and colouring it in one go takes a few hundred
milliseconds. Here it is split at blank lines outside code fences; each timer tick inserts slices (and lays
them out) or colours code blocks until a small time budget is spent, then yields to the event loop. Until a
job finishes, the row keeps showing its plain streamed text.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtGui import QColor, QFont, QTextCursor, QTextDocument

from piwork.gui.chat.markdown import MARKDOWN_FEATURES, CodeBlock, code_blocks, colour_code_block
from piwork.gui.inert_text import InertTextDocument, replace_images

SLICE_CHARS = 4000
BUDGET_MS = 8.0


def split_markdown(text: str, size: int = SLICE_CHARS) -> list[str]:
    """Slices of about ``size`` characters, cut only at blank lines outside fenced code."""
    slices: list[str] = []
    current: list[str] = []
    length = 0
    fence: str | None = None
    for line in text.split("\n"):
        stripped = line.lstrip()
        if stripped.startswith(("```", "~~~")):
            marker = stripped[:3]
            fence = None if fence == marker else (fence or marker)
        current.append(line)
        length += len(line) + 1
        if fence is None and not line.strip() and length >= size:
            slices.append("\n".join(current))
            current, length = [], 0
    if current:
        slices.append("\n".join(current))
    return slices


@dataclass(eq=False)
class RenderJob:
    key: int
    revision: int
    width: int
    dark: bool
    code_background: QColor | None
    doc: QTextDocument
    slices: deque[str]
    blocks: deque[CodeBlock] = field(default_factory=deque)
    highlighting: bool = False


class MarkdownRenderer(QObject):
    """Runs render jobs on timer ticks; ``finished(key, revision, doc)`` hands over a laid-out document."""

    finished = Signal(int, int, object)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._jobs: dict[int, RenderJob] = {}
        self._timer = QTimer(self)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self._step)

    def pending(self, key: int, revision: int) -> bool:
        job = self._jobs.get(key)
        return job is not None and job.revision == revision

    def start(
        self, key: int, revision: int, text: str, width: int, font: QFont, dark: bool, code_bg: QColor | None
    ) -> None:
        doc = InertTextDocument()
        doc.setDocumentMargin(0)
        doc.setDefaultFont(font)
        doc.setTextWidth(width)
        self._jobs[key] = RenderJob(key, revision, width, dark, code_bg, doc, deque(split_markdown(text)))
        if not self._timer.isActive():
            self._timer.start()

    def cancel_all(self) -> None:
        self._jobs.clear()
        self._timer.stop()

    def _step(self) -> None:
        deadline = time.perf_counter() + BUDGET_MS / 1000
        while self._jobs and time.perf_counter() < deadline:
            job = next(iter(self._jobs.values()))
            if job.slices:
                cursor = QTextCursor(job.doc)
                cursor.movePosition(QTextCursor.MoveOperation.End)
                if not job.doc.isEmpty():
                    cursor.insertBlock()
                start = cursor.position()
                text = job.slices.popleft()
                cursor.insertMarkdown(text, MARKDOWN_FEATURES)
                if "![" in text:
                    replace_images(job.doc, start)
                job.doc.size()  # lay the new slice out now, while the budget allows
                continue
            if not job.highlighting:
                job.blocks = deque(code_blocks(job.doc))
                job.highlighting = True
            if job.blocks:
                colour_code_block(job.doc, job.blocks.popleft(), job.dark, job.code_background)
                continue
            del self._jobs[job.key]
            self.finished.emit(job.key, job.revision, job.doc)
        if not self._jobs:
            self._timer.stop()
