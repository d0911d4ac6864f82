"""Reporters: how `torchlint check` shows its diagnostics.

For people: `full` (code frames), `concise` (one line each), `grouped` (one block per file).
For machines: `json`, `json-lines`, `github` (GitHub Actions workflow commands) and `sarif`
(SARIF 2.1.0, for code scanning). `--statistics` replaces the findings by a count per rule
(`render_statistics`).
"""

from __future__ import annotations

from typing import TextIO

from torchlint.report.common import (
    FORMATS,
    MACHINE_FORMATS,
    OutputFormat,
    Report,
    make_console,
    plural,
    print_lines,
    summary_lines,
)


def render(report: Report, output_format: OutputFormat, stream: TextIO) -> None:
    if output_format == "json":
        from torchlint.report.json_format import render_json

        render_json(report, stream)
    elif output_format == "json-lines":
        from torchlint.report.json_format import render_json_lines

        render_json_lines(report, stream)
    elif output_format == "github":
        from torchlint.report.github import render_github

        render_github(report, stream)
    elif output_format == "sarif":
        from torchlint.report.sarif import render_sarif

        render_sarif(report, stream)
    elif output_format == "concise":
        from torchlint.report.concise import render_concise

        render_concise(report, make_console(stream))
    elif output_format == "grouped":
        from torchlint.report.grouped import render_grouped

        render_grouped(report, make_console(stream))
    else:
        from torchlint.report.full import render_full

        render_full(report, make_console(stream))


def render_statistics(report: Report, output_format: OutputFormat, stream: TextIO) -> None:
    """`--statistics`: a count per rule instead of the findings (JSON for `json`, a table for
    every other format)."""
    from torchlint.report.statistics import render_statistics_json, render_statistics_text

    if output_format == "json":
        render_statistics_json(report, stream)
    else:
        render_statistics_text(report, make_console(stream))


__all__ = [
    "FORMATS",
    "MACHINE_FORMATS",
    "OutputFormat",
    "Report",
    "make_console",
    "plural",
    "print_lines",
    "render",
    "render_statistics",
    "summary_lines",
]
