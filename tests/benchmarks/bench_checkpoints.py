"""Checkpoint cost on a 10,000-file project: what a file-changing tool call waits for, and a restore.

A project of 10,000 small files (100 folders of 100) is snapshotted once (the first checkpoint reads every
file). Then, median of several rounds each: ``unchanged`` (a checkpoint of the same tree: the case of most
calls; target < 150 ms), ``one_changed`` and ``hundred_changed`` (that many files rewritten first), and
``restore`` (back over 100 changed files, which first checkpoints the current state); and how many git
processes a checkpoint of the unchanged tree starts and the CPU time it takes, its own and its git
processes' (``unchanged_cpu_ms``: on a busy machine the wall time is mostly waiting for a CPU). Prints one
JSON line.
"""

from __future__ import annotations

import json
import resource
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run as a script from anywhere

from piwork.core.checkpoints import SessionCheckpoints
from piwork.core.checkpoints.shadow import ShadowRepo

FILES, ROUNDS = 10_000, 7


def _project(root: Path) -> None:
    for folder in range(FILES // 100):
        sub = root / f"pkg{folder:03d}"
        sub.mkdir(parents=True)
        for index in range(100):
            (sub / f"mod{index:03d}.py").write_text(f"# module {folder}/{index}\nVALUE = {index}\n")


def _touch(root: Path, count: int, round_no: int) -> None:
    for index in range(count):
        (root / f"pkg{index % 100:03d}" / f"mod{index // 100:03d}.py").write_text(f"changed {round_no}\n")


def _cpu_ms(action: Callable[..., object], *args: object) -> float:
    """CPU time of ``action``: this process's and its finished children's, user and system."""
    before, children = time.process_time(), resource.getrusage(resource.RUSAGE_CHILDREN)
    action(*args)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    spent = after.ru_utime + after.ru_stime - children.ru_utime - children.ru_stime
    return (time.process_time() - before + spent) * 1000


def _ms(action: Callable[..., object], *args: object) -> float:
    start = time.perf_counter()
    action(*args)
    return (time.perf_counter() - start) * 1000


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        project, agent = Path(tmp) / "project", Path(tmp) / "agent"
        _project(project)
        store = SessionCheckpoints(project, Path(tmp) / "session.jsonl", agent)
        assert store.uses_git, "the benchmark needs git"
        record = store.store.record
        first = _ms(record, "before", "e0", "c0", "bash", 0)
        figures: dict[str, list[float]] = {"unchanged": [], "one_changed": [], "hundred_changed": []}
        restores = []
        for round_no in range(ROUNDS):
            figures["unchanged"].append(_ms(record, "before", "e", f"u{round_no}", "bash", 0))
            _touch(project, 1, round_no)
            figures["one_changed"].append(_ms(record, "before", "e", f"o{round_no}", "bash", 0))
            target = store.records()[-1]
            _touch(project, 100, round_no + 100)
            figures["hundred_changed"].append(_ms(record, "before", "e", f"h{round_no}", "bash", 0))
            restores.append(_ms(store.store.restore, target, 0))
        started: list[str] = []
        run_git = ShadowRepo.git

        def counted(repo: ShadowRepo, *args: str, **options: Any) -> bytes:
            started.append(args[0])
            return run_git(repo, *args, **options)

        record("before", "e", "settle", "bash", 0)  # the restores above changed the index
        cpu = statistics.median(_cpu_ms(record, "before", "e", f"cpu{n}", "bash", 0) for n in range(ROUNDS))
        ShadowRepo.git = counted  # type: ignore[method-assign]
        record("before", "e", "count", "bash", 0)
        ShadowRepo.git = run_git  # type: ignore[method-assign]
        report = {
            "files": FILES,
            "first_checkpoint_ms": round(first, 1),
            **{name: round(statistics.median(values), 1) for name, values in figures.items()},
            "restore_100_ms": round(statistics.median(restores), 1),
            "target_unchanged_ms": 150,
            "git_processes_unchanged": len(started),
            "unchanged_cpu_ms": round(cpu, 1),
        }
        print(json.dumps(report))


if __name__ == "__main__":
    main()
