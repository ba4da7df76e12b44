"""Golden-case conformance: runs case files produced by the reference implementation.

``python -m piwork.conformance CASES.json...`` evaluates every case, prints a diff for each
failure and ends with ``N passed, M failed``. Ops live in :mod:`piwork.conformance.ops`, one
module per suite; each module exports ``OPS``, a mapping from op name to a function
``(args, env) -> result``.
"""
