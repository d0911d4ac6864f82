"""`--output-format full` (the default): each diagnostic's header line, then a code frame of
the offending lines with a little context and the range underlined, then the summary."""

from __future__ import annotations

import unicodedata

from rich.cells import cell_len
from rich.console import Console
from rich.text import Text

from torchlint.analysis.source import LineIndex
from torchlint.diagnostics import Diagnostic, Location
from torchlint.discovery import display_path
from torchlint.report.common import Report, print_lines, summary_lines
from torchlint.report.concise import header

CONTEXT_LINES = 2
# A range longer than this many lines shows its first and last lines only.
MAX_RANGE_LINES = 8
TAB_SIZE = 4

GUTTER_STYLE = "bold blue"
RANGE_STYLE = "bold"
CARET_STYLE = "bold red"
HELP_STYLE = "cyan"


def _printable(line: str) -> str:
    """The line with tabs expanded and control characters made visible (a terminal would act
    on them, and rich drops them, either way shifting the underline)."""
    line = line.expandtabs(TAB_SIZE)
    if line.isprintable():
        return line
    return "".join(
        ch if ch.isprintable() or unicodedata.category(ch) == "Zs" else "\ufffd" for ch in line
    )


def _rows_to_show(start_row: int, end_row: int, line_count: int) -> list[int | None]:
    """The rows of the frame; None marks an elision."""
    first = max(1, start_row - CONTEXT_LINES)
    last = min(line_count, end_row + CONTEXT_LINES)
    rows: list[int | None] = []
    if end_row - start_row + 1 > MAX_RANGE_LINES:
        keep = MAX_RANGE_LINES // 2
        rows.extend(range(first, start_row + keep))
        rows.append(None)
        rows.extend(range(end_row - keep + 1, last + 1))
    else:
        rows.extend(range(first, last + 1))
    return rows


def code_frame(lines: LineIndex, start: Location, end: Location, label: str) -> list[Text]:
    """The lines of a code frame for the range `start`-`end` of a text (none when the range
    lies outside it)."""
    text = lines.text
    line_count = lines.line_count
    if text.endswith(("\n", "\r")):
        line_count -= 1  # the empty "line" after the final newline
    if not text or line_count < 1 or not 1 <= start.row <= line_count + 1:
        return []
    if start.row > line_count:  # at the very end of the file (an unexpected end, say)
        start = Location(line_count, len(lines.line(line_count)) + 1)
    end = max(end, start)
    end_row = min(end.row, line_count)
    if end_row > start.row and end.column == 1:
        end_row -= 1  # a range ending at the start of a line does not cover that line
        end = Location(end_row, len(lines.line(end_row)) + 1)
    rows = _rows_to_show(start.row, end_row, line_count)
    width = len(str(max(row for row in rows if row is not None)))
    blank_gutter = Text(f"{'':>{width}} |", style=GUTTER_STYLE)
    frame = [blank_gutter]
    for row in rows:
        if row is None:
            frame.append(Text(f"{'.' * width} |", style=GUTTER_STYLE))
            continue
        line = lines.line(row)
        shown = _printable(line)
        out = _gutter(f"{row:>{width}} | ")
        if start.row <= row <= end_row:
            first_col = start.column if row == start.row else _indent(line) + 1
            last_col = end.column if row == end_row else len(line) + 1
            before = _printable(line[: first_col - 1])
            through = _printable(line[: max(last_col, first_col) - 1])
            out.append(before)
            out.append(through[len(before) :], style=RANGE_STYLE)
            out.append(shown[len(through) :])
            frame.append(out)
            offset = cell_len(before)
            size = max(cell_len(through) - offset, 1)
            underline = _gutter(f"{'':>{width}} | ")
            underline.append(" " * offset)
            underline.append("^" * size, style=CARET_STYLE)
            if row == end_row:
                underline.append(f" {label}", style=CARET_STYLE)
            frame.append(underline)
        else:
            out.append(shown)
            frame.append(out)
    frame.append(blank_gutter)
    return frame


def _gutter(text: str) -> Text:
    out = Text()
    out.append(text, style=GUTTER_STYLE)
    return out


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def render_diagnostic(
    report: Report, diagnostic: Diagnostic, indexes: dict[str, LineIndex] | None = None
) -> list[Text]:
    out = [header(report, diagnostic)]
    key = diagnostic.filename
    if diagnostic.cell is None:
        text = report.sources.get(key)
    else:  # a notebook: the frame shows the cell
        text = report.cell_sources.get((key, diagnostic.cell))
        key = f"{key}\0{diagnostic.cell}"
    if text:
        cache = indexes if indexes is not None else {}
        lines = cache.get(key)
        if lines is None:
            lines = cache[key] = LineIndex(text)
        out.extend(code_frame(lines, diagnostic.location, diagnostic.end_location, diagnostic.code))
    if diagnostic.fix is not None and diagnostic.fix.edits:
        label = "" if report.marked_fixable(diagnostic) else f" ({diagnostic.fix.applicability})"
        help_line = Text()
        help_line.append("  = help: ", style=HELP_STYLE)
        help_line.append(f"{diagnostic.fix.message}{label}")
        out.append(help_line)
    for note, location in diagnostic.related:
        where = f"{display_path(diagnostic.filename, report.cwd)}:{location.row}:{location.column}"
        line = Text()
        line.append("  = note: ", style=HELP_STYLE)
        # In a notebook, the note names its cell and line already.
        line.append(note if diagnostic.cell is not None else f"{note} ({where})")
        out.append(line)
    return out


def render_full(report: Report, console: Console) -> None:
    indexes: dict[str, LineIndex] = {}  # one per file, however many diagnostics it has
    lines: list[Text | str] = []
    for diagnostic in report.diagnostics:
        lines.extend(render_diagnostic(report, diagnostic, indexes))
        lines.append("")
    lines.extend(summary_lines(report))
    print_lines(console, lines)
