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
import math
import re
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from rich import box
from rich.console import Console
from rich.padding import Padding
from rich.panel import Panel
from rich.progress import (
    BarColumn,
    Progress,
    SpinnerColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table
from rich.text import Text

from torchlint.discovery import display_path
from torchlint.runtime.checks import CHECKS

OnEvent = Callable[[dict[str, Any]], None]

#: the loss chart: rows of characters, and the widest it gets (in characters)
CHART_ROWS = 8
CHART_MAX_WIDTH = 60
CHART_MIN_WIDTH = 16
#: the chart switches to a log scale when max/min of the (positive) losses exceeds this
LOG_SCALE_RANGE = 100.0
#: rows of the gradient table before "… N more"
MAX_PARAM_ROWS = 25
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

#: the gradient table's order: the worst status first
_STATUS_ORDER = {
    "nonfinite": 0,
    "none": 1,
    "not_in_optimizer": 2,
    "zero": 3,
    "frozen": 4,
    "not_scanned": 5,
    "ok": 6,
}
_STATUS_TEXT = {
    "nonfinite": ("non-finite", "red"),
    "none": ("no gradient", "red"),
    "not_in_optimizer": ("no optimizer", "red"),
    "zero": ("zero gradient", "yellow"),
    "frozen": ("frozen", "dim"),
    "not_scanned": ("its optimizer did not step", "dim"),
    "ok": ("ok", "green"),
}
_ROW_STYLES = {"nonfinite": "red", "none": "red", "not_in_optimizer": "red", "zero": "yellow"}

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


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def _num(value: object) -> float | None:
    """`value` as a finite float, else None (booleans are not numbers here)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def _count(value: object) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _fmt(value: object, spec: str = ".4g") -> str:
    number = _num(value)
    return "n/a" if number is None else format(number, spec)


def _curve(value: object) -> list[float | None]:
    return [_num(v) for v in _list(value)]


def _where(filename: object, line: object) -> str | None:
    """`file:line` with the file relative to the current directory when it lies below it."""
    name = _text(filename)
    if name is None:
        return None
    try:
        shown = display_path(name)
    except (OSError, ValueError):
        shown = name
    number = _count(line)
    return f"{shown}:{number}" if number is not None else shown


def _site(site: object) -> str | None:
    data = _dict(site)
    return _where(data.get("filename"), data.get("line"))


@dataclass(frozen=True)
class Glyphs:
    """Characters of the report: Unicode, or plain ASCII when the console cannot encode it."""

    unicode: bool

    @classmethod
    def for_console(cls, console: Console) -> Glyphs:
        return cls(console.encoding.lower().replace("_", "-").startswith("utf"))

    def pick(self, fancy: str, plain: str) -> str:
        return fancy if self.unicode else plain

    @property
    def ellipsis(self) -> str:
        return self.pick("…", "...")

    @property
    def bullet(self) -> str:
        return self.pick("•", "-")

    @property
    def arrow(self) -> str:
        return self.pick("→", "->")

    @property
    def gap(self) -> str:
        return self.pick("✕", "x")


# ----------------------------------------------------------------------------------------------
# the loss chart


#: braille dot bits by [dot row from the top][left or right column of the cell]
_BRAILLE_BITS = ((0x01, 0x08), (0x02, 0x10), (0x04, 0x20), (0x40, 0x80))


def use_log_scale(values: Iterable[float | None]) -> bool:
    """A log scale when every finite value is positive and they span more than
    `LOG_SCALE_RANGE` (max/min)."""
    finite = [v for v in values if v is not None and math.isfinite(v)]
    if not finite or min(finite) <= 0:
        return False
    return max(finite) / min(finite) > LOG_SCALE_RANGE


@dataclass(frozen=True)
class Chart:
    """A line chart of `values` (None: a gap) on a grid of `width` x `rows` character cells,
    each `sub_cols` x `sub_rows` dots (braille: 2 x 4; ASCII: 1 x 1)."""

    values: list[float | None]
    width: int
    rows: int = CHART_ROWS
    sub_cols: int = 2
    sub_rows: int = 4

    @property
    def log(self) -> bool:
        return use_log_scale(self.values)

    @property
    def columns(self) -> int:
        return self.width * self.sub_cols

    @property
    def levels(self) -> int:
        return self.rows * self.sub_rows

    def transformed(self) -> list[float | None]:
        if not self.log:
            return list(self.values)
        return [math.log10(v) if v is not None else None for v in self.values]

    def column_of(self, step: int) -> int:
        """The character column where `step` is drawn."""
        n = len(self.values)
        if n <= 1:
            return 0
        if n <= self.columns:
            sub = round(step * (self.columns - 1) / (n - 1))
        else:
            sub = step * self.columns // n
        return max(0, min(self.width - 1, sub // self.sub_cols))

    def spans(self) -> list[tuple[float, float] | None]:
        """Per dot column, the (low, high) of the transformed values drawn there (min/max of
        the steps it covers when the curve is longer than the chart, an interpolated point when
        shorter), or None for a gap."""
        values = self.transformed()
        n, count = len(values), self.columns
        if n == 0:
            return [None] * count
        if n <= count:
            return [_sample(values, x * (n - 1) / max(1, count - 1)) for x in range(count)]
        result: list[tuple[float, float] | None] = []
        for x in range(count):
            start = x * n // count
            bucket = [
                v for v in values[start : max(start + 1, (x + 1) * n // count)] if v is not None
            ]
            result.append((min(bucket), max(bucket)) if bucket else None)
        return result

    def grid(self) -> list[list[int]]:
        """Dot bits per cell, rows from the top; consecutive columns are joined vertically so
        a steep drop stays one line."""
        cells = [[0] * self.width for _ in range(self.rows)]
        values = [v for v in self.transformed() if v is not None]
        if not values:
            return cells
        low, high = min(values), max(values)
        previous: tuple[int, int] | None = None
        for x, span in enumerate(self.spans()):
            if span is None:
                previous = None
                continue
            bottom, top = self._level(span[0], low, high), self._level(span[1], low, high)
            drawn_bottom, drawn_top = bottom, top
            if previous is not None:
                drawn_bottom = min(drawn_bottom, previous[1] + 1)
                drawn_top = max(drawn_top, previous[0] - 1)
            for level in range(drawn_bottom, drawn_top + 1):
                self._set(cells, x, level)
            previous = (bottom, top)
        return cells

    def _level(self, value: float, low: float, high: float) -> int:
        if high <= low:
            return self.levels // 2
        return round((value - low) / (high - low) * (self.levels - 1))

    def _set(self, cells: list[list[int]], x: int, level: int) -> None:
        from_top = self.levels - 1 - level
        row, dot_row = divmod(from_top, self.sub_rows)
        col, dot_col = divmod(x, self.sub_cols)
        if self.sub_cols == 2 and self.sub_rows == 4:
            cells[row][col] |= _BRAILLE_BITS[dot_row][dot_col]
        else:
            cells[row][col] |= 1


def _sample(values: Sequence[float | None], t: float) -> tuple[float, float] | None:
    """The curve at fractional step `t`: interpolated between two finite neighbours, the
    nearest step's value next to a gap, None inside one."""
    nearest = values[min(len(values) - 1, round(t))]
    if nearest is None:
        return None
    low_index = min(len(values) - 1, math.floor(t))
    high_index = min(len(values) - 1, low_index + 1)
    a, b = values[low_index], values[high_index]
    if a is None or b is None:
        return (nearest, nearest)
    value = a + (b - a) * (t - low_index)
    return (value, value)


def loss_chart(
    curve: Sequence[float | None],
    glyphs: Glyphs,
    max_width: int = CHART_MAX_WIDTH,
    nan_step: int | None = None,
) -> list[Text]:
    """The lines of a chart of the loss per step: a header, `CHART_ROWS` rows of the curve with
    the max and min on the y axis, the x axis with step numbers, and a legend for gaps (steps
    whose loss was not finite)."""
    values = [_num(v) for v in curve]
    finite = [v for v in values if v is not None]
    if not finite:
        return [Text("no finite loss was recorded (every step's loss was NaN or infinite)")]
    top, bottom = max(finite), min(finite)
    labels = (_fmt(top), _fmt(bottom))
    label_width = max(len(label) for label in labels)
    width = max(CHART_MIN_WIDTH, min(max_width, CHART_MAX_WIDTH) - label_width - 2)
    dots = (2, 4) if glyphs.unicode else (1, 1)
    chart = Chart(values, width, sub_cols=dots[0], sub_rows=dots[1])
    gaps = [k for k, v in enumerate(values) if v is None]
    if nan_step is not None and 0 <= nan_step < len(values) and nan_step not in gaps:
        gaps.append(nan_step)
    lines = [_chart_header(chart, len(values))]
    lines += _chart_rows(chart, labels, label_width, glyphs, gaps)
    lines += _x_axis(chart, label_width, glyphs, len(values))
    if gaps:
        lines.append(_gap_legend(gaps, nan_step, glyphs, label_width))
    return lines


def _chart_header(chart: Chart, steps: int) -> Text:
    scale = "log scale" if chart.log else "linear scale"
    return Text(f"loss per step ({steps} steps, {scale})", style="bold")


def _chart_rows(
    chart: Chart, labels: tuple[str, str], label_width: int, glyphs: Glyphs, gaps: list[int]
) -> list[Text]:
    cells = chart.grid()
    markers = {chart.column_of(step) for step in gaps}
    lines: list[Text] = []
    for row, bits in enumerate(cells):
        label = labels[0] if row == 0 else labels[1] if row == chart.rows - 1 else ""
        axis = glyphs.pick("┤", "+") if label else glyphs.pick("│", "|")
        line = Text(f"{label:>{label_width}} {axis}", style="dim")
        for col, cell in enumerate(bits):
            if row == 0 and col in markers and not cell:
                line.append(glyphs.gap, style="bold red")
            elif cell and chart.sub_cols == 2:
                line.append(chr(0x2800 + cell), style="cyan")
            else:
                line.append("*" if cell else " ", style="cyan")
        lines.append(line)
    return lines


def _x_axis(chart: Chart, label_width: int, glyphs: Glyphs, steps: int) -> list[Text]:
    last = max(0, steps - 1)
    ticks: dict[int, str] = {0: "0"}
    if last > 0:
        ticks[chart.column_of(last)] = str(last)
        middle = last // 2
        if 0 < middle < last:
            ticks.setdefault(chart.column_of(middle), str(middle))
    tick, line = glyphs.pick("┬", "+"), glyphs.pick("─", "-")
    axis = "".join(tick if c in ticks else line for c in range(chart.width))
    row = [" "] * (chart.width + 8)
    for col, label in sorted(ticks.items()):
        if col == chart.column_of(last) and last > 0:
            start = col - len(label) + 1
        elif col == 0:
            start = 0
        else:
            start = col - len(label) // 2
        _place(row, max(0, start), label)
    indent = " " * (label_width + 1)
    corner = glyphs.pick("└", "+")
    return [
        Text(f"{indent}{corner}{axis}", style="dim"),
        Text(f"{indent} {''.join(row).rstrip()}", style="dim"),
    ]


def _place(row: list[str], start: int, label: str) -> None:
    """Write `label` into `row` at `start` when it overlaps no other label (one space apart)."""
    end = start + len(label)
    if end > len(row) or any(c != " " for c in row[max(0, start - 1) : end + 1]):
        return
    row[start:end] = list(label)


def _gap_legend(gaps: list[int], nan_step: int | None, glyphs: Glyphs, label_width: int) -> Text:
    indent = " " * (label_width + 2)
    if nan_step is not None:
        what = f"the loss became non-finite at step {nan_step}"
    else:
        shown = ", ".join(str(k) for k in gaps[:8]) + (glyphs.ellipsis if len(gaps) > 8 else "")
        what = f"non-finite loss at step(s) {shown}"
    return Text.assemble(indent, (glyphs.gap, "bold red"), f" {what}")


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


def _heading(console: Console, title: str) -> None:
    console.print()
    console.print(Text(title, style="bold underline"))


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


def _bullet(glyphs: Glyphs, body: Text) -> Table:
    """One bullet point; wrapped lines hang under the text, not under the bullet."""
    grid = Table.grid(padding=(0, 1))
    grid.add_column(no_wrap=True)
    grid.add_column()
    grid.add_row(Text(f" {glyphs.bullet}"), body)
    return grid


def _indented(renderable: Text | Table) -> Padding:
    return Padding(renderable, (0, 0, 0, 2), expand=False)


# overfit ---------------------------------------------------------------------------------------


def _render_overfit(
    payload: Mapping[str, Any], console: Console, glyphs: Glyphs, *, completed: bool
) -> None:
    curve = _curve(payload.get("loss_curve"))
    nan_step = _count(payload.get("nan_step"))
    _heading(console, "evidence" if completed else "before it stopped")
    if not curve:
        steps = _count(payload.get("steps_run")) or 0
        console.print(_indented(Text(f"no loss was recorded ({steps} steps ran)", style="dim")))
    else:
        room = max(CHART_MIN_WIDTH + 12, console.width - 4)
        for line in loss_chart(curve, glyphs, room, nan_step):
            console.print(_indented(line))
    console.print()
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold", no_wrap=True)
    table.add_column()
    for name, value in _overfit_numbers(payload, glyphs):
        table.add_row(Text(name), value)
    console.print(_indented(table))


def _overfit_numbers(payload: Mapping[str, Any], glyphs: Glyphs) -> list[tuple[str, Text]]:
    rows: list[tuple[str, Text]] = [("initial loss", _initial_loss(payload))]
    rows.append(("final loss", _final_loss(payload)))
    after = _num(payload.get("final_loss_after"))
    if after is not None:
        rows.append(("after the last step", Text(f"{after:.4g} (one more forward pass)")))
    nan_step = _count(payload.get("nan_step"))
    if nan_step is not None:
        rows.append(("non-finite", Text(f"the loss at step {nan_step}", style="bold red")))
    accuracy = _accuracy(payload, glyphs)
    if accuracy is not None:
        rows.append(("batch accuracy", accuracy))
    rows.append(("steps", _steps(payload)))
    backward = _backward(payload)
    if backward is not None:
        rows.append(("backward calls", backward))
    source = _text(payload.get("batch_source"))
    if source is not None:
        rows.append(("batch", Text(source)))
    if payload.get("loss_differentiable") is False:
        rows.append(("loss", Text("does not require grad: backward was skipped", style="red")))
    return rows


def _initial_loss(payload: Mapping[str, Any]) -> Text:
    text = Text(_fmt(payload.get("initial_loss")))
    expected = _num(payload.get("expected_initial_loss"))
    if expected is None:
        return text
    reason = _text(payload.get("expected_initial_loss_reason"))
    versus = _num(payload.get("initial_loss_vs_expected"))
    detail = f"expected {expected:.4g}" + (f": {reason}" if reason else "")
    text.append(f"  ({detail})", style="dim")
    if versus is not None:
        text.append(f"  {versus:.2f}x expected", style="yellow" if versus > 1.5 else "dim")
    return text


def _final_loss(payload: Mapping[str, Any]) -> Text:
    final = _num(payload.get("final_loss"))
    window = _count(payload.get("final_window"))
    text = Text(_fmt(final))
    if window is not None and final is not None:
        text.append(f"  (lowest of the last {window} steps)", style="dim")
    ratio = _num(payload.get("ratio"))
    target = _num(payload.get("target_ratio"))
    floor = _num(payload.get("absolute_floor"))
    if ratio is not None:
        passed = target is not None and ratio <= target
        passed = passed or (floor is not None and final is not None and final <= floor)
        text.append(f"  ratio {ratio:.4g}", style="green" if passed else "red")
    if target is not None:
        need = f"a pass needs ratio <= {target:g}"
        need += f" or a loss <= {floor:g}" if floor is not None else ""
        text.append(f" ({need})", style="dim")
    return text


def _accuracy(payload: Mapping[str, Any], glyphs: Glyphs) -> Text | None:
    before = _num(payload.get("initial_accuracy"))
    after = _num(payload.get("final_accuracy"))
    if before is None and after is None:
        return None
    text = Text(f"{_fmt(before, '.3f')} {glyphs.arrow} {_fmt(after, '.3f')}")
    classes = _count(payload.get("num_classes"))
    if classes is not None:
        text.append(f"  ({classes} classes)", style="dim")
    return text


def _steps(payload: Mapping[str, Any]) -> Text:
    run = _count(payload.get("steps_run"))
    requested = _count(payload.get("steps_requested"))
    text = f"{run if run is not None else 'n/a'}"
    if requested is not None and requested != run:
        text += f" of {requested} requested"
    return Text(text)


def _backward(payload: Mapping[str, Any]) -> Text | None:
    per_step = _num(payload.get("backward_per_step"))
    if per_step is None:
        return None
    text = Text(f"{per_step:.3g} per step")
    if per_step != 1:
        text.append(
            "  (gradient accumulation or a closure: the curve shows each step's first loss)",
            style="dim",
        )
    return text


# grads -----------------------------------------------------------------------------------------


def sort_params(params: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Worst first: by status (nonfinite, none, not_in_optimizer, zero, frozen, ok), then by how
    far the grad/weight ratio lies from the median ratio (in decades)."""
    rows = [p for p in params if isinstance(p, Mapping)]
    logs = sorted(math.log10(r) for p in rows if (r := _num(p.get("ratio"))) and r > 0)
    median = logs[len(logs) // 2] if logs else 0.0

    def key(row: Mapping[str, Any]) -> tuple[int, float]:
        ratio = _num(row.get("ratio"))
        extreme = abs(math.log10(ratio) - median) if ratio is not None and ratio > 0 else 0.0
        return (_STATUS_ORDER.get(str(row.get("status")), 6), -extreme)

    return sorted(rows, key=key)


def _render_grads(payload: Mapping[str, Any], console: Console, glyphs: Glyphs) -> None:
    params = sort_params(_list(payload.get("params")))
    _heading(console, "evidence")
    if params:
        console.print(_indented(_param_table(params[:MAX_PARAM_ROWS], glyphs)))
    else:
        console.print(Text("  no parameters were scanned", style="dim"))
    hidden = params[MAX_PARAM_ROWS:]
    if hidden:
        counts: dict[str, int] = {}
        for row in hidden:
            status = _STATUS_TEXT.get(str(row.get("status")), (str(row.get("status")), ""))[0]
            counts[status] = counts.get(status, 0) + 1
        detail = ", ".join(f"{n} {status}" for status, n in counts.items())
        console.print(Text(f"  {glyphs.ellipsis} {len(hidden)} more parameters ({detail})"))
    console.print()
    for line in _grads_summary(payload, glyphs):
        console.print(_indented(line))


def _param_table(params: Sequence[Mapping[str, Any]], glyphs: Glyphs) -> Table:
    table = Table(
        box=box.SIMPLE_HEAD,  # rich swaps in ASCII where the console cannot encode it
        pad_edge=False,
        show_edge=False,
        caption="L2 norms; grad: at the last step; grad/weight: mean over the steps",
        caption_justify="left",
        caption_style="dim",
    )
    longest = max((len(str(row.get("name", ""))) for row in params), default=10)
    table.add_column("parameter", overflow="fold", min_width=min(longest, 24))
    table.add_column("shape", overflow="fold")
    table.add_column("grad", justify="right")
    table.add_column("weight", justify="right")
    table.add_column("grad/weight", justify="right")
    labels = [
        _STATUS_TEXT.get(str(row.get("status")), (str(row.get("status")), ""))[0] for row in params
    ]
    table.add_column("status", no_wrap=True, min_width=max(map(len, labels), default=6))
    for row in params:
        status = str(row.get("status"))
        label, label_style = _STATUS_TEXT.get(status, (status, ""))
        shape = [s for s in _list(row.get("shape")) if _count(s) is not None]
        table.add_row(
            Text(str(row.get("name", "?"))),
            Text("(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"),
            Text(_last_grad(row)),
            Text(_fmt(row.get("weight_norm"), ".3g")),
            Text(_fmt(row.get("ratio"), ".3g")),
            Text(label, style=label_style),
            style=_ROW_STYLES.get(status, "dim" if status == "frozen" else ""),
        )
    return table


def _last_grad(row: Mapping[str, Any]) -> str:
    norms = _list(row.get("grad_norm"))
    last = _num(norms[-1]) if norms else None
    if last is not None:
        return f"{last:.3g}"
    status = row.get("status")
    if status == "nonfinite":
        return "nan/inf"
    return "n/a" if status in ("ok", "zero", "not_in_optimizer") else "-"


def _grads_summary(payload: Mapping[str, Any], glyphs: Glyphs) -> list[Text]:
    lines = [_depth_line(_dict(payload.get("depth")))]
    for key, what in (("largest", "largest gradients"), ("smallest", "smallest gradients")):
        names = [n for n in _list(payload.get(key)) if isinstance(n, str)]
        if names:
            lines.append(Text.assemble((f"{what}: ", "bold"), ", ".join(names)))
    losses = _curve(payload.get("losses"))
    norms = _curve(payload.get("global_grad_norm"))
    if losses:
        lines.append(Text.assemble(("loss per step: ", "bold"), _series(losses)))
    if norms:
        lines.append(Text.assemble(("global grad norm: ", "bold"), _series(norms)))
    return lines


def _series(values: Sequence[float | None], limit: int = 8) -> str:
    shown = [_fmt(v) if v is not None else "non-finite" for v in values[:limit]]
    return "  ".join(shown) + (f"  … ({len(values)} steps)" if len(values) > limit else "")


def _depth_line(depth: Mapping[str, Any]) -> Text:
    verdict = _text(depth.get("verdict")) or "n/a"
    style = {"ok": "green", "vanishing": "yellow", "exploding": "yellow"}.get(verdict, "dim")
    text = Text.assemble(("depth: ", "bold"), (verdict, style))
    first, last = _num(depth.get("first_third_ratio")), _num(depth.get("last_third_ratio"))
    if verdict == "insufficient":
        text.append(" (fewer than 3 parameters with a usable gradient)", style="dim")
    elif first is not None or last is not None:
        text.append(
            f" (mean grad/weight {_fmt(first, '.3g')} in the first third of the parameters, "
            f"{_fmt(last, '.3g')} in the last third)",
            style="dim",
        )
    return text


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
