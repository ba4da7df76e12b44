"""What an inbox item says, from the engine's own request and error texts (no Qt)."""

from __future__ import annotations

from pathlib import Path

from piwork.core.approvals import ApprovalRequest
from piwork.core.tools import preview_change
from piwork.gui.inbox.items import age_text, approval_line, failure_line


def test_a_command_is_one_line_and_a_change_names_its_file(tmp_path: Path) -> None:
    command = ApprovalRequest("c1", "bash", "command", "/p", command="pytest -q \\\n  tests/api\n")
    assert approval_line(command) == "$ pytest -q \\ tests/api"
    change = preview_change("write", {"path": "src/app.py", "content": "x\n"}, str(tmp_path))
    write = ApprovalRequest("c2", "write", "change", str(tmp_path), change=change, suggestion="src/app.py")
    assert approval_line(write) == "write src/app.py"


def test_a_failure_says_its_kind_and_status_never_the_providers_text() -> None:
    secret = "sk-ant-api03-abcdef"
    body = (
        '{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key '
        + secret
        + '"}}'
    )
    assert failure_line(f"401 {body}") == "The provider refused the API key (401)"
    assert failure_line("429 {}") == "The provider is limiting how often it can be asked (429)"
    assert failure_line(f"Connection reset by peer while talking to https://u:{secret}@host") == (
        "The connection to the provider failed"
    )
    assert failure_line("something odd") == "The reply failed"


def test_ages_are_short() -> None:
    assert [age_text(s) for s in (0, 59, 60, 3599, 3600, 86399, 86400 * 3)] == [
        "now",
        "now",
        "1 min",
        "59 min",
        "1 h",
        "23 h",
        "3 d",
    ]
