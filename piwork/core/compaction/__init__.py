"""Compaction and branch summaries: keeping long sessions inside the model's context window.

Pure planning (no I/O): ``tokens`` (estimates, thresholds), ``cut_point``, ``prepare``,
``file_ops``, ``serialize``, ``branch_entries``, ``triggers`` (checkpoint decisions).
Model calls: ``summarize`` and ``prompts``. Engine entry points over a ``SessionTree``:
``compact.compact_session`` / ``compact.run_compaction`` and ``navigate.navigate_tree``.
Extension points: ``hooks``.
"""
