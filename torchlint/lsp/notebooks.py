"""Notebook documents (LSP 3.17 `notebookDocument/*` synchronisation).

A Jupyter notebook open in the editor arrives as one notebook document whose cells are text
documents with URIs of their own (`vscode-notebook-cell:...#...`). Its Python code cells are
joined, in order, into one program with `torchlint.notebook.build_cells` (the CLI's joining:
boundary lines, IPython magics replaced, cell magics left out), analysed like a `.py` document,
and each diagnostic is mapped back to its cell (`torchlint.notebook.map_diagnostic`) and
published on that cell's URI, with lines counted within the cell. Every code cell gets a
publication, empty when it has no findings, so stale ones clear.

The server keeps its own copy of each cell's text with incremental synchronisation: editors
send cell edits as ranged changes whatever text-document sync the server declared.

Everything a `.py` document has works in cells: hover, quick fixes and `noqa` actions (on the
cell's text), `ignore-file` (at the top of the first code cell), fix-all (every cell at once,
fixes whose edits stay within a cell, as `torchlint check --fix` does), and the code lenses
above the training loops. A message that cites a line names the cell's line (`cell 2, line 4`
for another cell), and related locations point into the cell they are in.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

from torchlint.analysis.source import ParseFailure, parse_source
from torchlint.diagnostics import Location
from torchlint.engine import Analysis, analyze_source
from torchlint.fixer import fix_text
from torchlint.lsp.actions import replacement_edit
from torchlint.lsp.convert import PositionMap, to_lsp_diagnostic
from torchlint.lsp.lenses import LensTargets, shifted, targets_of
from torchlint.lsp.partial import mask_broken_blocks, syntax_diagnostics
from torchlint.lsp.text import Document
from torchlint.notebook import (
    Notebook,
    build_cells,
    edits_within_cells,
    locate,
    map_diagnostic,
    split_cells,
)
from torchlint.rules.syntax_error import SyntaxErrorRule
from torchlint.selection import RuleSelection

NOTEBOOK_TYPE = "jupyter-notebook"
CELL_SCHEME = "vscode-notebook-cell"


def sync_options() -> types.NotebookDocumentSyncOptions:
    return types.NotebookDocumentSyncOptions(
        notebook_selector=[
            types.NotebookDocumentFilterWithNotebook(
                notebook=types.NotebookDocumentFilterNotebookType(notebook_type=NOTEBOOK_TYPE),
                cells=[types.NotebookCellLanguage(language="python")],
            )
        ],
        save=True,
    )


def is_cell_uri(uri: str) -> bool:
    return uri.startswith(CELL_SCHEME + ":")


@dataclass
class NotebookState:
    uri: str
    codec: PositionCodec
    cells: dict[str, Document] = field(default_factory=dict)  # by cell URI
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    generation: int = 0
    closed: bool = False
    published: dict[str, list[types.Diagnostic]] = field(default_factory=dict)
    lenses: dict[str, LensTargets] = field(default_factory=dict)  # by cell URI
    lenses_served: dict[str, LensTargets] = field(default_factory=dict)  # by cell URI
    logged: set[str] = field(default_factory=set)
    tasks: set[asyncio.Task[None]] = field(default_factory=set)

    def add_cell(self, item: types.TextDocumentItem) -> None:
        self.cells[item.uri] = Document(
            item.uri,
            source=item.text,
            version=item.version,
            language_id=item.language_id,
            sync_kind=types.TextDocumentSyncKind.Incremental,
            position_codec=self.codec,
        )

    def apply(self, change: types.NotebookDocumentChangeEvent) -> None:
        cells = change.cells
        if cells is None:
            return
        structure = cells.structure
        if structure is not None:
            for item in structure.did_open or []:
                self.add_cell(item)
            for identifier in structure.did_close or []:
                self.cells.pop(identifier.uri, None)
        for content in cells.text_content or []:
            document = self.cells.get(content.document.uri)
            if document is None:
                continue
            for event in content.changes:
                document.apply_change(event)
            document.version = content.document.version
            uri = content.document.uri
            if uri in self.lenses:
                self.lenses[uri] = shifted(self.lenses[uri], content.changes)

    def numbers(self, notebook: types.NotebookDocument | None) -> dict[str, int]:
        """Each cell's position among all the notebook's cells (1-based, markdown cells
        included: what the editor shows), by URI."""
        if notebook is None:
            return {}
        return {cell.document: index for index, cell in enumerate(notebook.cells, start=1)}

    def code_cells(self, notebook: types.NotebookDocument | None) -> list[Document]:
        """The Python code cells, in the notebook's order."""
        if notebook is None:
            return []
        result = []
        for cell in notebook.cells:
            document = self.cells.get(cell.document)
            if cell.kind != types.NotebookCellKind.Code or document is None:
                continue
            if document.language_id not in (None, "python"):
                continue
            result.append(document)
        return result


@dataclass
class CellResults:
    """One analysis of a notebook's code cells, by cell URI."""

    diagnostics: dict[str, list[types.Diagnostic]]
    lenses: dict[str, LensTargets]
    analysis: Analysis


def analyse_cells(
    cells: Sequence[tuple[str, str, int | None]],
    filename: str,
    selection: RuleSelection,
    encoding: str,
    severity_overrides: Mapping[str, str],
    show_syntax_errors: bool = True,
    numbers: Sequence[int] | None = None,
) -> CellResults:
    """Analyse code cells `(uri, text, version)` as one program: the LSP diagnostics of every
    cell (an empty list for a clean one), its lens targets, and the analysis (for its errors).
    Messages and related locations name cells and lines within them. A cell that does not parse
    gets its TL001 and the other cells are still checked (`torchlint.lsp.partial`). `numbers`:
    the cells' positions in the notebook (default 1, 2, ...), as messages name them."""
    notebook = build_cells([text for _, text, _ in cells], numbers)
    virtual = notebook.virtual
    parsed = parse_source(virtual)
    masked = (
        mask_broken_blocks(virtual, parse_source, parsed)
        if isinstance(parsed, ParseFailure)
        else None
    )
    if masked is not None:
        analysis = analyze_source(
            masked.text, filename, selection, parse=masked.parse, training_loops=True
        )
        analysis.diagnostics.extend(syntax_diagnostics(masked, virtual, filename, selection))
    else:
        analysis = analyze_source(
            virtual, filename, selection, parse=lambda _: parsed, training_loops=True
        )
    if not show_syntax_errors:
        analysis.diagnostics = [d for d in analysis.diagnostics if d.code != SyntaxErrorRule.code]
    result = cell_diagnostics(notebook, analysis, cells, encoding, severity_overrides)
    uris = {cell.index: uri for cell, (uri, _, _) in zip(notebook.cells, cells, strict=True)}
    lenses: dict[str, list[int]] = {}
    main: dict[str, int] = {}
    targets = targets_of(analysis)
    for row in targets.loops:
        number, local = locate(notebook, Location(row, 1))
        if number in uris:
            lenses.setdefault(uris[number], []).append(local.row)
    if targets.main is not None:
        number, local = locate(notebook, Location(targets.main, 1))
        if number in uris:
            main[uris[number]] = local.row
    by_cell = {
        uri: LensTargets(tuple(sorted(lenses.get(uri, ()))), main.get(uri))
        for uri in {*lenses, *main}
    }
    return CellResults(result, by_cell, analysis)


def cell_diagnostics(
    notebook: Notebook,
    analysis: Analysis,
    cells: Sequence[tuple[str, str, int | None]],
    encoding: str,
    severity_overrides: Mapping[str, str],
) -> dict[str, list[types.Diagnostic]]:
    """The analysis of the notebook's program as LSP diagnostics of each cell (`cells`: URI,
    text, version, in the notebook's order), related locations in the cells they are in."""
    numbered = {cell.index: given for cell, given in zip(notebook.cells, cells, strict=True)}
    positions = {number: PositionMap(text, encoding) for number, (_, text, _) in numbered.items()}
    uris = {number: uri for number, (uri, _, _) in numbered.items()}
    result: dict[str, list[types.Diagnostic]] = {uri: [] for uri, _, _ in cells}
    for found in sorted(analysis.diagnostics, key=lambda d: d.sort_key):
        mapped = map_diagnostic(notebook, found)
        number = mapped.cell or min(uris, default=0)
        uri = uris.get(number)
        if uri is None:
            continue
        version = numbered[number][2]
        diagnostic = to_lsp_diagnostic(
            replace(mapped, related=()),
            positions[number],
            uri=uri,
            version=version,
            severity_overrides=severity_overrides,
        )
        related = []
        for note, where in found.related:
            other, local = locate(notebook, where)
            if other in uris:
                place = positions[other].to_range(local, local)
                related.append(
                    types.DiagnosticRelatedInformation(
                        location=types.Location(uri=uris[other], range=place), message=note
                    )
                )
        diagnostic.related_information = related or None
        result[uri].append(diagnostic)
    return result


def fix_cells(
    cells: Sequence[tuple[str, str, int | None]],
    filename: str,
    selection: RuleSelection,
    encoding: str,
    numbers: Sequence[int] | None = None,
) -> dict[str, types.TextEdit]:
    """The edit of each code cell that applying every safe fix of the notebook changes (fixes
    whose edits stay within a cell, as `torchlint check --fix` applies them to a notebook)."""
    notebook = build_cells([text for _, text, _ in cells], numbers)
    fixed = fix_text(notebook.virtual, filename, selection, allow=edits_within_cells)
    if fixed.text == notebook.virtual:
        return {}
    pieces = split_cells(notebook, fixed.text)
    if pieces is None:
        return {}
    edits: dict[str, types.TextEdit] = {}
    for (uri, text, _), new in zip(cells, pieces, strict=True):
        if new is None:
            continue
        edit = replacement_edit(text, new, encoding)
        if edit is not None:
            edits[uri] = edit
    return edits
