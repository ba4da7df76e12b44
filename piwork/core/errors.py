"""The engine's error hierarchy: every message is written for the person using piwork."""

from __future__ import annotations


class PiworkError(Exception):
    """Base of every error the engine raises on purpose; ``str(err)`` is shown to users."""


class InputRejected(PiworkError):
    """A file or argument was refused as invalid (bad JSON, bad YAML, not a session file...)."""
