"""Static findings confirmed by a run: where a runtime finding lands on the line of a static one
that predicted it (a TL301 `.item()` the profile measured synchronising every step, a TL202
`optimizer.step()` the run saw bypass the scaler), both say so.

Each static rule names the runtime codes that confirm it (`Rule.confirmed_by`); this module
inverts that table. `confirm_envelope` runs in the torch-free parent after a run: it parses
(never runs) the files the confirming findings point at, with the static analyzer, and adds
`evidence["confirms"]` and a sentence to each runtime finding that sits on a static one's lines.
`confirmation` is the text the editor appends to the static diagnostic ("confirmed by a run: 3
syncs per step, 2.10 ms"), from the runtime finding's evidence alone.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any


@cache
def confirming() -> dict[str, tuple[str, ...]]:
    """Runtime code -> the static codes it confirms ({} without the static analyzer's
    dependencies)."""
    try:
        from torchlint.rules import ALL_RULES
    except ImportError:
        return {}

    table: dict[str, list[str]] = {}
    for rule in ALL_RULES:
        for code in rule.confirmed_by:
            table.setdefault(code, []).append(rule.code)
    return {code: tuple(static) for code, static in table.items()}


def confirmation(code: str, evidence: dict[str, Any] | None) -> str:
    """What the run measured, for the static diagnostic it confirms."""
    evidence = evidence or {}
    per_step = evidence.get("per_step")
    if code == "TLR603" and isinstance(per_step, (int, float)):
        text = f"confirmed by a run: {per_step:g} sync(s) per step"
        ms = evidence.get("ms_per_step")
        return text + (f", {ms:.2f} ms" if isinstance(ms, (int, float)) else "")
    if code in ("TLR607", "TLR608") and isinstance(per_step, (int, float)):
        return f"confirmed by a run: {per_step:g} blocking copy(ies) per step"
    return f"confirmed by a run ({code})"


def confirm_envelope(result: dict[str, Any]) -> None:
    """Mark the runtime findings of `result` that confirm a static finding at their line."""
    table = confirming()
    wanted: dict[str, list[dict[str, Any]]] = {}
    for item in result.get("diagnostics") or []:
        if (
            isinstance(item, dict)
            and item.get("code") in table
            and isinstance(item.get("filename"), str)
            and isinstance(item.get("line"), int)
        ):
            wanted.setdefault(item["filename"], []).append(item)
    for filename, items in wanted.items():
        static = _static_lines(filename)
        for item in items:
            codes = [
                code
                for code, first, last in static
                if code in table[item["code"]] and first <= item["line"] <= last
            ]
            if codes:
                confirms = sorted(set(codes))
                item["evidence"] = {**(item.get("evidence") or {}), "confirms": confirms}
                item["message"] = (
                    f"{str(item.get('message', '')).rstrip()} "
                    f"(confirms the static finding {', '.join(confirms)} at this line)"
                )


def _static_lines(filename: str) -> list[tuple[str, int, int]]:
    """(code, first row, last row) of the static findings of one file; [] when it cannot be
    read. Only parses the file."""
    try:
        from torchlint.engine import analyze_bytes

        data = Path(filename).read_bytes()
    except (ImportError, OSError):  # no static analyzer where the run ran, or no file
        return []
    try:
        analysis = analyze_bytes(data, filename)
    except Exception:  # the run's result must never be lost to the analyzer
        return []
    return [(d.code, d.location.row, d.end_location.row) for d in analysis.diagnostics]
