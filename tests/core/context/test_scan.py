"""The governor's incremental scan gives, message by message, what a full pass over the list gives."""

from __future__ import annotations

from piwork.core.context.estimate import TokenEstimator
from piwork.core.context.groups import partition
from piwork.core.context.scan import TranscriptScan

from .transcripts import assistant, call, custom, result, user


def _transcript() -> list[dict]:  # type: ignore[type-arg]
    return [
        custom("piwork.contextBundle", "bundle"),
        user("fix it"),
        assistant(call("a", "read", path="x.py"), call("b", "bash", command="pytest -q")),
        result("a", "read", "x = 1\n" * 50),
        result("b", "bash", "1 failed", is_error=True),
        assistant(call("c", "edit", path="x.py"), stop="error"),  # errored: its call needs no result
        user("again"),
        assistant(call("d", "read", path="x.py")),
        result("d", "read", "x = 2\n" * 50),
        result("zz", "read", "orphan"),  # joins no group
        assistant(call("e", "ls", path=".")),  # left without a result at the end
    ]


def _state(scan: TranscriptScan) -> tuple:  # type: ignore[type-arg]
    starts = [scan.group_start(g) for g in range(scan.group_count())]
    return (
        scan.tokens,
        starts,
        scan.all_orphans(),
        scan.results,
        scan.last_read,
        scan.last_shape,
        scan.last_ok_shape,
        scan.last_command,
        scan.round_times,
        scan.bundle_ms,
    )


def test_incremental_scan_equals_a_full_pass_at_every_length() -> None:
    messages = _transcript()
    estimator = TokenEstimator()
    growing = TranscriptScan(estimator)
    for n in range(len(messages) + 1):
        prefix = messages[:n]
        assert growing.extended_by(prefix)
        growing.update(prefix)
        full = TranscriptScan(estimator)
        full.update(prefix)
        assert _state(growing) == _state(full)
        expected = partition(prefix)
        assert [g.start for g in expected.groups] == _state(full)[1]
        assert list(expected.orphans) == full.all_orphans()
        assert growing.tokens == estimator.messages(prefix)
    assert {f.call_id for f in growing.results} == {"a", "b", "d"}  # "zz" has no call in the list
    assert growing.last_read == {("x.py", (None, None)): 8}
    assert growing.last_whole_read == {"x.py": 8}
    failed = growing.results[1]
    assert (
        failed.failed
        and failed.info.shape in growing.last_shape
        and failed.info.shape not in growing.last_ok_shape
    )


def test_a_replaced_list_is_not_an_extension() -> None:
    messages = _transcript()
    scan = TranscriptScan(TokenEstimator())
    scan.update(messages[:5])
    assert not scan.extended_by([dict(m) for m in messages])  # equal content, other objects
    assert not scan.extended_by(messages[:4])
    assert scan.extended_by(messages)
