"""Settings and credentials: provider keys (keyring, env vars, session-only), default model, compaction, trust."""
