"""Model providers: wire protocols, model registry, credentials and offline token counting.

Entry points for the rest of piwork:

- ``streaming.stream(model, context, options)`` / ``streaming.complete(...)``: one assistant message,
  as typed events (``types``) ending in ``DoneEvent`` or ``ErrorEvent``; never raises for request failures.
  Stop a request with ``StreamOptions(abort=asyncio.Event())``.
- ``errors``: ``classify``, ``is_context_overflow``, ``is_retryable_text`` for failed messages.
- ``models.ModelRegistry(agent_dir)``: built-in + ``models.json`` models, ``default_model(...)``.
- ``credentials.CredentialStore``: keys from this session, the keyring, the environment, models.json;
  ``keyring_state()`` tells whether keys can be saved.
- ``tokens.Tokenizers(agent_dir)``: offline tiktoken counters per model (``load_async`` first).
- ``thinking``: supported thinking levels per model; ``redaction``: masking keys in text and headers.
"""
