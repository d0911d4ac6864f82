"""A runtime run's progress (`$/progress`): begun by `RuntimeRuns`, moved by the launcher's
events (what was captured, the steps), ended with the run's summary."""

from __future__ import annotations

from typing import Any

from lsprotocol import types

from torchlint.lsp.runtime_host import RuntimeHost
from torchlint.lsp.runtime_requests import SUMMARY_CHARACTERS, one_line


class RunProgress:
    """The run's `$/progress`, driven on the event loop (None token: the client shows none)."""

    def __init__(self, server: RuntimeHost, token: str | None) -> None:
        self.server = server
        self.token = token
        self.done = False
        self._percentage = -1

    def report(self, message: str, percentage: int | None = None) -> None:
        if self.token is None or self.done:
            return
        self.server.work_done_progress.report(
            self.token, types.WorkDoneProgressReport(message=message, percentage=percentage)
        )

    def event(self, event: dict[str, Any]) -> None:
        """An event of the launcher (`captured`, `step`, `result`), on the event loop."""
        if self.token is None or self.done:
            return
        kind = event.get("event")
        if kind == "captured":
            summary = one_line(event.get("summary") or "", SUMMARY_CHARACTERS)
            self.report(f"captured {summary}".strip(), max(self._percentage, 0))
        elif kind == "step":
            step, total = event.get("step"), event.get("of")
            if not isinstance(step, int) or not isinstance(total, int) or total <= 0:
                return
            # A report when the percentage moves (at most about a hundred per run), and for the
            # first steps and the last, whatever the step count.
            percentage = max(0, min(100, (100 * step) // total))
            if percentage <= self._percentage and step > 2 and step < total:
                return
            self._percentage = max(percentage, self._percentage)
            self.report(f"step {step}/{total}", self._percentage)

    def end(self, message: str) -> None:
        if self.token is None or self.done:
            return
        self.done = True
        progress = self.server.work_done_progress
        try:
            progress.end(self.token, types.WorkDoneProgressEnd(message=message))
        except Exception:  # the connection is going away: nobody is left to tell
            pass
        finally:
            progress.tokens.pop(self.token, None)  # pygls keeps every token otherwise
