"""A notebook run by a runtime check: its code cells written out as one script, and the run's
findings placed back on the cells."""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pygls.uris import to_fs_path, uri_scheme

from torchlint.diagnostics import Location
from torchlint.lsp.findings import Finding, path_key
from torchlint.lsp.notebooks import NotebookState
from torchlint.lsp.runtime_host import RuntimeHost
from torchlint.notebook import Notebook, build_cells, locate


@dataclass
class ExportedNotebook:
    """A notebook's code cells written out as one script for a runtime check (the same program
    the analysis sees: magics replaced, cells in order), with a first line that puts the
    notebook's folder on `sys.path`, as a kernel started there has it. The script lives in a
    folder of its own, removed after the run; the notebook's folder is left untouched."""

    script: Path
    notebook_path: Path
    notebook: Notebook
    uris: dict[int, str]  # cell number -> cell URI
    texts: dict[str, str]  # cell URI -> its text

    def place(self, finding: Finding) -> tuple[str, Finding] | None:
        """(cell URI, the finding on its line in the cell) for a line of the script."""
        if finding.key != path_key(self.script) or finding.line < 1:
            return None
        number, local = locate(self.notebook, Location(finding.line, 1))  # line 0: the header
        uri = self.uris.get(number)
        return (uri, Finding(finding.key, local.row - 1, finding.item)) if uri else None

    def as_notebook(self, result: dict[str, Any]) -> dict[str, Any]:
        """The envelope naming the notebook, not the script written for it."""
        shown = dict(result)
        shown["script"] = str(self.notebook_path)
        return shown

    def remove(self) -> None:
        shutil.rmtree(self.script.parent, ignore_errors=True)


def export_notebook(server: RuntimeHost, state: NotebookState) -> ExportedNotebook | None:
    """The script of an open notebook's code cells, or None (no code, or not a file)."""
    path_text = to_fs_path(state.uri) if uri_scheme(state.uri) == "file" else None
    document = server.workspace.get_notebook_document(notebook_uri=state.uri)
    cells = state.code_cells(document)
    if not path_text or not cells:
        return None
    notebook_path = Path(path_text)
    numbers = state.numbers(document)
    positions = [numbers.get(cell.uri, 0) for cell in cells]
    notebook = build_cells([cell.source for cell in cells], positions)
    folder = Path(tempfile.mkdtemp(prefix="torchlint-notebook-"))
    script = folder / f"{notebook_path.stem}.py"
    header = f"import sys; sys.path.insert(0, {str(notebook_path.parent)!r})\n"
    script.write_text(header + notebook.virtual, encoding="utf-8")
    return ExportedNotebook(
        script,
        notebook_path,
        notebook,
        dict(zip(positions, (cell.uri for cell in cells), strict=True)),
        {cell.uri: cell.source for cell in cells},
    )
