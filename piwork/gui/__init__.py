"""The window: PySide6 views over the engine in piwork.core."""
