"""``piwork -p PROMPT``: run one prompt without a window and print the answer (or every event as JSON).

    piwork -p PROMPT [--provider P] [--model [P/]ID] [--base-url URL] [--thinking LEVEL] [--cwd DIR]
                     [--session FILE | --continue | --no-session] [--session-id ID]
                     [--approve | --no-approve] [--yes] [--mode text|json] [--api-key KEY]
                     [--tools A,B | --no-tools] [--exclude-tools A,B] [@FILE ...] [MESSAGE ...]

Piped stdin is read and put before the ``-p`` text (``-p -``, or no ``-p`` text: stdin alone); the
``@FILE`` arguments go between the two: text files inlined, images attached to the first prompt.
Text mode prints the final answer; json mode prints the session header, then one JSON object per
event. The exit code is 0 on success, 1 when the run failed (reason on stderr), 2 for bad arguments,
130/143 when interrupted. API keys are never printed. A project set to ask before commands and file
changes is never waited on: each such call is refused with a result saying so, unless ``--yes``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import signal
import sys
from typing import Any, TextIO

from piwork.core.agent import SAVE_FAILED, AgentEvent, ErrorNotice, Listener, NoModel, event_to_json
from piwork.core.errors import PiworkError
from piwork.core.llm import THINKING_LEVELS, ThinkingLevel, Tokenizers
from piwork.core.paths import agent_dir as default_agent_dir
from piwork.core.tool_selection import tool_list_error
from piwork.core.tools import FileArgumentError, read_file_arguments
from piwork.core.workflows import AgentRuntime, RuntimeOptions, create_runtime

STDIN = "-"
ABORT_GRACE_SECONDS = 5.0
"""After SIGINT/SIGTERM, how long the abort may take before the process ends regardless."""
LONE_SURROGATE = re.compile("[\ud800-\udfff]")
NO_MODEL_HINT = (
    " Pass --model PROVIDER/ID and give its API key in the environment (for example ANTHROPIC_API_KEY)"
    " or with --api-key."
)


class UsageError(Exception):
    pass


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="piwork", description="Run one prompt headless.", add_help=True)
    parser.add_argument("-p", "--print", "--prompt", dest="prompt", nargs="?", const=STDIN, default=None)
    parser.add_argument("--provider")
    parser.add_argument("--model", help="model id, or provider/id")
    parser.add_argument("--base-url", help="send requests to this server instead of the model's")
    parser.add_argument("--thinking", choices=THINKING_LEVELS)
    parser.add_argument("--cwd", default=os.getcwd())
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--session", metavar="FILE", help="continue (or create) this session file")
    where.add_argument(
        "-c",
        "--continue",
        dest="continue_recent",
        action="store_true",
        help="continue the latest session of the folder",
    )
    where.add_argument("--no-session", action="store_true", help="keep nothing on disk")
    trust = parser.add_mutually_exclusive_group()
    trust.add_argument("-a", "--approve", action="store_true", help="trust the project for this run")
    trust.add_argument(
        "-na", "--no-approve", action="store_true", help="do not trust the project for this run"
    )
    parser.add_argument(
        "-y",
        "--yes",
        action="store_true",
        help="allow the commands and file changes this project asks about (its Read only mode still refuses "
        "them); without it they are refused, since nobody is there to ask",
    )
    parser.add_argument(
        "--session-id",
        metavar="ID",
        help="the folder's session with this id, created with it when there is none",
    )
    parser.add_argument("--mode", choices=("text", "json"), default="text")
    parser.add_argument("--api-key", help="API key for this run only (kept in memory)")
    tools = parser.add_mutually_exclusive_group()
    tools.add_argument(
        "-t",
        "--tools",
        metavar="LIST",
        help="comma-separated tools (names or * patterns) to enable, or only +name/-name changes",
    )
    tools.add_argument("-nt", "--no-tools", action="store_true", help="start with no tools")
    tools.add_argument(
        "-nbt", "--no-builtin-tools", dest="no_tools", action="store_true", help=argparse.SUPPRESS
    )
    parser.add_argument(
        "-xt",
        "--exclude-tools",
        metavar="LIST",
        help="comma-separated tools (names or * patterns) to disable",
    )
    parser.add_argument(
        "messages",
        nargs="*",
        help="@FILE to include in the first prompt; further prompts, sent one after another",
    )
    return parser


def _tool_list(value: str | None) -> tuple[str, ...] | None:
    """``a, b,,c`` as ("a", "b", "c"); None when the option is not given."""
    if value is None:
        return None
    return tuple(name.strip() for name in value.split(",") if name.strip())


def _read_prompt(value: str | None, stdin: TextIO | None, file_text: str = "") -> str:
    """The prompt: piped stdin (when not a terminal), the ``@FILE`` text, then the ``-p`` text, as Pi
    joins them."""
    piped = ""
    if stdin is not None and not stdin.closed and not stdin.isatty():
        piped = stdin.read()
    if value is None or value == STDIN:
        if not (piped + file_text).strip():
            raise UsageError("no prompt given (pass -p TEXT, or pipe the prompt into stdin)")
        return valid_text(piped + file_text)
    return valid_text(piped + file_text + value)


def valid_text(text: str) -> str:
    """Bytes that were not UTF-8 (kept by Python as lone surrogates) become U+FFFD, as a UTF-8 reader shows
    them: a lone surrogate cannot be written to the session file as UTF-8 nor sent to a provider."""
    return LONE_SURROGATE.sub("\ufffd", text)


def main(
    argv: list[str], stdin: TextIO | None = None, stdout: TextIO | None = None, stderr: TextIO | None = None
) -> int:
    stdin, stdout, stderr = stdin or sys.stdin, stdout or sys.stdout, stderr or sys.stderr
    try:
        ns = _parser().parse_args(argv)
    except SystemExit as exit_:
        return int(exit_.code or 0)
    if ns.prompt is not None and ns.prompt.startswith("@"):  # -p is a flag to Pi: ``-p @FILE`` names a file
        ns.messages.insert(0, ns.prompt)
        ns.prompt = STDIN
    file_names = [m[1:] for m in ns.messages if m.startswith("@")]
    messages = [m for m in ns.messages if not m.startswith("@")]
    tools = _tool_list(ns.tools)
    problem = tool_list_error(tools) if tools is not None else None
    if problem is not None:
        print(f"piwork: --tools: {problem}", file=stderr)
        return 2
    try:
        files = read_file_arguments(file_names, os.getcwd())
    except FileArgumentError as err:
        print(f"piwork: {err}", file=stderr)
        return 1
    try:
        prompt = _read_prompt(ns.prompt, stdin, files.text)
    except UsageError as err:
        print(f"piwork: {err}", file=stderr)
        return 2
    options = RuntimeOptions(
        cwd=os.path.abspath(ns.cwd),
        agent_dir=default_agent_dir(),
        provider=ns.provider,
        model=ns.model,
        base_url=ns.base_url,
        thinking=_thinking(ns.thinking),
        session_file=ns.session,
        continue_recent=ns.continue_recent,
        no_session=ns.no_session,
        session_id=ns.session_id,
        tools=tools,
        no_tools=ns.no_tools,
        exclude_tools=_tool_list(ns.exclude_tools),
        trust_override=True if ns.approve else False if ns.no_approve else None,
        api_key=ns.api_key,
        tokenizers=Tokenizers(default_agent_dir()),
        count_stats_at_open=False,
        approve_all=ns.yes,
    )
    prompts = [prompt, *(valid_text(message) for message in messages)]
    return asyncio.run(_run(options, prompts, ns.mode, stdout, stderr, files.images))


def _thinking(value: str | None) -> ThinkingLevel | None:
    return next((level for level in THINKING_LEVELS if level == value), None)


async def _run(
    options: RuntimeOptions,
    prompts: list[str],
    mode: str,
    out: TextIO,
    err: TextIO,
    images: list[dict[str, Any]] | None = None,
) -> int:
    try:
        runtime = await create_runtime(options)
    except PiworkError as error:
        print(f"piwork: {error}", file=err)
        return 1
    notices = [] if runtime.store.read_only else runtime.notices  # read-only: the prompt's error says why
    for warning in [*notices, *runtime.file_warnings()]:
        print(f"piwork: warning: {warning}", file=err)
    session = runtime.session
    interrupted: list[int] = []
    aborting: set[asyncio.Task[None]] = set()
    loop = asyncio.get_running_loop()

    def interrupt(code: int) -> None:
        interrupted.append(code)
        if len(interrupted) > 1:  # asked again: stop now
            _exit_now(code, err)
        # A step stuck in a system call (a write into a pipe nobody reads) cannot be cancelled:
        # if the abort has not ended the run in time, the process ends anyway.
        loop.call_later(ABORT_GRACE_SECONDS, _exit_now, code, err)
        task = loop.create_task(session.abort())
        aborting.add(task)
        task.add_done_callback(aborting.discard)

    for signum, code in ((signal.SIGINT, 130), (signal.SIGTERM, 143)):
        with contextlib.suppress(NotImplementedError, RuntimeError):  # not on the main thread
            loop.add_signal_handler(signum, interrupt, code)
    unsubscribe = session.subscribe(_json_writer(out) if mode == "json" else _notice_printer(err))
    save_failures: list[str] = []
    unsubscribe_saves = session.subscribe(
        lambda e: (
            save_failures.append(e.message)
            if isinstance(e, ErrorNotice) and e.source == SAVE_FAILED
            else None
        )
    )
    try:
        if mode == "json" and runtime.store.header is not None:
            _write_line(out, runtime.store.header)
        for index, text in enumerate(prompts):
            await session.prompt(text, (images or ()) if index == 0 else ())
            if interrupted or _failed(runtime):
                break
    except NoModel as error:
        print(f"piwork: {error}{NO_MODEL_HINT if runtime.session.model is None else ''}", file=err)
        return 1
    except PiworkError as error:
        print(f"piwork: {error}", file=err)
        return 1
    finally:
        unsubscribe()
        unsubscribe_saves()
        session.governance.governor.estimator.counter.flush()  # long texts' counts, for the next run
        for signum in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.remove_signal_handler(signum)
        runtime.store.close()
    if interrupted:
        print("piwork: interrupted", file=err)
        return interrupted[0]
    if save_failures:  # the run was stopped: the answer is not printed as if all went well
        if mode == "json":
            print(f"piwork: {save_failures[0]}", file=err)
        return 1
    return _finish(runtime, mode, out, err)


def _exit_now(code: int, err: TextIO) -> None:
    """End the process without waiting for worker threads (entries already written stay written)."""
    with contextlib.suppress(Exception):
        print("piwork: interrupted (a running step did not stop; exiting without it)", file=err)
        err.flush()
        sys.stdout.flush()
    os._exit(code)


def _failed(runtime: AgentRuntime) -> bool:
    last = _last_assistant(runtime)
    return last is not None and last.get("stopReason") in ("error", "aborted")


def _last_assistant(runtime: AgentRuntime) -> dict[str, Any] | None:
    for message in reversed(runtime.session.messages):
        if message.get("role") == "assistant":
            return message
    return None


def _finish(runtime: AgentRuntime, mode: str, out: TextIO, err: TextIO) -> int:
    stopped = runtime.session.governance.stopped
    if stopped is not None:  # the context governor withheld the last request (the pricing mark)
        print(f"piwork: the request was not sent: {stopped}", file=err)
        return 1
    last = _last_assistant(runtime)
    if last is None:
        print("piwork: the model gave no answer", file=err)
        return 1
    if last.get("stopReason") in ("error", "aborted"):
        print(f"piwork: {last.get('errorMessage') or 'the request ' + str(last.get('stopReason'))}", file=err)
        return 1
    if mode == "text":
        for block in last.get("content") or []:
            if isinstance(block, dict) and block.get("type") == "text":
                out.write(str(block.get("text", "")) + "\n")
        out.flush()
    return 0


def _write_line(out: TextIO, value: Any) -> None:
    out.write(json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str) + "\n")
    out.flush()


def _notice_printer(err: TextIO) -> Listener:
    """Text mode: notices that do not end the run (a save failure, a broken skill) still reach stderr."""

    def show(event: AgentEvent) -> None:
        if isinstance(event, ErrorNotice):
            print(f"piwork: {event.message}", file=err)

    return show


def _json_writer(out: TextIO) -> Listener:
    def write(event: AgentEvent) -> None:
        _write_line(out, event_to_json(event))

    return write
