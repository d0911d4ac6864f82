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
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from lsprotocol import types
from pygls.workspace import TextDocument
from pygls.workspace.position_codec import PositionCodec

from torchlint.engine import Analysis, analyze_source
from torchlint.lsp.convert import to_lsp_diagnostics
from torchlint.notebook import build_cells, map_diagnostic
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
    cells: dict[str, TextDocument] = field(default_factory=dict)  # by cell URI
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    generation: int = 0
    closed: bool = False
    published: dict[str, list[types.Diagnostic]] = field(default_factory=dict)
    logged: set[str] = field(default_factory=set)
    tasks: set[asyncio.Task[None]] = field(default_factory=set)

    def add_cell(self, item: types.TextDocumentItem) -> None:
        self.cells[item.uri] = TextDocument(
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

    def code_cells(self, notebook: types.NotebookDocument | None) -> list[TextDocument]:
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


def analyse_cells(
    cells: Sequence[tuple[str, str, int | None]],
    filename: str,
    selection: RuleSelection,
    encoding: str,
    severity_overrides: Mapping[str, str],
) -> tuple[dict[str, list[types.Diagnostic]], Analysis]:
    """Analyse code cells `(uri, text, version)` as one program: the LSP diagnostics of every
    cell (an empty list for a clean one), and the analysis (for its errors)."""
    notebook = build_cells([text for _, text, _ in cells])
    analysis = analyze_source(notebook.virtual, filename, selection)
    mapped = sorted(
        (map_diagnostic(notebook, d) for d in analysis.diagnostics), key=lambda d: d.sort_key
    )
    result: dict[str, list[types.Diagnostic]] = {}
    for number, (uri, text, version) in enumerate(cells, start=1):
        result[uri] = to_lsp_diagnostics(
            [d for d in mapped if d.cell == number],
            text,
            uri=uri,
            version=version,
            encoding=encoding,
            severity_overrides=severity_overrides,
        )
    return result, analysis
