"""The words the engine, the settings and the window share: thinking levels, queue modes, API ids.

They live here, below everything that uses them, so the settings' declarations and the provider layer
need not import each other for a word.
"""

from __future__ import annotations

from typing import Literal

ThinkingLevel = Literal["off", "minimal", "low", "medium", "high", "xhigh", "max"]
THINKING_LEVELS: tuple[ThinkingLevel, ...] = ("off", "minimal", "low", "medium", "high", "xhigh", "max")

CacheRetention = Literal["none", "short", "long"]

# How queued steering and follow-up messages are handed to the model: one per turn, or all at once.
QueueMode = Literal["one-at-a-time", "all"]
QUEUE_MODES: tuple[QueueMode, ...] = ("one-at-a-time", "all")

# The provider APIs piwork speaks (a model's ``api`` in models.json and the catalog).
ANTHROPIC_MESSAGES = "anthropic-messages"
OPENAI_COMPLETIONS = "openai-completions"
SUPPORTED_APIS = (ANTHROPIC_MESSAGES, OPENAI_COMPLETIONS)
