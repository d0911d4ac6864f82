"""`--output-format concise`: `path:row:col: CODE [*] message`, one line each, and a summary.
In a notebook: `path:cell N:row:col: ...`, the row counted within the cell."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from torchlint.diagnostics import Diagnostic
from torchlint.report.common import Report, print_lines, summary_lines

PATH_STYLE = "bold"
CODE_STYLE = "bold red"
FIX_STYLE = "cyan"


def header(report: Report, diagnostic: Diagnostic) -> Text:
    """`path:row:col: CODE [*] message`, styled."""
    text = Text()
    text.append(report.path(diagnostic), style=PATH_STYLE)
    text.append(f":{diagnostic.where}: ")
    text.append(diagnostic.code, style=CODE_STYLE)
    if report.marked_fixable(diagnostic):
        text.append(" ")
        text.append("[*]", style=FIX_STYLE)
    text.append(" ")
    text.append(one_line(diagnostic.message))
    return text


def one_line(message: str) -> str:
    return " ".join(message.split()) if "\n" in message or "\r" in message else message


def render_concise(report: Report, console: Console) -> None:
    lines: list[Text | str] = [header(report, diagnostic) for diagnostic in report.diagnostics]
    lines.extend(summary_lines(report))
    print_lines(console, lines)
