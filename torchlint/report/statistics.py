"""`--statistics`: how many findings each rule has, most frequent first, instead of the findings.

    57  TL301      item-in-hot-loop
    12  TL204  [*] deprecated-cuda-amp
    Found 69 errors (12 fixable with --fix).

`[*]` marks a rule with findings that `--fix` would fix. With `--output-format json`: an array
of `{"code", "name", "count", "fixable"}` objects in the same order.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, TextIO

from rich.console import Console
from rich.text import Text

from torchlint.report.common import Report, summary_lines
from torchlint.report.concise import CODE_STYLE, FIX_STYLE

INDENT = "  "


@dataclass(frozen=True)
class RuleCount:
    code: str
    name: str
    count: int
    fixable: bool  # some of the findings have a fix that `--fix` would apply

    def to_json(self) -> dict[str, Any]:
        return {"code": self.code, "name": self.name, "count": self.count, "fixable": self.fixable}


def rule_counts(report: Report) -> list[RuleCount]:
    """One entry per rule with findings: by count, most first, then by code."""
    counts: dict[str, int] = {}
    names: dict[str, str] = {}
    fixable: set[str] = set()
    for diagnostic in report.diagnostics:
        counts[diagnostic.code] = counts.get(diagnostic.code, 0) + 1
        names.setdefault(diagnostic.code, diagnostic.name)
        if report.marked_fixable(diagnostic):
            fixable.add(diagnostic.code)
    ordered = sorted(counts, key=lambda code: (-counts[code], code))
    return [RuleCount(code, names[code], counts[code], code in fixable) for code in ordered]


def render_statistics_json(report: Report, stream: TextIO) -> None:
    stream.write(json.dumps([entry.to_json() for entry in rule_counts(report)], indent=2))
    stream.write("\n")
    stream.flush()


def render_statistics_text(report: Report, console: Console) -> None:
    entries = rule_counts(report)
    if entries:
        count_width = max(len(str(entry.count)) for entry in entries)
        code_width = max(len(entry.code) for entry in entries)
        for entry in entries:
            line = Text(INDENT)
            line.append(f"{entry.count:>{count_width}}  ")
            line.append(f"{entry.code:<{code_width}}", style=CODE_STYLE)
            line.append("  ")
            if entry.fixable:
                line.append("[*]", style=FIX_STYLE)
            else:
                line.append("   ")
            line.append(f" {entry.name}")
            console.print(line)
    for summary in summary_lines(report):
        console.print(summary)
