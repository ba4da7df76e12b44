"""What the chat shows while no model can answer: what is missing and the buttons that fix it."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from piwork.gui.inert_text import plain_label

# Model states the chat can be in (set by the session controller).
READY = "ready"  # the current model can answer
CHOOSE = "choose"  # some model can answer, but the current one cannot (or none is picked)
MISSING = "missing"  # no model can answer: no provider key and no local server
CHECKING = "checking"  # the keyring has not said yet which providers have a key

TEXTS = {
    CHECKING: (
        "Checking for API keys…",
        "piwork is asking the system keyring which providers have a key. This takes a moment when the "
        "keyring is locked or slow to answer; the window stays usable meanwhile.",
    ),
    MISSING: (
        "Set up a model to start",
        "piwork needs a model to talk to. Add a server that runs on this computer or your network "
        "(Ollama, llama.cpp, vLLM, LM Studio — no key needed), or an API key for Anthropic, OpenAI or "
        "another provider.",
    ),
    CHOOSE: (
        "Pick a model to start",
        "The current model cannot answer: its provider has no API key. Pick another model in the list "
        "under the message box (Ctrl+M), or add the key.",
    ),
}


class EmptyState(QFrame):
    addServerRequested = Signal()
    addKeyRequested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("emptyState")
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.title = plain_label(parent=self)
        self.title.setObjectName("emptyStateTitle")
        font = self.title.font()
        font.setPointSizeF(font.pointSizeF() * 1.3)
        font.setBold(True)
        self.title.setFont(font)
        self.text = plain_label(parent=self)
        self.text.setObjectName("emptyStateText")
        self.text.setWordWrap(True)
        self.kept = plain_label(parent=self)
        self.kept.setObjectName("emptyStateKept")
        self.kept.setWordWrap(True)
        self.kept.hide()
        self.server_button = QPushButton("Add a &Local or Custom Server…", self)
        self.server_button.setObjectName("emptyStateAddServer")
        self.server_button.setToolTip(
            "Settings → Providers → Add Server: Ollama, llama.cpp, vLLM, LM Studio…"
        )
        self.key_button = QPushButton("Add an &API Key…", self)
        self.key_button.setObjectName("emptyStateAddKey")
        self.key_button.setToolTip("Settings → Providers: save a key for Anthropic, OpenAI, OpenRouter…")
        for button in (self.server_button, self.key_button):
            button.setAccessibleDescription(button.toolTip())
        buttons = QHBoxLayout()
        buttons.addWidget(self.server_button)
        buttons.addWidget(self.key_button)
        buttons.addStretch(1)
        card = QWidget(self)
        card.setMaximumWidth(620)
        inner = QVBoxLayout(card)
        inner.setSpacing(12)
        inner.addWidget(self.title)
        inner.addWidget(self.text)
        inner.addLayout(buttons)
        inner.addWidget(self.kept)
        self.settings_hint = QLabel("Everything is also in File → Settings → Providers (Ctrl+,).", card)
        self.settings_hint.setObjectName("emptyStateHint")
        self.settings_hint.setEnabled(False)  # drawn in the muted text colour
        inner.addWidget(self.settings_hint)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(24, 20, 24, 20)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(card, 6)  # up to its maximum width, centred; word-wrapped text keeps its height
        row.addStretch(1)
        layout.addStretch(1)
        layout.addLayout(row)
        layout.addStretch(2)
        self.server_button.clicked.connect(self.addServerRequested)
        self.key_button.clicked.connect(self.addKeyRequested)
        self.state = READY

    def set_state(self, state: str) -> None:
        self.state = state
        title, text = TEXTS.get(state, ("", ""))
        self.title.setText(title)
        self.text.setText(text)
        self.setAccessibleName(title)
        checking = state == CHECKING
        for widget in (self.server_button, self.key_button, self.settings_hint):
            widget.setVisible(not checking)  # nothing to fix yet
        if state == READY:
            self.kept.hide()

    def note_kept_message(self) -> None:
        """A message was typed before a model existed: say that it waits in the message box."""
        when = "the keys are checked" if self.state == CHECKING else "a model is set up"
        self.kept.setText(f"Your message is still in the message box; send it again once {when}.")
        self.kept.show()
