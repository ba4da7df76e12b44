"""Compaction and branch summaries: keeping long sessions inside the model's context window.

Pure planning (no I/O): ``tokens`` (estimates, thresholds), ``cut_point``, ``prepare``,
``file_ops``, ``serialize``, ``branch_entries``. Model calls: ``summarize`` and ``prompts``.
Engine entry points that read and append session entries: ``compact`` and ``navigate``;
extension points: ``hooks``.
"""
