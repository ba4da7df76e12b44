"""The window side of the context-window policy: budget meter, Context panel (X-ray, manifest, governor
log, usage plot) and the preflight dialog. Views only; figures come from ``piwork.core.context``."""
