"""The evidence section of a `torchlint run profile` report: the stage table with a bar per
stage, the step time with and without per-stage timing, validation, host syncs, the trace."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.console import Console
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from torchlint.runtime.report.parts import Glyphs, _num

BAR_WIDTH = 24
#: stages drawn in warning colours when they dominate
_HEAVY = {"data_wait": 0.3, "h2d_and_preprocess": 0.3, "other": 0.3}


def _ms(value: object) -> str:
    number = _num(value)
    return "-" if number is None else f"{number:.3g} ms"


def _bar(share: float | None, glyphs: Glyphs) -> str:
    if share is None:
        return ""
    filled = share * BAR_WIDTH
    whole = int(filled)
    partial = glyphs.pick("▌", "") if filled - whole >= 0.5 else ""
    return glyphs.pick("█", "#") * whole + partial


def stage_table(payload: Mapping[str, Any], glyphs: Glyphs) -> Table:
    table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold")
    table.add_column("stage")
    table.add_column("median", justify="right")
    table.add_column("p90", justify="right")
    table.add_column("share", justify="right")
    table.add_column("")
    stages = payload.get("stages")
    for stage in stages if isinstance(stages, list) else []:
        if not isinstance(stage, Mapping):
            continue
        name = str(stage.get("name", "?"))
        share = _num(stage.get("share"))
        heavy = share is not None and share >= _HEAVY.get(name, 0.6)
        style = "bold yellow" if heavy else ""
        table.add_row(
            Text(name, style=style),
            _ms(stage.get("ms_median")),
            _ms(stage.get("ms_p90")),
            "-" if share is None else f"{share * 100:.0f}%",
            Text(_bar(share, glyphs), style="yellow" if heavy else "cyan"),
        )
    return table


def _step_line(payload: Mapping[str, Any]) -> Text:
    step = payload.get("step_ms")
    step = step if isinstance(step, Mapping) else {}
    text = Text("  step  ")
    text.append(f"{_ms(step.get('median'))} median", style="bold")
    text.append(f", p90 {_ms(step.get('p90'))}")
    plain = _num(step.get("uninstrumented_median"))
    if plain is not None:
        text.append(f"; {_ms(plain)} without per-stage timing")
        text.append(f" ({timing_cost(payload)})", style="dim")
    return text


def timing_cost(payload: Mapping[str, Any]) -> str:
    """What the per-stage timing costs, as far as the two windows' spreads let one say."""
    step = payload.get("step_ms")
    step = step if isinstance(step, Mapping) else {}
    overhead = _num(payload.get("instrumentation_overhead"))
    spreads = [step.get("spread"), step.get("uninstrumented_spread")]
    shown = [
        f"{_ms(pair[0])}-{_ms(pair[1])}"
        for pair in spreads
        if isinstance(pair, list) and len(pair) == 2
    ]
    spread = f"; middle half of the steps {' and '.join(shown)}" if len(shown) == 2 else ""
    if overhead is not None:
        change = (overhead - 1) * 100
        if change >= 0:
            return f"timing costs {change:.0f}%{spread}"
        return (
            "the timed steps ran faster than the untimed ones: the two windows differ in more "
            f"than the timing{spread}"
        )
    verdict = payload.get("instrumentation_comparison")
    if verdict == "too few steps":
        return "too few steps to compare the two"
    return "the cost of timing is inconclusive: the two windows' spreads overlap" + spread


def _method_line(payload: Mapping[str, Any]) -> Text:
    clocks = {
        "cpu_clock": "a monotonic CPU clock",
        "cuda_events": "CUDA events, one synchronisation per step",
        "sync_per_stage": "a synchronisation at every stage boundary (diagnostic mode)",
    }
    method = clocks.get(str(payload.get("synchronization")), str(payload.get("synchronization")))
    coverage = _num(payload.get("coverage"))
    parts = [
        f"{payload.get('measured_steps', '?')} measured steps after "
        f"{payload.get('warmup_steps', '?')} warm-up steps",
        f"timed with {method}",
    ]
    if coverage is not None:
        parts.append(f"stages account for {coverage * 100:.0f}% of the median step")
    return Text("  " + "; ".join(parts), style="dim")


def _validation_lines(payload: Mapping[str, Any]) -> list[Text]:
    validation = payload.get("validation")
    if not isinstance(validation, Mapping):
        return []
    stages = validation.get("stages")
    detail = ", ".join(
        f"{s.get('name', '?')} {_ms(s.get('ms_per_batch'))}"
        for s in (stages if isinstance(stages, list) else [])
        if isinstance(s, Mapping)
    )
    return [
        Text(
            f"  validation  {_ms(validation.get('ms_per_batch'))} per batch over "
            f"{validation.get('batches', '?')} batches ({detail})"
        )
    ]


def _sync_lines(payload: Mapping[str, Any]) -> list[Text]:
    syncs = payload.get("host_syncs")
    lines: list[Text] = []
    for entry in (syncs if isinstance(syncs, list) else [])[:5]:
        if not isinstance(entry, Mapping):
            continue
        kinds = entry.get("kinds")
        names = ", ".join(f".{k}()" for k in kinds) if isinstance(kinds, Mapping) else ""
        lines.append(
            Text(
                f"  host syncs  {entry.get('per_step', '?')} per step at line "
                f"{entry.get('line', '?')} ({names})"
            )
        )
    return lines


def render_evidence(payload: Mapping[str, Any], console: Console, glyphs: Glyphs) -> None:
    console.print()
    console.print(Text("evidence", style="bold underline"))
    console.print(Padding(stage_table(payload, glyphs), (0, 0, 0, 2)))
    console.print()
    console.print(_step_line(payload))
    for line in _validation_lines(payload) + _sync_lines(payload):
        console.print(line)
    trace = payload.get("trace")
    if isinstance(trace, str):
        console.print(Text(f"  trace  {trace} (open in chrome://tracing or Perfetto)"))
    console.print(_method_line(payload))
