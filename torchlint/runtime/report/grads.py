"""The evidence of `torchlint run grads`: the gradient table, worst first, and the depth profile."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from torchlint.runtime.report.parts import (
    Glyphs,
    _count,
    _curve,
    _dict,
    _fmt,
    _heading,
    _indented,
    _list,
    _num,
    _text,
)

#: rows of the gradient table before "… N more"
MAX_PARAM_ROWS = 25


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
