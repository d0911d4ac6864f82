"""`--output-format grouped`: the findings of each file under a line naming the file, then the
summary.

    examples/trainer_class.py:
      45:23 TL204 [*] `torch.cuda.amp.GradScaler` is deprecated since PyTorch 2.4 ...
      60:13 TL202 `self.scaler.update()` is never called in the for-loop over ...

The `row:col` column of a file is padded to its widest entry so the codes line up.
"""

from __future__ import annotations

from itertools import groupby

from rich.console import Console
from rich.text import Text

from torchlint.diagnostics import Diagnostic
from torchlint.report.common import Report, print_lines, summary_lines
from torchlint.report.concise import CODE_STYLE, FIX_STYLE, PATH_STYLE, one_line

INDENT = "  "


def _entry(report: Report, diagnostic: Diagnostic, width: int) -> Text:
    where = diagnostic.where
    text = Text(INDENT)
    text.append(f"{where:<{width}} ")
    text.append(diagnostic.code, style=CODE_STYLE)
    if report.marked_fixable(diagnostic):
        text.append(" ")
        text.append("[*]", style=FIX_STYLE)
    text.append(" ")
    text.append(one_line(diagnostic.message))
    return text


def render_grouped(report: Report, console: Console) -> None:
    lines: list[Text | str] = []
    for _, group in groupby(report.diagnostics, key=lambda d: d.filename):
        diagnostics = list(group)
        first = diagnostics[0]
        heading = Text()
        heading.append(report.path(first), style=PATH_STYLE)
        heading.append(":")
        lines.append(heading)
        width = max(len(d.where) for d in diagnostics)
        lines.extend(_entry(report, diagnostic, width) for diagnostic in diagnostics)
        lines.append("")
    lines.extend(summary_lines(report))
    print_lines(console, lines)
