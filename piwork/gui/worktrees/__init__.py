"""A session per line of work in a git worktree: Session → New Session in a Worktree…, Compare with Base
Branch, Remove Worktree…, and the status bar's branch label (``flow.WorktreeFlow``)."""
