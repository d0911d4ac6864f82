"""Jupyter notebooks (`.ipynb`): one virtual Python program from the code cells, diagnostics
mapped back to cells, and fixes written back into the right cells.

The code cells are joined, in order, into one virtual source, so that a training loop split
across cells is analysed as one program. Between two cells goes a boundary comment line
(`BOUNDARY`); a cell that does not end with a newline gets one. IPython syntax is replaced,
line for line, so that line numbers stay aligned:

- a cell whose first line is a cell magic (`%%time`, `%%bash`) is left out entirely;
- a line magic (`%matplotlib inline`), a shell escape (`!pip install ...`), an assignment from
  one (`files = !ls`, `t = %timeit -o f()`) and a help request (`model?`, `?model`, `??f`)
  become `pass` at the same indentation (with their backslash-continued lines), so a magic
  that is a block's only statement still parses.

Cells are numbered by their position among *all* the notebook's cells (markdown and raw cells
count), 1-based, as Jupyter and VS Code show them. A diagnostic's `cell` is that number and its
rows are lines within the cell; a range that would run into the next cell is clipped to the end
of its first cell. A notebook that cannot be read (not JSON, not nbformat 4, no `cells`) is one
TL001 diagnostic at 1:1 (without a cell); a notebook whose kernel language is not Python is
skipped.

Fixes are applied to the virtual source (a fix with an edit that crosses a cell boundary is
skipped), the result is split back at the boundary lines, the magics are restored, and only
the cells whose code changed get a new `source`: outputs, metadata, execution counts, key order
and the JSON layout (indentation, `ensure_ascii`, line endings, final newline) stay as they
were. A notebook whose JSON this module could not write back byte for byte when nothing
changes is not fixed (an error says so).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from torchlint.diagnostics import Diagnostic, Edit, Fix, Location
from torchlint.engine import DEFAULT_SELECTION, Analysis, analyze_bytes, analyze_source
from torchlint.rules.syntax_error import SyntaxErrorRule
from torchlint.selection import RuleSelection

if TYPE_CHECKING:
    from torchlint.project_view import AnalysisProject

NOTEBOOK_SUFFIX = ".ipynb"
BOUNDARY = "# ---- torchlint: notebook cell boundary ----"
MAGIC_PLACEHOLDER = "pass  # torchlint: notebook magic"

_ASSIGNED_MAGIC = re.compile(r"^[A-Za-z_][\w.,\s]*=\s*[!%]")
_HELP = re.compile(r"^\?{1,2}\S|^[A-Za-z_][\w.\[\]()'\"]*\?{1,2}$")


def is_notebook(filename: str) -> bool:
    return filename.lower().endswith(NOTEBOOK_SUFFIX)


class NotebookError(ValueError):
    """A notebook that cannot be read (the message is ready to show)."""


@dataclass
class Cell:
    index: int  # position among all cells, 1-based
    text: str  # the original code
    as_list: bool  # `source` was a list of lines (else one string)
    virtual: str  # the code with magics replaced, ending with a newline
    magics: list[str]  # the original lines replaced by placeholders, in order


@dataclass
class Notebook:
    data: dict[str, Any]
    cells: list[Cell]  # the analysed code cells
    virtual: str
    # For each virtual row (1-based, index 0 unused): (cell number, line in the cell), or
    # (cell number of the cell before, 0) on a boundary line.
    rows: list[tuple[int, int]] = field(default_factory=list)

    def cell_texts(self) -> dict[int, str]:
        return {cell.index: cell.text for cell in self.cells}


def _is_magic(stripped: str) -> bool:
    if not stripped:
        return False
    if stripped[0] in "%!":
        return True
    if _ASSIGNED_MAGIC.match(stripped) and not stripped.startswith(("!=",)):
        # `a = !ls` or `a = %time f()`, but not `a = b % c` (there, `%` is not right after `=`)
        return "==" not in stripped.split("=", 1)[0]
    return bool(_HELP.match(stripped))


def _virtual_cell(text: str) -> tuple[str, list[str]] | None:
    """The cell's code with its IPython syntax replaced, and the replaced lines; None for a
    cell magic (the whole cell is skipped)."""
    lines = text.splitlines(keepends=True)
    if lines and lines[0].lstrip().startswith("%%"):
        return None
    out: list[str] = []
    magics: list[str] = []
    continued = False
    for line in lines:
        body = line.rstrip("\r\n")
        stripped = body.strip()
        if continued or _is_magic(stripped):
            indent = body[: len(body) - len(body.lstrip())]
            magics.append(line)
            out.append(f"{indent}{MAGIC_PLACEHOLDER}\n")
            continued = body.endswith("\\")
            continue
        out.append(body + "\n")
    return "".join(out), magics


def _source_text(cell: dict[str, Any]) -> tuple[str, bool]:
    source = cell.get("source", "")
    if isinstance(source, list):
        if not all(isinstance(part, str) for part in source):
            raise NotebookError("a cell's `source` holds something other than text")
        return "".join(source), True
    if not isinstance(source, str):
        raise NotebookError("a cell's `source` is neither text nor a list of lines")
    return source, False


def _is_python(data: dict[str, Any]) -> bool:
    metadata = data.get("metadata")
    if not isinstance(metadata, dict):
        return True
    for key, name in (("kernelspec", "language"), ("language_info", "name")):
        info = metadata.get(key)
        if isinstance(info, dict) and isinstance(info.get(name), str):
            return bool(info[name].lower() == "python")
    return True


def load_json(data: bytes) -> dict[str, Any]:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise NotebookError(f"not UTF-8 ({exc.reason} at byte {exc.start})") from None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise NotebookError(f"not valid JSON ({exc.msg} at line {exc.lineno})") from None
    except RecursionError:
        raise NotebookError("not valid JSON (nested too deeply)") from None
    if not isinstance(value, dict):
        raise NotebookError("not a notebook (the JSON is not an object)")
    major = value.get("nbformat")
    if major is not None and major != 4:
        raise NotebookError(f"nbformat {major} is not supported (only nbformat 4)")
    if not isinstance(value.get("cells"), list):
        raise NotebookError("not an nbformat 4 notebook (no `cells` list)")
    return value


def build(data: dict[str, Any]) -> Notebook:
    """The virtual source of a parsed notebook (`load_json`). Raises `NotebookError`."""
    cells: list[Cell] = []
    pieces: list[str] = []
    rows: list[tuple[int, int]] = [(0, 0)]
    python = _is_python(data)
    for position, raw in enumerate(data["cells"], start=1):
        if not isinstance(raw, dict):
            raise NotebookError(f"cell {position} is not an object")
        if raw.get("cell_type") != "code" or not python:
            continue
        text, as_list = _source_text(raw)
        made = _virtual_cell(text)
        if made is None:
            continue
        virtual, magics = made
        if cells:
            pieces.append(BOUNDARY + "\n")
            rows.append((cells[-1].index, 0))
        cells.append(Cell(position, text, as_list, virtual, magics))
        pieces.append(virtual)
        rows.extend((position, line) for line in range(1, virtual.count("\n") + 1))
    return Notebook(data, cells, "".join(pieces), rows)


def read(data: bytes) -> Notebook:
    return build(load_json(data))


def build_cells(texts: Sequence[str]) -> Notebook:
    """The virtual source of code cells given as their texts, in order (an editor's open
    notebook); the cells are numbered 1, 2, ... in that order."""
    return build({"cells": [{"cell_type": "code", "source": text} for text in texts]})


# --- diagnostics -----------------------------------------------------------------------------


def _cell_lengths(notebook: Notebook) -> dict[int, list[int]]:
    """The length of every virtual line of each cell, by cell number."""
    lengths: dict[int, list[int]] = {}
    for cell in notebook.cells:
        lengths[cell.index] = [len(line) for line in cell.virtual.split("\n")[:-1]]
    return lengths


def _where(notebook: Notebook, location: Location) -> tuple[int, Location]:
    """A virtual location as (cell, location in the cell)."""
    rows = notebook.rows
    row = min(max(location.row, 1), len(rows) - 1) if len(rows) > 1 else 1
    if len(rows) <= 1:
        return 0, location
    cell, line = rows[row]
    if line == 0:  # a boundary line: the end of the cell before it
        count = sum(1 for c, ln in rows if c == cell and ln > 0)
        return cell, Location(count + 1, 1)
    if location.row > len(rows) - 1:  # past the end: after the last line
        return cell, Location(line + 1, 1)
    return cell, Location(line, location.column)


def _map_edit(notebook: Notebook, edit: Edit) -> tuple[int, Edit] | None:
    cell, start = _where(notebook, edit.location)
    end_cell, end = _where(notebook, edit.end_location)
    if end_cell != cell:
        return None
    return cell, Edit(edit.content, start, end)


def map_diagnostic(notebook: Notebook, diagnostic: Diagnostic) -> Diagnostic:
    """A diagnostic of the virtual source in cell coordinates. A range running into another
    cell is clipped to the end of its first cell; a fix with an edit that crosses a cell
    boundary is dropped (`--fix` would skip it)."""
    cell, start = _where(notebook, diagnostic.location)
    end_cell, end = _where(notebook, diagnostic.end_location)
    if end_cell != cell:
        lengths = _cell_lengths(notebook).get(cell, [0])
        end = Location(len(lengths), (lengths[-1] if lengths else 0) + 1)
    fix = diagnostic.fix
    if fix is not None:
        edits = [_map_edit(notebook, edit) for edit in fix.edits]
        if any(edit is None for edit in edits):
            fix = None
        else:
            fix = Fix(fix.applicability, fix.message, tuple(e[1] for e in edits if e is not None))
    related = []
    for note, where in diagnostic.related:
        other, local = _where(notebook, where)
        related.append((f"{note} (cell {other}, line {local.row})", local))
    return replace(
        diagnostic,
        location=start,
        end_location=max(end, start),
        fix=fix,
        related=tuple(related),
        cell=cell,
    )


def _unreadable(filename: str, reason: str, selection: RuleSelection) -> Analysis:
    analysis = Analysis(filename, "")
    if selection.enabled(SyntaxErrorRule):
        analysis.diagnostics.append(
            Diagnostic(
                code=SyntaxErrorRule.code,
                name=SyntaxErrorRule.name,
                message=f"Cannot read the notebook: {reason}; nothing in it was checked.",
                severity=SyntaxErrorRule.severity,
                filename=filename,
                location=Location(1, 1),
                end_location=Location(1, 2),
            )
        )
    return analysis


def analyze_notebook(
    data: bytes, filename: str, selection: RuleSelection = DEFAULT_SELECTION
) -> Analysis:
    """Analyse a notebook's bytes; the diagnostics carry their cell. `Analysis.text` is the
    virtual source."""
    try:
        notebook = read(data)
    except NotebookError as exc:
        return _unreadable(filename, str(exc), selection)
    analysis = analyze_source(notebook.virtual, filename, selection)
    analysis.diagnostics = sorted(
        (map_diagnostic(notebook, d) for d in analysis.diagnostics), key=lambda d: d.sort_key
    )
    return analysis


def analyze_file(
    data: bytes,
    filename: str,
    selection: RuleSelection = DEFAULT_SELECTION,
    project: AnalysisProject | None = None,
) -> Analysis:
    """`analyze_bytes`, or `analyze_notebook` for a `.ipynb` file. `project` (calls followed
    into other project files) applies to Python files only: a notebook is analysed alone."""
    if is_notebook(filename):
        return analyze_notebook(data, filename, selection)
    return analyze_bytes(data, filename, selection, project=project)


# --- fixes -----------------------------------------------------------------------------------


def _boundary_rows(text: str) -> list[int]:
    return [row for row, line in enumerate(text.split("\n"), start=1) if line == BOUNDARY]


def edits_within_cells(text: str, diagnostic: Diagnostic) -> bool:
    """Whether every edit of the diagnostic's fix stays inside one cell of the virtual `text`:
    it neither starts on a boundary line nor runs across one. (An edit that ends at the start
    of a boundary line only reaches the end of the cell before it.)"""
    if diagnostic.fix is None:
        return True
    boundaries = set(_boundary_rows(text))
    for edit in diagnostic.fix.edits:
        start, end = edit.location, edit.end_location
        if start.row in boundaries:
            return False
        last = end.row - 1 if end.column == 1 and end.row > start.row else end.row
        if any(start.row <= row <= last for row in boundaries):
            return False
    return True


def split_cells(notebook: Notebook, text: str) -> list[str | None] | None:
    """The fixed virtual `text` split back into the analysed cells' code, magics restored, or
    None for a cell whose code did not change; None when the text no longer lines up with the
    cells."""
    chunks: list[list[str]] = [[]]
    for line in text.split("\n"):
        if line == BOUNDARY:
            chunks.append([])
        else:
            chunks[-1].append(line)
    if len(chunks) != len(notebook.cells):
        return None
    result: list[str | None] = []
    for number, (cell, chunk) in enumerate(zip(notebook.cells, chunks, strict=True)):
        if number < len(chunks) - 1:
            virtual = "".join(line + "\n" for line in chunk)
        else:
            virtual = "\n".join(chunk)
        if virtual in (cell.virtual, cell.virtual[:-1]):
            result.append(None)
            continue
        restored: list[str] = []
        magics = iter(cell.magics)
        for line in virtual.splitlines(keepends=True):
            if line.strip() == MAGIC_PLACEHOLDER:
                original = next(magics, None)
                if original is None:
                    return None
                restored.append(original if original.endswith("\n") else original + "\n")
            else:
                restored.append(line)
        if next(magics, None) is not None:
            return None
        new = "".join(restored)
        if not cell.text.endswith("\n") and new.endswith("\n"):
            new = new[:-1]
        result.append(new)
    return result


def _source_value(text: str, as_list: bool) -> str | list[str]:
    return text.splitlines(keepends=True) if as_list else text


@dataclass
class Layout:
    indent: int | None
    ensure_ascii: bool
    newline: str
    final_newline: bool
    bom: bool


def detect_layout(data: bytes) -> Layout:
    bom = data.startswith(b"\xef\xbb\xbf")
    text = data.decode("utf-8-sig")
    newline = "\r\n" if "\r\n" in text else "\n"
    indent: int | None = None
    match = re.search(r"^\{\r?\n( +)\S", text)
    if match:
        indent = len(match.group(1))
    ensure_ascii = text.isascii() and "\\u" in text
    final = text.endswith("\n")
    return Layout(indent, ensure_ascii, newline, final, bom)


def dump(data: dict[str, Any], layout: Layout) -> bytes:
    text = json.dumps(data, indent=layout.indent, ensure_ascii=layout.ensure_ascii)
    if layout.newline != "\n":
        text = text.replace("\n", layout.newline)
    if layout.final_newline:
        text += layout.newline
    return (b"\xef\xbb\xbf" if layout.bom else b"") + text.encode("utf-8")


@dataclass
class NotebookFix:
    data: bytes | None  # the new bytes; None when nothing changed or it cannot be written
    fixed_count: int
    remaining_diagnostics: list[Diagnostic]
    changed: dict[int, tuple[str, str]]  # cell number: (old code, new code)
    errors: list[str] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)
    problem: str | None = None  # why a change was not written


def fix_notebook(
    data: bytes,
    filename: str,
    selection: RuleSelection = DEFAULT_SELECTION,
    unsafe: bool = False,
    fix_text: Callable[..., Any] | None = None,
) -> NotebookFix:
    """Apply the applicable fixes to a notebook's code cells."""
    from torchlint import fixer

    run_fixes = fix_text or fixer.fix_text
    try:
        notebook = read(data)
    except NotebookError:
        analysis = analyze_notebook(data, filename, selection)
        return NotebookFix(None, 0, analysis.diagnostics, {})
    result = run_fixes(
        notebook.virtual, filename, selection, unsafe=unsafe, allow=edits_within_cells
    )
    errors, rejected = list(result.errors), list(result.rejected)
    if result.text == notebook.virtual:
        remaining = analyze_notebook(data, filename, selection).diagnostics
        return NotebookFix(None, 0, remaining, {}, errors, rejected)
    pieces = split_cells(notebook, result.text)
    if pieces is None:
        remaining = analyze_notebook(data, filename, selection).diagnostics
        problem = "the fixed code no longer lines up with the notebook's cells"
        return NotebookFix(None, 0, remaining, {}, errors, rejected, problem)
    layout = detect_layout(data)
    if dump(notebook.data, layout) != data:
        remaining = analyze_notebook(data, filename, selection).diagnostics
        problem = "its JSON layout cannot be reproduced, so writing it would change more"
        return NotebookFix(None, 0, remaining, {}, errors, rejected, problem)
    changed: dict[int, tuple[str, str]] = {}
    for cell, new in zip(notebook.cells, pieces, strict=True):
        if new is None or new == cell.text:
            continue
        changed[cell.index] = (cell.text, new)
        notebook.data["cells"][cell.index - 1]["source"] = _source_value(new, cell.as_list)
    if not changed:
        remaining = analyze_notebook(data, filename, selection).diagnostics
        return NotebookFix(None, 0, remaining, {}, errors, rejected)
    written = dump(notebook.data, layout)
    remaining = analyze_notebook(written, filename, selection).diagnostics
    return NotebookFix(written, result.fixed_count, remaining, changed, errors, rejected)
