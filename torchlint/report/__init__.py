"""Reporters: how `torchlint check` shows its diagnostics.

For people: `full` (code frames), `concise` (one line each), `grouped` (one block per file).
For machines: `json`, `json-lines`, `github` (GitHub Actions workflow commands) and `sarif`
(SARIF 2.1.0, for code scanning). `--statistics` replaces the findings by a count per rule
(`render_statistics`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, TextIO

from rich.console import Console
from rich.text import Text

from torchlint.diagnostics import Diagnostic
from torchlint.discovery import display_path

OutputFormat = Literal["full", "concise", "grouped", "json", "json-lines", "github", "sarif"]
FORMATS: tuple[OutputFormat, ...] = (
    "full",
    "concise",
    "grouped",
    "json",
    "json-lines",
    "github",
    "sarif",
)
# The formats meant for programs: no summary line, never coloured.
MACHINE_FORMATS: frozenset[OutputFormat] = frozenset({"json", "json-lines", "github", "sarif"})


@dataclass
class Report:
    """What one `torchlint check` run found (diagnostics sorted by path, row, column)."""

    diagnostics: Sequence[Diagnostic]
    # The decoded text of each file, by the diagnostics' `filename`, for code frames.
    sources: Mapping[str, str] = field(default_factory=dict)
    cwd: Path | None = None
    fix_mode: bool = False  # `--fix` ran: the diagnostics are what is left
    fixed: int = 0
    unsafe_fixes: bool = False
    had_errors: bool = False  # errors went to stderr: "All checks passed!" would mislead
    # The code of notebook cells, by (file name, cell number), for the findings with a `cell`.
    cell_sources: Mapping[tuple[str, int], str] = field(default_factory=dict)

    def path(self, diagnostic: Diagnostic) -> str:
        return display_path(diagnostic.filename, self.cwd)

    def marked_fixable(self, diagnostic: Diagnostic) -> bool:
        """Whether the diagnostic gets a `[*]`: a fix `--fix` would apply."""
        fix = diagnostic.fix
        if fix is None or not fix.edits:
            return False
        return fix.applicability == "safe" or self.unsafe_fixes


def plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def summary_lines(report: Report) -> list[str]:
    """`Found N errors (M fixable with --fix).` / `All checks passed!`, and what `--fix` did."""
    lines: list[str] = []
    total = len(report.diagnostics)
    if report.fix_mode and report.fixed:
        lines.append(f"Fixed {plural(report.fixed, 'error')}.")
    if total == 0:
        if not report.had_errors:
            lines.append("All checks passed!")
        return lines
    fixable = sum(1 for d in report.diagnostics if report.marked_fixable(d))
    note = f" ({fixable} fixable with --fix)" if fixable and not report.fix_mode else ""
    lines.append(f"Found {plural(total, 'error')}{note}.")
    hidden = sum(
        1
        for d in report.diagnostics
        if d.fix is not None and d.fix.applicability == "unsafe" and not report.unsafe_fixes
    )
    if hidden:
        fixes = "hidden fix" if hidden == 1 else "hidden fixes"
        lines.append(f"{hidden} {fixes} can be enabled with the --unsafe-fixes option.")
    return lines


def make_console(stream: TextIO) -> Console:
    """A console that writes text as given: no markup, emoji codes or wrapping; colour only
    on a terminal (rich honours `NO_COLOR` and `FORCE_COLOR`)."""
    return Console(
        file=stream,
        markup=False,
        emoji=False,
        highlight=False,
        soft_wrap=True,
    )


def print_lines(console: Console, lines: Sequence[Text | str]) -> None:
    """`lines`, one per line, in one `print`: rich measures the terminal and writes to the
    stream once per call, which for a few hundred findings cost more than rendering them."""
    if lines:
        console.print(*lines, sep="\n")


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
    "plural",
    "print_lines",
    "render",
    "render_statistics",
    "summary_lines",
]
