"""The evidence of `torchlint run overfit`: the loss curve and the key numbers."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from torchlint.runtime.report.chart import loss_chart
from torchlint.runtime.report.parts import (
    CHART_MIN_WIDTH,
    Glyphs,
    _count,
    _curve,
    _fmt,
    _heading,
    _indented,
    _num,
    _text,
)


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
