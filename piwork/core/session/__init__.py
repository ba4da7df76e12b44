"""Pi-compatible JSONL sessions: format and migration, reading, the entry tree, context, files.

Modules: ``format`` (names, serialization, parsing), ``migrate`` (v1→v2→v3), ``reader`` (a file
into records and diagnostics), ``line_index`` (message lines indexed from their bytes),
``records`` (the light per-entry index), ``body_source`` (entry bodies read back by offset, in
windows), ``file_bodies`` (the body loader a session's tree is built with), ``tree`` (navigation,
labels, appends, context), ``context`` (Pi's context rules over plain entries), ``store`` (files, locks, durable appends), ``branching`` (clone, fork),
``listing`` (the session browser).
"""
