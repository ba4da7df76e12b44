"""The current-tree verifier gate: a verifier that passed on this exact working tree is not run again.

A command that is *exactly* (after trimming) a registered verifier (the Task Contract's ``verify`` or
one of the profile's ``verify[]``) goes through the gate. The tree digest is a sha256 over
``"piwork-tree-v1\\n"``, the HEAD commit id (or ``none``), the bytes of ``git diff --binary HEAD`` and,
for every untracked, non-ignored file in sorted order, its path, a NUL, the sha256 of its content and
``\\n``. Receipts are appended to ``<agentDir>/piwork/verifier-receipts/<key>.jsonl`` (outside the
repository, so a repository cannot plant a pass), only when the digest before and after the run are
equal. A receipt is reused when the latest one for (cwd, command) passed, has today's digest, no
receipt failed on that digest, it is at most 24 hours old and nobody asked for a real run.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import secrets
import subprocess
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from piwork.core import safe_read
from piwork.core.context.contract import latest_contract, verify_commands
from piwork.core.resources.profile import load_profile
from piwork.core.session.tree import SessionTree
from piwork.core.tools.base import ToolContext, ToolError, ToolResult

RECEIPT_VERSION = 1
MAX_RECEIPT_AGE_S = 24 * 3600
DIGEST_PREFIX = b"piwork-tree-v1\n"
_EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
_GIT_ENV = {"GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C", "GIT_TERMINAL_PROMPT": "0"}


# ----------------------------------------------------------------------------- tree digest


def _git(root: str, *args: str) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, **_GIT_ENV}
    return subprocess.run(["git", *args], cwd=root, capture_output=True, env=env, check=False)


def git_toplevel(cwd: str) -> str | None:
    """The work tree root holding ``cwd``; None outside a git work tree (or without git)."""
    try:
        done = _git(cwd, "rev-parse", "--show-toplevel")
    except OSError:
        return None
    if done.returncode != 0:
        return None
    top = done.stdout.decode("utf-8", "surrogateescape").strip()
    return top or None


def _file_sha(path: str) -> str:
    digest = hashlib.sha256()
    try:
        if os.path.islink(path):
            digest.update(os.fsencode(os.readlink(path)))
        else:
            return safe_read.digest_file(path, safe_read.HASHED_PROJECT_FILE).sha256
    except OSError as err:
        digest.update(f"unreadable: {err.strerror}".encode())
    return digest.hexdigest()


class DigestError(RuntimeError):
    """git failed while computing a digest: the gate then stays out of the way."""


def tree_digest(root: str) -> str:
    """The digest of the work tree at ``root`` (a git top level). Raises :class:`DigestError`."""
    head = _git(root, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
    head_id = head.stdout.decode().strip() if head.returncode == 0 else "none"
    base = head_id if head_id != "none" else _EMPTY_TREE
    diff = _git(root, "diff", "--binary", "--no-color", "--no-ext-diff", "--no-textconv", base)
    if diff.returncode != 0:
        raise DigestError(diff.stderr.decode("utf-8", "replace").strip() or "git diff failed")
    others = _git(root, "ls-files", "--others", "--exclude-standard", "-z")
    if others.returncode != 0:
        raise DigestError(others.stderr.decode("utf-8", "replace").strip() or "git ls-files failed")
    digest = hashlib.sha256(DIGEST_PREFIX)
    digest.update(head_id.encode())
    digest.update(diff.stdout)
    for raw in sorted(p for p in others.stdout.split(b"\0") if p):
        path = os.path.join(os.fsencode(root), raw)
        digest.update(raw + b"\0" + _file_sha(os.fsdecode(path)).encode() + b"\n")
    return digest.hexdigest()


# ----------------------------------------------------------------------------- receipts


@dataclass(frozen=True)
class Receipt:
    id: str
    command: str
    cwd: str
    tree_digest: str
    exit_code: int
    started_at: str
    duration_ms: int
    output_sha256: str
    session_id: str
    v: int = RECEIPT_VERSION

    def to_json(self) -> dict[str, Any]:
        return {
            "v": self.v,
            "id": self.id,
            "command": self.command,
            "cwd": self.cwd,
            "treeDigest": self.tree_digest,
            "exitCode": self.exit_code,
            "startedAt": self.started_at,
            "durationMs": self.duration_ms,
            "outputSha256": self.output_sha256,
            "sessionId": self.session_id,
        }

    @classmethod
    def from_json(cls, value: Any) -> Receipt | None:
        if not isinstance(value, dict) or value.get("v") != RECEIPT_VERSION:
            return None
        try:
            exit_code = value["exitCode"]
            duration = value.get("durationMs", 0)
            if not isinstance(exit_code, int) or isinstance(exit_code, bool) or not isinstance(duration, int):
                return None
            fields = [value[k] for k in ("id", "command", "cwd", "treeDigest", "startedAt")]
            if not all(isinstance(f, str) for f in fields):
                return None
            return cls(
                fields[0],
                fields[1],
                fields[2],
                fields[3],
                exit_code,
                fields[4],
                duration,
                str(value.get("outputSha256", "")),
                str(value.get("sessionId", "")),
            )
        except KeyError:
            return None

    @property
    def passed(self) -> bool:
        return self.exit_code == 0

    def started_epoch(self) -> float | None:
        try:
            return datetime.fromisoformat(self.started_at.replace("Z", "+00:00")).timestamp()
        except ValueError:
            return None


def receipts_path(agent_dir: str | os.PathLike[str], root: str) -> Path:
    key = hashlib.sha256(os.path.realpath(root).encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return Path(agent_dir) / "piwork" / "verifier-receipts" / f"{key}.jsonl"


class ReceiptStore:
    """The append-only receipt file of one repository (bad lines are skipped, never rewritten)."""

    def __init__(self, agent_dir: str | os.PathLike[str], root: str) -> None:
        self.path = receipts_path(agent_dir, root)

    def all(self) -> list[Receipt]:
        try:
            data = safe_read.read_bytes(self.path, safe_read.CACHE)
        except OSError:
            return []
        out = []
        for line in data.splitlines():
            try:
                receipt = Receipt.from_json(json.loads(line))
            except ValueError:
                continue
            if receipt is not None:
                out.append(receipt)
        return out

    def append(self, receipt: Receipt) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        line = json.dumps(receipt.to_json(), ensure_ascii=False) + "\n"
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(line)
            fh.flush()
            os.fsync(fh.fileno())


@dataclass(frozen=True)
class ReuseDecision:
    reuse: bool
    reason: str  # why it is (not) reused, in words
    receipt: Receipt | None = None


def decide_reuse(
    receipts: Sequence[Receipt],
    cwd: str,
    command: str,
    digest: str,
    now: float,
    force: bool = False,
    max_age_s: float = MAX_RECEIPT_AGE_S,
) -> ReuseDecision:
    """Apply the reuse rules to the receipts of one repository."""
    if force:
        return ReuseDecision(False, "a real run was asked for")
    mine = [r for r in receipts if r.cwd == cwd and r.command == command]
    if not mine:
        return ReuseDecision(False, "no earlier run of this verifier")
    latest = mine[-1]
    if not latest.passed:
        return ReuseDecision(False, f"the last run failed (exit code {latest.exit_code})", latest)
    if latest.tree_digest != digest:
        return ReuseDecision(False, "the working tree changed since the last pass", latest)
    if any(r.tree_digest == digest and not r.passed for r in mine):
        return ReuseDecision(False, "a run failed on this same tree", latest)
    started = latest.started_epoch()
    if started is None or now - started > max_age_s:
        return ReuseDecision(False, "the last pass is older than 24 hours", latest)
    return ReuseDecision(True, "passed on this exact tree", latest)


def receipt_text(receipt: Receipt) -> str:
    return (
        f"Verifier receipt: `{receipt.command}` passed on this exact tree "
        f"(digest {receipt.tree_digest[:12]}, run at {receipt.started_at}, receipt {receipt.id}). "
        "Not run again: nothing in the working tree changed since. Ask for a real run to run it anyway."
    )


# ----------------------------------------------------------------------------- the gate


def _now_iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _result_text(content: Sequence[dict[str, Any]]) -> str:
    return "".join(str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text")


class VerifierGate:
    """Wraps the bash tool's run of a registered verifier (see :class:`piwork.core.tools.bash.CommandGate`).

    ``commands()`` gives the registered verifiers now (they change with the task); ``force()`` says
    whether the Task Contract asks for real runs. :meth:`run_for_real_once` makes the next gated call
    run for real (the per-call choice of the user).
    """

    def __init__(
        self,
        agent_dir: str | os.PathLike[str],
        commands: Callable[[], Sequence[str]],
        force: Callable[[], bool] = lambda: False,
        clock: Callable[[], float] = time.time,
        on_reuse: Callable[[Receipt], None] | None = None,
    ) -> None:
        self.agent_dir = agent_dir
        self.commands = commands
        self.force = force
        self.clock = clock
        self.on_reuse = on_reuse
        self._force_next = False

    def run_for_real_once(self) -> None:
        self._force_next = True

    def matches(self, command: str) -> bool:
        wanted = command.strip()
        return bool(wanted) and wanted in {c.strip() for c in self.commands()}

    async def around(
        self, command: str, ctx: ToolContext, run: Callable[[], Awaitable[ToolResult]]
    ) -> ToolResult:
        if not self.matches(command):
            return await run()
        command = command.strip()
        cwd = os.path.realpath(ctx.cwd)
        root = await asyncio.to_thread(git_toplevel, cwd)
        if root is None:
            return await run()  # not a git work tree: the gate is off
        try:
            before = await asyncio.to_thread(tree_digest, root)
        except (DigestError, OSError):
            return await run()
        store = ReceiptStore(self.agent_dir, root)
        force = self._force_next or self.force()
        self._force_next = False
        receipts = await asyncio.to_thread(store.all)
        decision = decide_reuse(receipts, cwd, command, before, self.clock(), force)
        if decision.reuse and decision.receipt is not None:
            receipt = decision.receipt
            if self.on_reuse is not None:
                self.on_reuse(receipt)
            details = {"reusedReceipt": receipt.id, "treeDigest": before, "receipt": receipt.to_json()}
            return ToolResult.text(receipt_text(receipt), details)
        started = self.clock()
        exit_code: int | None = None
        text = ""
        try:
            result = await run()
            exit_code, text = 0, _result_text(result.content)
            return result
        except ToolError as err:
            details = err.details or {}
            code = details.get("exitCode")
            if (
                not err.aborted
                and not details.get("timedOut")
                and not details.get("signal")
                and isinstance(code, int)
            ):
                exit_code, text = code, str(err)
            raise
        finally:
            if exit_code is not None:
                await self._record(store, root, before, command, cwd, exit_code, started, text, ctx)

    async def _record(
        self,
        store: ReceiptStore,
        root: str,
        before: str,
        command: str,
        cwd: str,
        exit_code: int,
        started: float,
        output: str,
        ctx: ToolContext,
    ) -> None:
        try:
            after = await asyncio.to_thread(tree_digest, root)
        except (DigestError, OSError):
            return
        if after != before:
            return  # the run changed the tree: it vouches for nothing
        receipt = Receipt(
            "vr-" + secrets.token_hex(6),
            command,
            cwd,
            before,
            exit_code,
            _now_iso(started),
            int((self.clock() - started) * 1000),
            hashlib.sha256(output.encode("utf-8", "surrogatepass")).hexdigest(),
            ctx.session_env.get("PI_SESSION_ID", ""),
        )
        with contextlib.suppress(OSError):  # a receipt that cannot be saved only means the next run is real
            await asyncio.to_thread(store.append, receipt)


def registered_verifiers(tree: SessionTree, cwd: str, trusted: bool) -> list[str]:
    """The verifier commands in force: the current Task Contract's ``verify``, then (trusted only) the profile's."""
    profile = load_profile(cwd).profile if trusted else None
    return verify_commands(latest_contract(tree), profile)


def contract_forces_verify(tree: SessionTree) -> bool:
    contract = latest_contract(tree)
    return contract is not None and contract.force_verify


def gate_for_session(
    agent_dir: str | os.PathLike[str], tree: SessionTree, cwd: str, trusted: bool
) -> VerifierGate:
    """The gate for one session: verifiers and ``forceVerify`` read from the session and profile at each call."""
    return VerifierGate(
        agent_dir,
        lambda: registered_verifiers(tree, cwd, trusted),
        lambda: contract_forces_verify(tree),
    )


@dataclass(frozen=True)
class VerifierRun:
    command: str
    exit_code: int | None  # None: it could not run (no bash tool, aborted)
    output_tail: str  # the last lines of what it printed
    receipt: Receipt | None  # the receipt the run wrote (None: not a git work tree, or the run changed it)


async def run_verifier_for_real(
    gate: VerifierGate, bash: Any, command: str, cwd: str, agent_dir: str
) -> VerifierRun:
    """Run ``command`` through the bash tool with the gate told to run it for real (no receipt reuse),
    as the Task panel's "Run verifier for real" does; the outcome and the receipt it recorded."""
    root = await asyncio.to_thread(git_toplevel, os.path.realpath(cwd))
    before = await asyncio.to_thread(ReceiptStore(agent_dir, root).all) if root is not None else []
    gate.run_for_real_once()
    exit_code: int | None
    try:
        result = await bash.execute("verify-for-real", {"command": command}, ToolContext(cwd))
        exit_code, text = 0, _result_text(result.content)
    except ToolError as err:
        code = (err.details or {}).get("exitCode")
        exit_code, text = (code if isinstance(code, int) else None), str(err)
    after = await asyncio.to_thread(ReceiptStore(agent_dir, root).all) if root is not None else []
    receipt = after[-1] if len(after) > len(before) else None
    tail = "\n".join(text.rstrip("\n").split("\n")[-20:])
    return VerifierRun(command, exit_code, tail, receipt)
