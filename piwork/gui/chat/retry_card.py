"""One card per failed prompt: the first failure, each retry as it happens (attempt n of m, the wait counting
down, the reason in words, the provider's message made readable) and the outcome, all in the same row.

Pure state over a ``ChatRow`` (no Qt): the presenter feeds it the engine's events and a clock.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from piwork.gui.chat.rows import ChatRow, RowKind, error_hint

REASONS = {  # by the engine's kind of error (``ErrorKind``'s values)
    "rate_limit": "The provider is limiting how often it can be asked",
    "overloaded": "The provider is overloaded",
    "server": "The provider had a server error",
    "network": "The connection to the provider failed",
    "timeout": "The provider stopped answering",
    "malformed_stream": "The reply broke off in the middle",
    "auth": "The provider refused the API key",
    "quota": "The provider account is out of credit or quota",
    "invalid_request": "The provider refused the request",
    "context_overflow": "The conversation no longer fits the model",
}


def reason_in_words(error_text: str) -> str:
    from piwork.core.llm import classify

    return REASONS.get(classify(error_text).kind.value, "The reply failed")


def describe_failure(error_text: str) -> str:
    """ "<reason in words>: <readable provider message>"."""
    from piwork.core.llm import readable_error

    return f"{reason_in_words(error_text)}: {readable_error(error_text)}"


@dataclass
class RetryCard:
    row: ChatRow
    max_attempts: int = 0  # total attempts (first try + retries)
    history: list[str] = field(default_factory=list)  # one line per failed attempt
    next_attempt: int = 0
    deadline: float | None = None  # monotonic time the next attempt starts

    @classmethod
    def from_failure_row(cls, row: ChatRow) -> RetryCard:
        """Take over the error row of the first failure (no second card)."""
        return cls(row)

    def waiting(self, retry: int, max_retries: int, delay_ms: int, error_text: str, now: float) -> None:
        """Retry number ``retry`` of ``max_retries`` starts after ``delay_ms``."""
        self.max_attempts = max_retries + 1
        failed = retry  # attempts that failed so far
        self._record_failure(failed, error_text)
        self.next_attempt = retry + 1
        self.deadline = now + delay_ms / 1000
        self.row.kind = RowKind.ERROR
        self.row.hint = "Press Stop (Esc) to cancel the retry."
        self.tick(now)

    def failed_again(self, attempt: int, error_text: str) -> None:
        """An attempt made during the sequence failed (the next ``waiting`` or the outcome follows)."""
        self._record_failure(attempt, error_text)
        self._render_text()

    def _record_failure(self, attempt: int, error_text: str) -> None:
        line = f"Attempt {attempt} of {self.max_attempts or '?'} failed — {describe_failure(error_text)}"
        if len(self.history) < attempt:
            self.history.append(line)
        else:
            self.history[attempt - 1] = line
        self._render_text()

    def tick(self, now: float) -> None:
        if self.deadline is None:
            return
        left = self.deadline - now
        of = f"attempt {self.next_attempt} of {self.max_attempts}"
        if left > 0:
            self.row.title = f"Retrying — {of} in {math.ceil(left)} s"
        else:
            self.row.title = f"Retrying — {of}: waiting for the model…"

    def sending(self) -> None:
        self.deadline = None
        self.row.title = (
            f"Retrying — attempt {self.next_attempt} of {self.max_attempts}: the model is answering…"
        )

    def finished(self, success: bool, attempt: int, final_error: str | None) -> None:
        self.deadline = None
        if success:
            self.row.kind = RowKind.NOTICE
            self.row.title = f"Recovered: attempt {attempt + 1} of {self.max_attempts} succeeded"
            self.row.hint = ""
        elif final_error == "Retry cancelled":
            self.row.title = f"Retry cancelled after {attempt} failed attempt{'s' if attempt != 1 else ''}"
            self.row.hint = "Send the message again when you are ready."
        else:
            total = len(self.history) or attempt + 1
            if final_error:
                self._record_failure(total, final_error)
            self.row.title = f"The reply failed after {total} attempt{'s' if total != 1 else ''}"
            self.row.hint = error_hint(final_error or "")
        self.row.kind = RowKind.NOTICE if success else RowKind.ERROR
        self._render_text()

    def _render_text(self) -> None:
        self.row.text = "\n\n".join(self.history)
