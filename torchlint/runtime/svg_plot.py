"""A small, dependency-free SVG line chart for `--plot FILE` (fit curves, lr-find sweeps):
something a person can open in any browser. No torch."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape
from pathlib import Path

WIDTH, HEIGHT = 720, 420
MARGIN_LEFT, MARGIN_RIGHT, MARGIN_TOP, MARGIN_BOTTOM = 72, 24, 40, 56
COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e")


@dataclass(frozen=True)
class Series:
    """One line: a label for the legend, x values, and y values (None or non-finite: a gap)."""

    label: str
    xs: Sequence[float]
    ys: Sequence[float | None]


@dataclass(frozen=True)
class Marker:
    """A vertical line at `x` with a label (a suggested learning rate, the best epoch)."""

    x: float
    label: str


def _scale(value: float, low: float, high: float, log: bool) -> float:
    if log:
        value, low, high = math.log10(value), math.log10(low), math.log10(high)
    return 0.5 if high == low else (value - low) / (high - low)


def _ticks(low: float, high: float, log: bool, count: int = 5) -> list[float]:
    if log:
        first, last = math.floor(math.log10(low)), math.ceil(math.log10(high))
        return [10.0**e for e in range(first, last + 1) if low <= 10.0**e <= high] or [low, high]
    if high == low:
        return [low]
    return [low + (high - low) * i / (count - 1) for i in range(count)]


def _label(value: float) -> str:
    return f"{value:.3g}"


def render_svg(
    series: Sequence[Series],
    *,
    title: str,
    x_label: str,
    y_label: str,
    log_x: bool = False,
    log_y: bool = False,
    markers: Sequence[Marker] = (),
) -> str:
    """The chart as SVG text. Log axes ignore values that are not positive."""
    points = [
        (x, y)
        for s in series
        for x, y in zip(s.xs, s.ys, strict=False)
        if y is not None
        and math.isfinite(y)
        and math.isfinite(x)
        and (not log_x or x > 0)
        and (not log_y or y > 0)
    ]
    plot_w = WIDTH - MARGIN_LEFT - MARGIN_RIGHT
    plot_h = HEIGHT - MARGIN_TOP - MARGIN_BOTTOM
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="12">',
        f'<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>',
        f'<text x="{WIDTH / 2}" y="22" text-anchor="middle" font-size="15">{escape(title)}</text>',
    ]
    if not points:
        parts.append(f'<text x="{WIDTH / 2}" y="{HEIGHT / 2}" text-anchor="middle">no data</text>')
        parts.append("</svg>")
        return "\n".join(parts)
    x_low, x_high = min(p[0] for p in points), max(p[0] for p in points)
    y_low, y_high = min(p[1] for p in points), max(p[1] for p in points)

    def sx(x: float) -> float:
        return MARGIN_LEFT + _scale(x, x_low, x_high, log_x) * plot_w

    def sy(y: float) -> float:
        return MARGIN_TOP + (1 - _scale(y, y_low, y_high, log_y)) * plot_h

    bottom = MARGIN_TOP + plot_h
    parts.append(
        f'<rect x="{MARGIN_LEFT}" y="{MARGIN_TOP}" width="{plot_w}" height="{plot_h}" '
        'fill="none" stroke="#888"/>'
    )
    for x in _ticks(x_low, x_high, log_x):
        parts.append(
            f'<text x="{sx(x):.1f}" y="{bottom + 18}" text-anchor="middle">{_label(x)}</text>'
        )
    for y in _ticks(y_low, y_high, log_y):
        parts.append(
            f'<line x1="{MARGIN_LEFT}" x2="{MARGIN_LEFT + plot_w}" y1="{sy(y):.1f}" '
            f'y2="{sy(y):.1f}" stroke="#eee"/>'
            f'<text x="{MARGIN_LEFT - 6}" y="{sy(y) + 4:.1f}" text-anchor="end">{_label(y)}</text>'
        )
    parts.append(
        f'<text x="{MARGIN_LEFT + plot_w / 2}" y="{HEIGHT - 14}" text-anchor="middle">'
        f"{escape(x_label)}</text>"
        f'<text x="16" y="{MARGIN_TOP + plot_h / 2}" text-anchor="middle" '
        f'transform="rotate(-90 16 {MARGIN_TOP + plot_h / 2})">{escape(y_label)}</text>'
    )
    for index, line in enumerate(series):
        colour = COLOURS[index % len(COLOURS)]
        runs: list[list[str]] = [[]]
        for x, value in zip(line.xs, line.ys, strict=False):
            if (
                value is None
                or not math.isfinite(value)
                or (log_y and value <= 0)
                or (log_x and x <= 0)
            ):
                runs.append([])
                continue
            runs[-1].append(f"{sx(x):.1f},{sy(value):.1f}")
        for run in runs:
            if len(run) == 1:
                x_text, y_text = run[0].split(",")
                parts.append(f'<circle cx="{x_text}" cy="{y_text}" r="2.5" fill="{colour}"/>')
            elif run:
                parts.append(
                    f'<polyline fill="none" stroke="{colour}" stroke-width="2" '
                    f'points="{" ".join(run)}"/>'
                )
        parts.append(
            f'<rect x="{MARGIN_LEFT + 10}" y="{MARGIN_TOP + 8 + 18 * index}" width="14" '
            f'height="3" fill="{colour}"/><text x="{MARGIN_LEFT + 30}" '
            f'y="{MARGIN_TOP + 14 + 18 * index}">{escape(line.label)}</text>'
        )
    for marker in markers:
        if x_low <= marker.x <= x_high and (not log_x or marker.x > 0):
            x = sx(marker.x)
            parts.append(
                f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{MARGIN_TOP}" y2="{bottom}" '
                'stroke="#555" stroke-dasharray="4 3"/>'
                f'<text x="{x + 4:.1f}" y="{MARGIN_TOP + 12}">{escape(marker.label)}</text>'
            )
    parts.append("</svg>")
    return "\n".join(parts)


def write_svg(path: str | Path, svg: str) -> None:
    Path(path).write_text(svg + "\n", encoding="utf-8")
