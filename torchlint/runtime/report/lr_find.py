"""The evidence of `torchlint run lr-find` in the terminal report: the smoothed loss against the
learning rate (log x axis) as a small chart, the suggestions, the script's own lr, and how the
sweep ended. Reads the payload defensively; never imports torch."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from rich.console import Console
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from torchlint.runtime.report.chart import Chart
from torchlint.runtime.report.parts import CHART_MAX_WIDTH, CHART_MIN_WIDTH, Glyphs, _num

#: the sweep's verdict line for each way it ended
_ENDS = {
    "diverged": "diverged",
    "completed": "reached lr_max without diverging",
    "stopped": "was stopped by a first-step check",
    "script_ended": "ended with the script",
}


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _nums(value: object) -> list[float | None]:
    return [_num(v) for v in value] if isinstance(value, list) else []


def fmt_lr(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3g}"


def _times(ratio: float) -> str:
    return f"{ratio:.0f}x" if ratio >= 10 else f"{ratio:.2g}x"


def _decade(exponent: int) -> str:
    return f"{10**exponent:g}" if 0 <= exponent <= 3 else f"1e{exponent}"


def sweep_chart(
    lrs: Sequence[float],
    smoothed: Sequence[float | None],
    glyphs: Glyphs,
    max_width: int = CHART_MAX_WIDTH,
    marks: Sequence[tuple[float, str]] = (),
) -> list[Text]:
    """The smoothed loss per step of the sweep. The lr rises exponentially with the step, so
    the step axis is a log lr axis: ticks at the powers of ten, and `marks` (lr, glyph) drawn
    on the axis line."""
    n = min(len(lrs), len(smoothed))
    values = list(smoothed[:n])
    finite = [v for v in values if v is not None]
    if n < 2 or not finite or any(lr <= 0 for lr in lrs[:n]):
        return [Text("too few steps with a finite loss to draw the curve", style="dim")]
    cap = tail_cap(values)
    peak = max(finite)
    if cap is not None:
        values = [min(v, cap) if v is not None else None for v in values]
        finite = [v for v in values if v is not None]
    top, bottom = max(finite), min(finite)
    labels = (f"{top:.4g}", f"{bottom:.4g}")
    label_width = max(len(label) for label in labels)
    width = max(CHART_MIN_WIDTH, min(max_width, CHART_MAX_WIDTH) - label_width - 2)
    dots = (2, 4) if glyphs.unicode else (1, 1)
    chart = Chart(values, width, sub_cols=dots[0], sub_rows=dots[1])
    scale = "log" if chart.log else "linear"
    lines = [Text(f"smoothed loss against learning rate (log lr, {scale} loss)", style="bold")]
    for row, bits in enumerate(chart.grid()):
        label = labels[0] if row == 0 else labels[1] if row == chart.rows - 1 else ""
        axis = glyphs.pick("┤", "+") if label else glyphs.pick("│", "|")
        line = Text(f"{label:>{label_width}} {axis}", style="dim")
        for cell in bits:
            if cell and chart.sub_cols == 2:
                line.append(chr(0x2800 + cell), style="cyan")
            else:
                line.append("*" if cell else " ", style="cyan")
        lines.append(line)
    first, last = math.log10(lrs[0]), math.log10(lrs[n - 1])

    def column(lr: float) -> int | None:
        if lr <= 0 or last <= first:
            return None
        t = (math.log10(lr) - first) / (last - first)
        if not -1e-9 <= t <= 1 + 1e-9:
            return None
        return chart.column_of(round(t * (n - 1)))

    ticks: dict[int, str] = {}
    for exponent in range(math.ceil(first - 1e-9), math.floor(last + 1e-9) + 1):
        col = column(10.0**exponent)
        if col is not None:
            ticks.setdefault(col, _decade(exponent))
    axis_line = [
        glyphs.pick("┬", "+") if c in ticks else glyphs.pick("─", "-") for c in range(width)
    ]
    for lr, glyph in marks:
        col = column(lr)
        if col is not None:
            axis_line[col] = glyph
    label_row = [" "] * (width + 8)
    for col, text in sorted(ticks.items()):
        _place(label_row, max(0, col - len(text) // 2), text)
    indent = " " * (label_width + 1)
    x_axis = Text(f"{indent}{glyphs.pick('└', '+')}", style="dim")
    for glyph in axis_line:
        x_axis.append(glyph, style="bold green" if glyph not in "┬─+-" else "dim")
    lines.append(x_axis)
    lines.append(Text(f"{indent} {''.join(label_row).rstrip()}  (lr)", style="dim"))
    if cap is not None:
        lines.append(
            Text(f"{indent} the diverging tail (up to {peak:.4g}) is cut at {cap:.4g}", style="dim")
        )
    return lines


def tail_cap(values: Sequence[float | None]) -> float | None:
    """Where to cut the diverging tail so that it does not flatten the descent: half the
    descent above the highest level before the minimum; None when nothing rises above it."""
    finite = [(k, v) for k, v in enumerate(values) if v is not None]
    if not finite:
        return None
    low_step, low = min(finite, key=lambda item: item[1])
    before = max(v for k, v in finite if k <= low_step)
    cap = before + 0.5 * (before - low)
    return cap if cap > low and any(v > cap for _, v in finite) else None


def _place(row: list[str], start: int, label: str) -> None:
    end = start + len(label)
    if end > len(row) or any(c != " " for c in row[max(0, start - 1) : end + 1]):
        return
    row[start:end] = list(label)


def render_evidence(payload: Mapping[str, Any], console: Console, glyphs: Glyphs) -> None:
    lrs = [v for v in _nums(payload.get("lrs")) if v is not None]
    smoothed = _nums(payload.get("smoothed"))
    suggested = _num(payload.get("suggested_lr"))
    lowest = _num(payload.get("min_loss_lr"))
    steepest_mark, lower_mark = glyphs.pick("▲", "^"), glyphs.pick("△", "'")
    console.print()
    console.print(Text("evidence", style="bold underline"))
    marks = [(lr, g) for lr, g in ((lowest, lower_mark), (suggested, steepest_mark)) if lr]
    room = max(CHART_MIN_WIDTH + 12, console.width - 4)
    for line in sweep_chart(lrs, smoothed, glyphs, room, marks):
        console.print(Padding(line, (0, 0, 0, 2), expand=False))
    console.print()
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold", no_wrap=True)
    table.add_column()
    for name, value in _numbers(payload, glyphs, steepest_mark, lower_mark):
        table.add_row(Text(name), value)
    console.print(Padding(table, (0, 0, 0, 2), expand=False))


def _numbers(
    payload: Mapping[str, Any], glyphs: Glyphs, steepest_mark: str, lower_mark: str
) -> list[tuple[str, Text]]:
    rows: list[tuple[str, Text]] = []
    suggested = _num(payload.get("suggested_lr"))
    lowest = _num(payload.get("min_loss_lr"))
    script = _num(payload.get("script_lr"))
    if suggested is not None:
        text = Text(fmt_lr(suggested), style="bold green")
        text.append(f"  {steepest_mark} where the smoothed loss fell fastest", style="dim")
        step = _count(payload.get("suggested_step"))
        if step is not None:
            text.append(f" (step {step})", style="dim")
        rows.append(("suggested lr", text))
    if lowest is not None:
        text = Text(fmt_lr(lowest))
        text.append(
            f"  {lower_mark} the lowest smoothed loss: past it the loss rises; not a "
            "learning rate to train at",
            style="dim",
        )
        rows.append(("lowest loss at", text))
    reason = payload.get("no_suggestion_reason")
    if suggested is None:
        rows.append(("no suggestion", Text(str(reason or "no loss was recorded"), style="red")))
    if script is not None:
        text = Text(fmt_lr(script))
        optimizer = payload.get("optimizer")
        if isinstance(optimizer, str):
            text.append(
                f"  ({optimizer}, as configured: the largest lr of its param groups)",
                style="dim",
            )
        if suggested is not None and script > 0:
            ratio = script / suggested
            if ratio >= 1:
                text.append(
                    f"  {_times(ratio)} the suggestion", style="yellow" if ratio > 10 else ""
                )
            else:
                text.append(
                    f"  {_times(1 / ratio)} below the suggestion",
                    style="yellow" if ratio < 0.01 else "",
                )
        rows.append(("the script's lr", text))
    rows.append(("sweep", _sweep(payload, glyphs)))
    rows.append(
        ("weights", Text(f"{payload.get('weights') or 'discarded'}; your model is untouched"))
    )
    plot = payload.get("plot")
    if isinstance(plot, str):
        rows.append(("plot", Text(plot)))
    elif isinstance(payload.get("plot_error"), str):
        rows.append(("plot", Text(str(payload.get("plot_error")), style="red")))
    return rows


def _sweep(payload: Mapping[str, Any], glyphs: Glyphs) -> Text:
    lr_min, lr_max = _num(payload.get("lr_min")), _num(payload.get("lr_max"))
    run, requested = _count(payload.get("steps_run")), _count(payload.get("steps_requested"))
    text = Text(f"lr {fmt_lr(lr_min)} {glyphs.arrow} {fmt_lr(lr_max)} over {requested} steps")
    end = payload.get("sweep_end")
    diverged = _count(payload.get("diverged_at_step"))
    if end == "diverged" and diverged is not None:
        lrs = _nums(payload.get("lrs"))
        at = lrs[diverged] if 0 <= diverged < len(lrs) else None
        text.append(f"; diverged at step {diverged} (lr {fmt_lr(at)})", style="yellow")
    elif isinstance(end, str) and end in _ENDS:
        text.append(f"; {_ENDS[end]}")
    if run is not None and requested is not None and run != requested:
        text.append(f"  ({run} of {requested} steps ran)", style="dim")
    return text
