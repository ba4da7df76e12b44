"""Session browser: this project's sessions or all projects', searched, sorted, opened, renamed, deleted."""
