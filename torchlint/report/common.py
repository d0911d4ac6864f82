"""What every reporter shares: the report itself, the summary lines, and the console they
print to. The reporters import this module; `torchlint.report` picks one of them."""

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
