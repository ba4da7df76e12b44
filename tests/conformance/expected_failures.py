"""The ONE list of conformance ops the engine does not implement yet.

Cases of these ops are expected to fail (strict: a case that starts passing fails the suite,
so the op must be removed from here). The list only ever shrinks; today every op passes.
"""

EXPECTED_FAILING_OPS: frozenset[str] = frozenset()
