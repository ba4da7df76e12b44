"""The Changes panel: files changed since a session entry, hunk by hunk, to review and revert."""
