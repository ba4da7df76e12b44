"""Exporting and importing sessions: a self-contained HTML page of the whole tree, the active branch as
a new session file, and copying a session file into the sessions folder."""
