"""The loss chart drawn in the terminal (braille dots, or ASCII), with its log scale."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rich.text import Text

from torchlint.runtime.report.parts import (
    CHART_MAX_WIDTH,
    CHART_MIN_WIDTH,
    CHART_ROWS,
    LOG_SCALE_RANGE,
    Glyphs,
    _fmt,
    _num,
)

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
