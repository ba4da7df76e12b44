"""Search across sessions: worker thread, results model and the dialog."""
