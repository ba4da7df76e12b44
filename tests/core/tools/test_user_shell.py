"""The user's own shell commands: cleaned output, truncation with a log, cancellation."""

from __future__ import annotations

import asyncio
from pathlib import Path

from piwork.core.tools.user_shell import clean_output, run_user_command


def test_output_is_cleaned_for_display(tmp_path: Path) -> None:
    chunks: list[str] = []
    command = r"printf '\033[31mred\033[0m\r\nbell\a tab\tok\n\033]0;title\007done'"
    result = asyncio.run(run_user_command(command, str(tmp_path), on_chunk=chunks.append))
    assert result.output == "red\nbell tab\tok\ndone"
    assert (result.exit_code, result.cancelled, result.truncated, result.full_output_path) == (
        0,
        False,
        False,
        None,
    )
    assert "".join(chunks) == result.output
    message = result.message("cmd", 5, exclude_from_context=True)
    assert message == {
        "role": "bashExecution",
        "command": "cmd",
        "output": result.output,
        "exitCode": 0,
        "cancelled": False,
        "truncated": False,
        "timestamp": 5,
        "excludeFromContext": True,
    }


def test_clean_output_keeps_text() -> None:
    assert clean_output("é🙂\t\n\x00\x1b[1;32mx\x1b[K\ufffa") == "é🙂\t\nx"


def test_long_output_keeps_the_tail_and_logs_cleaned_text(tmp_path: Path) -> None:
    result = asyncio.run(run_user_command("seq 1 30000; exit 2", str(tmp_path), log_dir=tmp_path / "logs"))
    assert result.truncated and result.exit_code == 2
    assert result.output.split("\n")[-1] == "30000" and len(result.output.split("\n")) == 2000
    assert result.full_output_path is not None
    assert Path(result.full_output_path).read_text() == "".join(f"{i}\n" for i in range(1, 30001))


def test_cancelling_stops_the_command(tmp_path: Path) -> None:
    async def scenario() -> object:
        seen = asyncio.Event()
        task = asyncio.ensure_future(
            run_user_command(
                "echo go; sleep 30", str(tmp_path), on_chunk=lambda _t: seen.set(), kill_grace=0.2
            )
        )
        await asyncio.wait_for(seen.wait(), 10)
        task.cancel()
        return await task

    result = asyncio.run(scenario())
    assert result.cancelled and result.exit_code is None and result.output == "go\n"  # type: ignore[attr-defined]
