"""The evidence section of a `torchlint run fit` report: the diagnosis and its reason, the metric,
the train and validation curves per epoch drawn in the terminal, the per-epoch table, the data
checks (train/validation overlap, labels) and where the plot was written.

Runs in the parent process, which may have no torch: it never imports it. Every field is read
defensively, so any payload that validates against the schema renders.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from torchlint.runtime.report.chart import _BRAILLE_BITS, _sample, use_log_scale
from torchlint.runtime.report.parts import (
    CHART_MAX_WIDTH,
    CHART_MIN_WIDTH,
    CHART_ROWS,
    Glyphs,
    _bullet,
    _count,
    _curve,
    _dict,
    _fmt,
    _heading,
    _indented,
    _list,
    _num,
    _site,
    _text,
)

_DIAGNOSES = {
    "healthy": ("healthy", "bold green"),
    "overfitting": ("overfitting", "bold red"),
    "underfitting": ("underfitting", "bold red"),
    "nan": ("NaN", "bold red"),
    "inconclusive": ("inconclusive", "bold yellow"),
}
_ENDED = {
    "epochs_done": "stopped after the last epoch and its validation",
    "nan": "stopped after the epoch whose loss became non-finite",
    "steps_done": "stopped by the step bound (the loop did not start new passes over its loader)",
    "script_finished": "the script ended on its own",
    "script_exited": "the script called sys.exit",
    "script_crashed": "the script crashed",
}
_TRAIN_STYLE, _VAL_STYLE, _BOTH_STYLE = "cyan", "magenta", "bold yellow"


def render_evidence(payload: Mapping[str, Any], console: Console, glyphs: Glyphs) -> None:
    """Print the fit evidence of a completed run."""
    payload = payload if isinstance(payload, Mapping) else {}
    _heading(console, "evidence")
    for line in _diagnosis_lines(payload):
        console.print(_indented(line))
    train = _curve(payload.get("train_loss"))
    val = _curve(payload.get("val_loss"))
    console.print()
    if any(v is not None for v in train + val):
        room = max(CHART_MIN_WIDTH + 12, console.width - 4)
        nan_epoch = _count(_dict(payload.get("nan")).get("epoch"))
        marked = [nan_epoch - 1] if nan_epoch is not None and nan_epoch >= 1 else []
        for line in epoch_chart(train, val, glyphs, room, marked):
            console.print(_indented(line))
        console.print()
    if train or val:
        console.print(_indented(epoch_table(payload)))
    for line in _run_lines(payload):
        console.print(_indented(line))
    _heading(console, "data checks")
    for line in data_check_lines(payload, glyphs):
        console.print(_bullet(glyphs, line))
    plot = _text(payload.get("plot"))
    note = _text(payload.get("plot_note"))
    if plot is not None or note is not None:
        console.print()
    if plot is not None:
        console.print(Text.assemble(("plot: ", "bold"), plot))
    if note is not None:
        console.print(Text(note, style="dim"))


# the diagnosis ---------------------------------------------------------------------------------


def _diagnosis_lines(payload: Mapping[str, Any]) -> list[Text]:
    diagnosis = _text(payload.get("diagnosis")) or "inconclusive"
    label, style = _DIAGNOSES.get(diagnosis, (diagnosis, "bold"))
    lines = [Text.assemble(("diagnosis: ", "bold"), (label, style))]
    reason = _text(payload.get("reason"))
    if reason is not None:
        lines.append(Text(reason))
    metric = _dict(payload.get("metric"))
    description = _text(metric.get("description"))
    if description is not None:
        lines.append(Text.assemble(("metric: ", "bold"), (description, "dim")))
    return lines


# the chart -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Grid:
    width: int
    rows: int
    sub_cols: int
    sub_rows: int

    @property
    def columns(self) -> int:
        return self.width * self.sub_cols

    @property
    def levels(self) -> int:
        return self.rows * self.sub_rows

    def column_of(self, index: int, count: int) -> int:
        """The character column of point `index` of `count`."""
        if count <= 1:
            return 0
        sub = round(index * (self.columns - 1) / (count - 1))
        return max(0, min(self.width - 1, sub // self.sub_cols))

    def draw(
        self, values: Sequence[float | None], count: int, level: Callable[[float], int]
    ) -> list[list[int]]:
        """Dot bits per cell (rows from the top) of one series of `count` points, joined
        vertically between neighbouring dot columns; None is a gap."""
        cells = [[0] * self.width for _ in range(self.rows)]
        padded = list(values) + [None] * (count - len(values))
        if not padded:
            return cells
        previous: int | None = None
        xs = range(self.columns) if count > 1 else range(1)
        for x in xs:
            t = x * (count - 1) / max(1, self.columns - 1) if count > 1 else 0.0
            span = _sample(padded, t)
            if span is None:
                previous = None
                continue
            here = level(span[0])
            bottom, top = here, here
            if previous is not None:
                bottom, top = min(bottom, previous + 1), max(top, previous - 1)
            for value in range(bottom, top + 1):
                self._set(cells, x, value)
            previous = here
        return cells

    def _set(self, cells: list[list[int]], x: int, level: int) -> None:
        from_top = self.levels - 1 - max(0, min(self.levels - 1, level))
        row, dot_row = divmod(from_top, self.sub_rows)
        col, dot_col = divmod(x, self.sub_cols)
        if col >= self.width:
            return
        if self.sub_cols == 2 and self.sub_rows == 4:
            cells[row][col] |= _BRAILLE_BITS[dot_row][dot_col]
        else:
            cells[row][col] |= 1


def epoch_chart(
    train: Sequence[float | None],
    val: Sequence[float | None],
    glyphs: Glyphs,
    max_width: int = CHART_MAX_WIDTH,
    marked: Sequence[int] = (),
) -> list[Text]:
    """The lines of a chart of the training and validation loss per epoch on one y axis: a
    header with the legend, `CHART_ROWS` rows, and the x axis with epoch numbers (from 1).
    `marked`: epochs (from 0) drawn as a gap mark in the top row (a non-finite loss)."""
    train_values = [_num(v) for v in train]
    val_values = [_num(v) for v in val]
    finite = [v for v in train_values + val_values if v is not None]
    count = max(len(train_values), len(val_values))
    if not finite or count == 0:
        return [Text("no finite loss was recorded", style="dim")]
    log = use_log_scale(finite)

    def transform(value: float) -> float:
        return math.log10(value) if log else value

    low, high = transform(min(finite)), transform(max(finite))
    labels = (_fmt(max(finite)), _fmt(min(finite)))
    label_width = max(len(label) for label in labels)
    width = max(CHART_MIN_WIDTH, min(max_width, CHART_MAX_WIDTH) - label_width - 2)
    dots = (2, 4) if glyphs.unicode else (1, 1)
    grid = _Grid(width, CHART_ROWS, dots[0], dots[1])

    def level(value: float) -> int:
        if high <= low:
            return grid.levels // 2
        return round((value - low) / (high - low) * (grid.levels - 1))

    def transformed(values: list[float | None]) -> list[float | None]:
        return [transform(v) if v is not None else None for v in values]

    train_cells = grid.draw(transformed(train_values), count, level)
    val_cells = grid.draw(transformed(val_values), count, level)
    scale = "log scale" if log else "linear scale"
    train_mark, val_mark = glyphs.pick("━━", "o"), glyphs.pick("━━", "x")
    lines = [
        Text.assemble(
            (f"loss per epoch ({count} epoch{'s' if count != 1 else ''}, {scale})", "bold"),
            "   ",
            (train_mark, _TRAIN_STYLE),
            " train  ",
            (val_mark, _VAL_STYLE),
            " validation",
        )
    ]
    marks = {grid.column_of(e, count) for e in marked if 0 <= e < count}
    for row in range(grid.rows):
        label = labels[0] if row == 0 else labels[1] if row == grid.rows - 1 else ""
        axis = glyphs.pick("┤", "+") if label else glyphs.pick("│", "|")
        line = Text(f"{label:>{label_width}} {axis}", style="dim")
        for col in range(grid.width):
            a, b = train_cells[row][col], val_cells[row][col]
            if not a and not b:
                gap = row == 0 and col in marks
                line.append(glyphs.gap if gap else " ", style="bold red" if gap else "")
                continue
            style = _BOTH_STYLE if a and b else _TRAIN_STYLE if a else _VAL_STYLE
            if grid.sub_cols == 2:
                line.append(chr(0x2800 + (a | b)), style=style)
            else:
                line.append("#" if a and b else "o" if a else "x", style=style)
        lines.append(line)
    lines += _epoch_axis(grid, count, label_width, glyphs)
    if marks:
        shown = ", ".join(str(e + 1) for e in marked)
        lines.append(
            Text.assemble(
                " " * (label_width + 2), (glyphs.gap, "bold red"), f" non-finite at epoch {shown}"
            )
        )
    return lines


def _epoch_axis(grid: _Grid, count: int, label_width: int, glyphs: Glyphs) -> list[Text]:
    columns = {grid.column_of(i, count): str(i + 1) for i in range(count)}
    tick, rule = glyphs.pick("┬", "+"), glyphs.pick("─", "-")
    axis = "".join(tick if c in columns else rule for c in range(grid.width))
    row = [" "] * (grid.width + 8)
    wanted = sorted(columns.items())
    # the first and the last epoch always, the others where they fit
    order = wanted[:1] + wanted[-1:] + wanted[1:-1] if len(wanted) > 1 else wanted
    for col, label in order:
        start = max(0, col - len(label) + 1) if col == grid.column_of(count - 1, count) else col
        end = start + len(label)
        if end <= len(row) and all(c == " " for c in row[max(0, start - 1) : end + 1]):
            row[start:end] = list(label)
    indent = " " * (label_width + 1)
    corner = glyphs.pick("└", "+")
    return [
        Text(f"{indent}{corner}{axis}", style="dim"),
        Text(f"{indent} {''.join(row).rstrip()}  epoch", style="dim"),
    ]


# the table -------------------------------------------------------------------------------------


def epoch_table(payload: Mapping[str, Any]) -> Table:
    train = _curve(payload.get("train_loss"))
    val = _curve(payload.get("val_loss"))
    train_batches = [_count(n) for n in _list(payload.get("train_batches"))]
    val_batches = [_count(n) for n in _list(payload.get("val_batches"))]
    best = _count(payload.get("best_epoch"))
    nan = _dict(payload.get("nan"))
    nan_epoch = _count(nan.get("epoch"))
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
    table.add_column("epoch", justify="right")
    table.add_column("train", justify="right")
    table.add_column("validation", justify="right")
    table.add_column("values", justify="right")
    table.add_column("")
    for index in range(max(len(train), len(val))):
        epoch = index + 1
        t = train[index] if index < len(train) else None
        v = val[index] if index < len(val) else None
        tb = train_batches[index] if index < len(train_batches) else None
        vb = val_batches[index] if index < len(val_batches) else None
        notes: list[tuple[str, str]] = []
        if epoch == best:
            notes.append(("lowest validation", "green"))
        if epoch == nan_epoch:
            notes.append(("non-finite", "bold red"))
        table.add_row(
            Text(str(epoch)),
            _cell(t, tb),
            _cell(v, vb),
            Text(f"{_or_dash(tb)} / {_or_dash(vb)}", style="dim"),
            Text.assemble(*((text + "  ", style) for text, style in notes)),
        )
    return table


def _cell(value: float | None, batches: int | None) -> Text:
    if value is not None:
        return Text(f"{value:.4g}")
    if batches:
        return Text("non-finite", style="red")
    return Text("-", style="dim")


def _or_dash(value: int | None) -> str:
    return "-" if value is None else str(value)


def _run_lines(payload: Mapping[str, Any]) -> list[Text]:
    lines: list[Text] = []
    before = _num(payload.get("val_loss_before_training"))
    if before is not None:
        lines.append(Text(f"validation before training: {before:.4g}", style="dim"))
    nan = _dict(payload.get("nan"))
    epoch = _count(nan.get("epoch"))
    if epoch is not None:
        split = "validation" if nan.get("split") == "validation" else "training"
        step = _count(nan.get("step"))
        where = f"epoch {epoch}" + (f", training step {step}" if step is not None else "")
        lines.append(Text(f"the {split} loss became non-finite at {where}", style="bold red"))
    run = _count(payload.get("epochs_run"))
    requested = _count(payload.get("epochs_requested"))
    limit = _count(payload.get("limit_batches"))
    text = f"{_or_dash(run)} of {_or_dash(requested)} epochs"
    if limit is not None:
        text += f", at most {limit} batches per pass over each loader"
    ended = _text(payload.get("ended"))
    if ended is not None:
        text += f"; {_ENDED.get(ended, ended.replace('_', ' '))}"
    lines.append(Text(text, style="dim"))
    anomaly = _dict(payload.get("anomaly"))
    if anomaly.get("enabled"):
        operation = _text(anomaly.get("operation"))
        forward = _site(anomaly.get("site"))
        if operation is None:
            lines.append(Text("anomaly detection was on: no operation returned NaN", style="dim"))
        else:
            at = f" (forward at {forward})" if forward else " (its forward line is not known)"
            lines.append(Text(f"anomaly detection: {operation} returned NaN{at}", style="red"))
    return lines


# data checks -----------------------------------------------------------------------------------


def data_check_lines(payload: Mapping[str, Any], glyphs: Glyphs) -> list[Text]:
    checks = _dict(payload.get("data_checks"))
    good, bad = glyphs.pick("✓", "ok"), glyphs.pick("✗", "!!")
    lines: list[Text] = []
    leakage = [item for item in _list(checks.get("leakage")) if isinstance(item, dict)]
    if not leakage:
        lines.append(Text("train/validation overlap: not checked (no other loader)", style="dim"))
    for item in leakage:
        lines.append(_leakage_line(item, good, bad))
    lines.append(_labels_line(_dict(checks.get("labels")), good, bad))
    return lines


def _leakage_line(item: Mapping[str, Any], good: str, bad: str) -> Text:
    method = _text(item.get("method")) or "none"
    overlap = _count(item.get("overlap")) or 0
    train_checked = _count(item.get("train_checked")) or 0
    val_checked = _count(item.get("val_checked")) or 0
    where = _site(item.get("site"))
    name = "train/validation overlap" if item.get("validation") else "train/other-loader overlap"
    if where:
        name += f" ({where})"
    how = {
        "indices": "exact, from the Subset/sampler indices of both loaders",
        "hashes": f"byte hashes of {val_checked} samples against {train_checked} training ones",
    }.get(method)
    if how is None:
        return Text(f"{name}: not checked (no hashable tensors in the batches)", style="dim")
    if not overlap:
        return Text.assemble((f"{good} ", "green"), f"{name}: none ", (f"({how})", "dim"))
    examples = [e for e in _list(item.get("examples")) if isinstance(e, dict)]
    if method == "indices":
        shown = ", ".join(str(e.get("index")) for e in examples)
        detail = f"{overlap} of {val_checked} samples are training samples (indices {shown})"
    else:
        shown = ", ".join(f"#{e.get('val_sample')}={e.get('train_sample')}" for e in examples)
        detail = f"{overlap} of {val_checked} samples copy training samples ({shown})"
    return Text.assemble((f"{bad} ", "bold red"), f"{name}: {detail} ", (f"({how})", "dim"))


def _labels_line(labels: Mapping[str, Any], good: str, bad: str) -> Text:
    checked = _count(labels.get("checked")) or 0
    if not checked:
        return Text("labels: not checked (no integer class labels in the batches)", style="dim")
    classes = _count(labels.get("num_classes"))
    counts = [_count(c) or 0 for c in _list(labels.get("counts"))]
    missing = [m for m in _list(labels.get("missing")) if _count(m) is not None]
    dominant = _dict(labels.get("dominant"))
    out = [o for o in _list(labels.get("out_of_range")) if _count(o) is not None]
    problems: list[str] = []
    if out:
        problems.append(f"outside 0..{(classes or 1) - 1}: {', '.join(map(str, out))}")
    if missing:
        problems.append(f"never seen: class {', '.join(map(str, missing[:8]))}")
    share = _num(dominant.get("share"))
    if share is not None:
        problems.append(f"class {dominant.get('label')} is {share:.0%}")
    over = f" over {classes} classes" if classes else ""
    shown = " ".join(map(str, counts[:12])) + (" ..." if len(counts) > 12 else "")
    body = f"labels: the first {checked} training labels{over}, counts {shown}"
    if labels.get("shuffled") is False:
        body += "; the loader does not shuffle"
    if problems:
        return Text.assemble((f"{bad} ", "bold red"), body, " ", ("; ".join(problems), "red"))
    return Text.assemble((f"{good} ", "green"), body)
