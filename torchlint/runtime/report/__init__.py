"""The terminal face of `torchlint run`: a progress bar while the script runs, then the report.

The report reads the result envelope (see `torchlint/runtime/schema.json`) and prints, in order:
the verdict (one coloured headline with the summary), the evidence (the loss curve drawn in the
terminal and the key numbers for `overfit`; the table of parameters for `grads`; the error and
the script's last output when it could not finish), the diagnostics anchored at the user's
lines, what to do about them, and the environment the check ran in.

This module runs in the parent process, which may have no torch: it never imports it. Every
field is read defensively, so any envelope that validates against the schema renders.
"""

from __future__ import annotations

import importlib
import re
import threading
from collections.abc import Callable, Mapping
from types import TracebackType
from typing import Any

from rich.console import Console
from rich.panel import Panel
from rich.progress import (
    BarColumn,
    Progress,
    SpinnerColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.text import Text

from torchlint.runtime.checks import CHECKS
from torchlint.runtime.report.grads import _render_grads
from torchlint.runtime.report.overfit import _render_overfit
from torchlint.runtime.report.parts import (
    Glyphs,
    _bullet,
    _count,
    _dict,
    _heading,
    _list,
    _num,
    _site,
    _text,
    _where,
)

OnEvent = Callable[[dict[str, Any]], None]

#: lines of the script's output quoted for an error or a timeout
TAIL_LINES = 12

_VERDICTS: dict[str, tuple[str, str]] = {
    "pass": ("PASS", "bold reverse green"),
    "healthy": ("HEALTHY", "bold reverse green"),
    "fail": ("FAIL", "bold reverse red"),
    "nan": ("NaN", "bold reverse red"),
    "problems": ("PROBLEMS", "bold reverse red"),
    "ok": ("OK", "bold reverse green"),
    "hints": ("HINTS", "bold reverse yellow"),
    "overfitting": ("OVERFITTING", "bold reverse red"),
    "underfitting": ("UNDERFITTING", "bold reverse red"),
    "inconclusive": ("INCONCLUSIVE", "bold reverse yellow"),
    "suggested": ("SUGGESTED", "bold reverse green"),
    "no_suggestion": ("NO SUGGESTION", "bold reverse red"),
    "stopped": ("STOPPED", "bold reverse red"),
    "not_applicable": ("NOT APPLICABLE", "bold reverse blue"),
}
#: check -> module whose `render_evidence(payload, console, glyphs)` draws its evidence
_PLUGIN_REPORTS = {
    name: spec.report for name, spec in CHECKS.items() if name not in ("overfit", "grads")
}
#: the headline of an outcome that the verdict's own word does not say
_OUTCOMES: dict[str, tuple[str, str]] = {
    "fail": ("FAIL", "bold reverse red"),
    "inconclusive": ("INCONCLUSIVE", "bold reverse yellow"),
    "not_applicable": ("NOT APPLICABLE", "bold reverse blue"),
}
#: the outcome each verdict word means by itself
_VERDICT_OUTCOME = {
    verdict: outcome for spec in CHECKS.values() for verdict, outcome in spec.verdicts.items()
}
_STATUSES: dict[str, tuple[str, str]] = {
    "capture_failed": ("NOT CAPTURED", "bold reverse yellow"),
    "error": ("ERROR", "bold reverse red"),
    "timeout": ("TIMEOUT", "bold reverse yellow"),
}
_SEVERITY_STYLES = {"error": "bold red", "warning": "bold yellow", "info": "cyan"}


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`])")

_PASS_NOTE = (
    "Passing shows that the model, the loss, the optimizer and the loop can memorise one "
    "batch. That is necessary for training to work, not sufficient: it says nothing about "
    "generalisation, the rest of the data, or the learning-rate schedule."
)
_HEALTHY_NOTE = (
    "Every trainable parameter got a finite, non-zero gradient and is in an optimizer. That "
    "does not show that the learning rate or the loss are right: `torchlint run overfit` "
    "checks that the model can learn."
)
_FIT_HEALTHY_NOTE = (
    "Both losses fell over the epochs that ran. A few short epochs cannot show what happens "
    "later in training: watch the validation loss on the full run."
)
#: (check, verdict) -> what a good result means and does not
_NOTES = {
    ("overfit", "pass"): _PASS_NOTE,
    ("grads", "healthy"): _HEALTHY_NOTE,
    ("fit", "healthy"): _FIT_HEALTHY_NOTE,
}
_FAIL_ADVICE = (
    "Check that the loss is computed from the model's raw output, that the optimizer holds "
    "the model's parameters with a non-zero learning rate, and that gradients reach them "
    "(`torchlint run grads`)."
)
_CRASH_ADVICE = (
    "Make the script run on its own first (`python SCRIPT`): the output above shows where it "
    "stopped, and `--show-output` passes everything it prints through."
)
_OUR_FAULT_ADVICE = (
    "This is a fault of torchlint, not of the script: please report it with the output of "
    "`--output-format json`. `--isolation redirect` or `--isolation overlay` may avoid it."
)
_NAN_ADVICE = (
    "Check the learning rate, invalid values in the data (log of 0, division by 0), and "
    "exploding gradients (`torchlint run grads` finds the first non-finite one)."
)


# ----------------------------------------------------------------------------------------------
# console and progress


def make_console() -> Console:
    """A console on stdout: colour and the progress bar only on a terminal (rich honours
    `NO_COLOR`, `FORCE_COLOR` and `TERM=dumb`), text printed as given (no markup, emoji codes
    or highlighting), long lines wrapped at the terminal's width."""
    return Console(highlight=False, markup=False, emoji=False, soft_wrap=False)


class ProgressDisplay:
    """`with ProgressDisplay(console, "overfit", 200) as on_event:` shows a spinner until the
    child captures the training step, then a bar of the optimizer steps; `on_event` takes the
    child's events (on any thread, in any order: the bar never goes back). Prints nothing when
    the console is not a terminal; the bar is removed on exit, also when the block raises."""

    def __init__(self, console: Console, check: str, steps: int) -> None:
        self._console = console
        self._check = check
        self._steps = max(1, int(steps))
        self._lock = threading.Lock()
        self._progress: Progress | None = None
        self._task: TaskID | None = None
        self._step = 0
        self._ellipsis = "…"

    def __enter__(self) -> OnEvent:
        if self._console.is_terminal:
            self._ellipsis = Glyphs.for_console(self._console).ellipsis
            progress = Progress(
                SpinnerColumn(),
                TextColumn("{task.description}", markup=False),
                BarColumn(),
                TimeElapsedColumn(),
                console=self._console,
                transient=True,
            )
            with self._lock:
                self._task = progress.add_task(
                    f"{self._check}: starting the script{self._ellipsis}", total=None
                )
                self._progress = progress
            progress.start()
        return self.on_event

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        with self._lock:
            progress, self._progress = self._progress, None
        if progress is not None:
            progress.stop()

    def on_event(self, event: dict[str, Any]) -> None:
        """Update the bar from one event of the child; ignores what it does not understand,
        and everything once the display has stopped."""
        if not isinstance(event, dict):
            return
        with self._lock:
            progress, task = self._progress, self._task
            if progress is None or task is None:
                return
            update = self._update_for(event)
            if update:
                progress.update(task, **update)

    def _update_for(self, event: Mapping[str, Any]) -> dict[str, Any]:
        kind = event.get("event")
        if kind == "captured" and self._step == 0:
            summary = _text(event.get("summary")) or "captured the training step"
            return {"total": self._steps, "description": f"{self._check}: {summary[:60]}"}
        if kind == "step":
            self._steps = _count(event.get("of")) or self._steps
            self._step = max(self._step, min(_count(event.get("step")) or 0, self._steps))
            return {
                "total": self._steps,
                "completed": self._step,
                "description": f"{self._check}: step {self._step}/{self._steps}",
            }
        if kind == "result":
            return {"description": f"{self._check}: writing the report{self._ellipsis}"}
        return {}


# ----------------------------------------------------------------------------------------------
# reading the envelope defensively


# ----------------------------------------------------------------------------------------------
# the loss chart


# ----------------------------------------------------------------------------------------------
# the report


def render_report(result: Mapping[str, Any], console: Console) -> None:
    """Print the report of one runtime check: verdict, evidence, diagnostics, what to do, and
    where it ran."""
    envelope = dict(result) if isinstance(result, Mapping) else {}
    glyphs = Glyphs.for_console(console)
    sections: list[Callable[[Mapping[str, Any], Console, Glyphs], None]] = [
        _render_headline,
        _render_evidence,
        _render_diagnostics,
        _render_actions,
        _render_context,
    ]
    for section in sections:
        try:
            section(envelope, console, glyphs)
        except Exception as exc:  # a report must not lose the result it reports
            console.print(
                Text(f"(torchlint: could not render part of this report: {exc!r})", style="dim")
            )


def _render_headline(envelope: Mapping[str, Any], console: Console, glyphs: Glyphs) -> None:
    verdict = _text(envelope.get("verdict"))
    status = _text(envelope.get("status")) or "completed"
    label, style = _VERDICTS.get(verdict or "", _STATUSES.get(status, ("", "bold")))
    outcome = _text(envelope.get("outcome"))
    if outcome in _OUTCOMES and _VERDICT_OUTCOME.get(verdict or "") != outcome:
        # the four outcomes lead: a check with an error-level finding never reads as passed
        label, style = _OUTCOMES[outcome]
    if not label:
        label = (verdict or status).upper()
    summary = _text(envelope.get("summary")) or f"{envelope.get('check', 'check')}: {status}"
    console.print(Text.assemble((f" {label} ", style), " ", (summary, "bold")))
    reason = _text(envelope.get("reason"))
    if reason is not None and reason not in summary:
        why = {"fail": "cause", "inconclusive": "what would decide it"}.get(outcome or "", "why")
        console.print(Text.assemble((f"{why}: ", "bold"), reason))
    details = _run_details(envelope, glyphs)
    if details:
        console.print(Text(details, style="dim"))


def _run_details(envelope: Mapping[str, Any], glyphs: Glyphs) -> str:
    parts: list[str] = []
    script = _text(envelope.get("script"))
    if script is not None:
        argv = [a for a in _list(envelope.get("argv")) if isinstance(a, str)]
        parts.append(" ".join([_where(script, None) or script, *argv]))
    duration = _num(envelope.get("duration_s"))
    if duration is not None:
        parts.append(f"{duration:.1f} s")
    return glyphs.pick(" · ", "; ").join(parts)


def _render_evidence(envelope: Mapping[str, Any], console: Console, glyphs: Glyphs) -> None:
    status = envelope.get("status")
    payload = _dict(envelope.get("payload"))
    if status in ("error", "timeout"):
        _render_error(envelope, console, glyphs)
    elif status == "capture_failed":
        _render_capture_failed(payload, console, glyphs)
    if envelope.get("check") == "grads" and "params" in payload:
        _render_grads(payload, console, glyphs)
    elif envelope.get("check") == "overfit" and "loss_curve" in payload:
        _render_overfit(payload, console, glyphs, completed=status == "completed")
    elif _not_applicable(envelope):
        return  # the headline says why; a check that did not apply has no evidence to show
    elif status == "completed" and envelope.get("check") in _PLUGIN_REPORTS:
        module = importlib.import_module(_PLUGIN_REPORTS[str(envelope.get("check"))])
        module.render_evidence(payload, console, glyphs)


def _render_error(envelope: Mapping[str, Any], console: Console, glyphs: Glyphs) -> None:
    error = _dict(envelope.get("error"))
    _heading(console, "what happened")
    message = _text(error.get("message")) or _text(envelope.get("summary")) or "unknown error"
    console.print(Text(message, style="red"))
    site = _dict(error.get("site"))
    where = _site(site)
    if where is not None:
        function = _text(site.get("function"))
        console.print(Text(f"at {where}" + (f" in {function}" if function else ""), style="bold"))
    exit_code = _count(error.get("exit_code"))
    if exit_code is not None:
        console.print(Text(f"exit status {exit_code}", style="dim"))
    tail = [line for line in _list(error.get("output_tail")) if isinstance(line, str)]
    if tail:
        shown = tail[-TAIL_LINES:]
        title = "the script's last output"
        if len(tail) > len(shown):
            title = f"the last {len(shown)} lines of the script's output"
        body = Text("\n".join(shown), style="dim", no_wrap=True)
        body.overflow = "ellipsis" if glyphs.unicode else "crop"
        console.print(Panel(body, title=title, title_align="left", border_style="dim"))
    else:
        console.print(Text("(the script printed nothing)", style="dim"))


def _render_capture_failed(payload: Mapping[str, Any], console: Console, glyphs: Glyphs) -> None:
    missing = [m for m in _list(payload.get("missing")) if isinstance(m, str)]
    _heading(console, "what torchlint did not see")
    for item in missing or ["the training step (no details)"]:
        console.print(_bullet(glyphs, Text(item)))
    advice = _text(payload.get("advice"))
    if advice is not None:
        console.print()
        console.print(Text.assemble(("advice: ", "bold"), advice))


# overfit ---------------------------------------------------------------------------------------


# grads -----------------------------------------------------------------------------------------


# diagnostics and what to do --------------------------------------------------------------------


def _diagnostics(envelope: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [d for d in _list(envelope.get("diagnostics")) if isinstance(d, dict)]


def _render_diagnostics(envelope: Mapping[str, Any], console: Console, glyphs: Glyphs) -> None:
    error = _dict(envelope.get("error"))
    shown_error = (_text(error.get("message")), _site(error.get("site")))
    # a check that does not apply says why in its headline, and its finding says it again
    summary = (_text(envelope.get("summary")) or "") if _not_applicable(envelope) else ""
    items = [
        d
        for d in _diagnostics(envelope)
        if (_text(d.get("message")), _where(d.get("filename"), d.get("line"))) != shown_error
        and not _said_in_headline(_text(d.get("message")) or "", summary)
    ]
    if not items:
        return
    _heading(console, "diagnostics")
    for item in items:
        severity = str(item.get("severity", "error"))
        where = _where(item.get("filename"), item.get("line")) or "(no location)"
        console.print(
            Text.assemble(
                (where, "bold"),
                "  ",
                (str(item.get("code", "")), "bold"),
                " ",
                (severity, _SEVERITY_STYLES.get(severity, "")),
                "  ",
                str(item.get("message", "")),
            )
        )


def _not_applicable(envelope: Mapping[str, Any]) -> bool:
    return envelope.get("verdict") == "not_applicable"


def _said_in_headline(message: str, summary: str) -> bool:
    """A finding that only repeats the headline's reason (fit's "does not apply: ...")."""
    reason = message.split(": ", 1)[-1].strip()
    return bool(summary) and len(reason) >= 20 and reason in summary


def _sentences(message: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(message.strip()) if s.strip()]


def _first_sentence(message: str) -> str:
    first = next(iter(_sentences(message)), "")
    return first[:1].upper() + first[1:]


def actions(envelope: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(advice, where it comes from) for each error and warning, first occurrence only: each
    finding's `advice` field (the explicit API's: its grads findings' `advice`)."""
    found: list[tuple[str, str]] = []
    seen: set[str] = set()
    diagnostics = _diagnostics(envelope)
    if diagnostics:
        for d in diagnostics:
            advice = _text(d.get("advice"))
            if advice is None or str(d.get("severity")) not in ("error", "warning"):
                continue
            if advice not in seen:
                seen.add(advice)
                found.append((advice, _diagnostic_ref(d)))
        return found
    for f in _list(_dict(envelope.get("payload")).get("findings")):  # the explicit API's scan
        advice = _text(f.get("advice")) if isinstance(f, dict) else None
        serious = isinstance(f, dict) and str(f.get("severity")) in ("error", "warning")
        if advice is not None and serious and advice not in seen:
            seen.add(advice)
            found.append((advice, ""))
    return found


def _diagnostic_ref(item: Mapping[str, Any]) -> str:
    where = _where(item.get("filename"), item.get("line"))
    code = " ".join(str(item.get(key, "")) for key in ("code", "name")).strip()
    return f"{code}, {where}" if where else code


def _render_actions(envelope: Mapping[str, Any], console: Console, glyphs: Glyphs) -> None:
    # not what is printed above already: the capture's advice, the error's message restated
    advice = (_text(_dict(envelope.get("payload")).get("advice")) or "").lower()
    error = _first_sentence(_text(_dict(envelope.get("error")).get("message")) or "")
    items = [
        (a, ref)
        for a, ref in actions(envelope)
        if a.rstrip(".").lower() not in advice and a != error
    ]
    verdict = envelope.get("verdict")
    if not items:
        items = _fallback_actions(envelope)
    note = _NOTES.get((str(envelope.get("check")), str(verdict)))
    if not items and note is None:
        return
    _heading(console, "what to do" if items else "what this means")
    for action, ref in items:
        body = Text(action)
        if ref:
            body.append(f"  ({ref})", style="dim")
        console.print(_bullet(glyphs, body))
    if note is not None:
        if items:
            console.print()
        console.print(Text(note, style="green"))


def _fallback_actions(envelope: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Advice when no diagnostic gives any (the explicit API, a crash)."""
    verdict = envelope.get("verdict")
    if verdict == "fail":
        return [(_FAIL_ADVICE, "")]
    if verdict == "nan":
        return [(_NAN_ADVICE, "")]
    kind = _dict(envelope.get("error")).get("kind")
    if kind == "torchlint":
        return [(_OUR_FAULT_ADVICE, "")]
    if kind in ("crash", "exit", "exception"):
        return [(_CRASH_ADVICE, "")]
    return []


# where it ran ----------------------------------------------------------------------------------


def _render_context(envelope: Mapping[str, Any], console: Console, glyphs: Glyphs) -> None:
    frameworks = [
        f"framework: {_text(_dict(f).get('note'))}"
        for f in _list(envelope.get("frameworks"))
        if _text(_dict(f).get("note"))
    ]
    lines = [
        line
        for line in (
            environment_line(_dict(envelope.get("environment"))),
            isolation_line(_dict(envelope.get("isolation")), glyphs),
            *frameworks,
        )
        if line
    ]
    if lines:
        console.print()
    for line in lines:
        console.print(Text(line, style="dim"))


def environment_line(environment: Mapping[str, Any]) -> str:
    if not environment:
        return ""
    parts = [
        f"torch {environment.get('torch', '?')}",
        str(environment.get("device", "?")),
        str(environment.get("dtype", "?")),
    ]
    batch = _count(environment.get("batch_size"))
    if batch is not None:
        parts.append(f"batch {batch}")
    if environment.get("model_mode") == "eval":
        parts.append("model in eval mode")
    autocast = _text(environment.get("autocast"))
    scaler = environment.get("grad_scaler")
    if autocast is not None:
        parts.append(f"autocast {autocast}")
    elif scaler is not None:
        parts.append("no autocast")
    if scaler is not None:
        parts.append("GradScaler" if scaler else "no GradScaler")
    loader = _loader_text(_dict(environment.get("loader")))
    if loader:
        parts.append(loader)
    return "environment: " + ", ".join(parts)


def _loader_text(loader: Mapping[str, Any]) -> str:
    if not loader:
        return ""
    settings = [
        f"num_workers={loader.get('num_workers')}",
        f"pin_memory={loader.get('pin_memory')}",
    ]
    if loader.get("persistent_workers"):
        settings.append("persistent_workers=True")
    if _count(loader.get("prefetch_factor")) is not None:
        settings.append(f"prefetch_factor={loader.get('prefetch_factor')}")
    if loader.get("drop_last"):
        settings.append("drop_last=True")
    return "loader " + " ".join(settings)


def isolation_line(isolation: Mapping[str, Any], glyphs: Glyphs) -> str:
    if not isolation:
        return ""
    text = "ran in a child process"
    limit = _num(isolation.get("timeout_s"))
    if limit is not None:
        text += f", limit {limit:g} s"
    env = _dict(isolation.get("environment"))
    if env:
        text += " with " + " ".join(f"{k}={v}" for k, v in env.items())
    files = _dict(isolation.get("files"))
    if files:
        text += "; " + files_line(files, glyphs)
    return text


def files_line(files: Mapping[str, Any], glyphs: Glyphs) -> str:
    """What the run wrote and where it went: no file the user had was changed."""
    how = (
        "overlay mounts"
        if files.get("mechanism") == "overlay"
        else "redirection in the script's Python processes"
    )
    written = [_text(_dict(w).get("path")) or "?" for w in _list(files.get("written"))]
    count = _count(files.get("written_count")) or len(written)
    kept = _text(files.get("kept_in"))
    if count:
        names = ", ".join(written[:3]) + (f", {glyphs.ellipsis}" if count > 3 else "")
        text = f"{count} file{'s' if count != 1 else ''} written ({names}) went to a scratch "
        text += f"folder ({how}), " + (f"kept in {kept}" if kept else "removed at the end")
    else:
        text = f"no file written (writes isolated by {how})"
    deleted = _count(files.get("deleted_count")) or 0
    if deleted:
        text += f"; {deleted} deletion{'s' if deleted != 1 else ''} of your files not applied"
    return text
