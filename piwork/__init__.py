"""piwork: a desktop workbench for coding-agent sessions."""

__version__ = "0.1.0"
