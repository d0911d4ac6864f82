"""Notebook documents (LSP 3.17 `notebookDocument/*`): the code cells are analysed as one
program and each diagnostic is published on its cell's URI, with the line within the cell."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import pytest
import pytest_lsp
from lsp_helpers import RecordingClient, initialize_params, server_config, uri_of, wait_until
from lsprotocol import types

pytestmark = pytest.mark.asyncio(loop_scope="module")

SETUP = """\
import torch
from torch import nn

model = nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = [(torch.randn(8, 4), torch.randn(8, 2)) for _ in range(10)]
"""
MARKDOWN = "# Training\nThe loop below trains the model.\n"
# No `optimizer.step()`: TL101 on `loss.backward()`, line 4 of the cell.
LOOP = """\
for x, y in loader:
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
"""
STEP = "    optimizer.step()\n"

_names = itertools.count()


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("notebooks")


@pytest_lsp.fixture(config=server_config(), scope="module")
async def client(lsp_client: RecordingClient, workspace: Path) -> AsyncIterator[None]:
    params = initialize_params([workspace])
    params.capabilities.notebook_document = types.NotebookDocumentClientCapabilities(
        synchronization=types.NotebookDocumentSyncClientCapabilities()
    )
    result = await lsp_client.initialize_session(params)
    sync = result.capabilities.notebook_document_sync
    assert isinstance(sync, types.NotebookDocumentSyncOptions)
    (selector,) = sync.notebook_selector
    assert isinstance(selector, types.NotebookDocumentFilterWithNotebook)
    assert isinstance(selector.notebook, types.NotebookDocumentFilterNotebookType)
    assert selector.notebook.notebook_type == "jupyter-notebook"
    assert [cell.language for cell in selector.cells or []] == ["python"]
    yield
    await lsp_client.shutdown_session()


class Notebook:
    """A notebook the test client opens and edits, with VS Code's cell URIs."""

    def __init__(self, client: RecordingClient, workspace: Path, cells: Sequence[str]) -> None:
        self.client = client
        self.uri = uri_of(workspace / f"nb{next(_names)}.ipynb")
        path = self.uri.removeprefix("file://")
        self.cell_uris = [f"vscode-notebook-cell:{path}#W{i}sZmlsZQ==" for i in range(len(cells))]
        self.texts = list(cells)
        self.versions = [1] * len(cells)
        self.version = 1

    def kind(self, index: int) -> types.NotebookCellKind:
        return types.NotebookCellKind.Markup if index == 1 else types.NotebookCellKind.Code

    def open(self) -> None:
        self.client.notebook_document_did_open(
            types.DidOpenNotebookDocumentParams(
                notebook_document=types.NotebookDocument(
                    uri=self.uri,
                    notebook_type="jupyter-notebook",
                    version=self.version,
                    cells=[
                        types.NotebookCell(kind=self.kind(i), document=uri)
                        for i, uri in enumerate(self.cell_uris)
                    ],
                ),
                cell_text_documents=[
                    types.TextDocumentItem(
                        uri=uri,
                        language_id="markdown" if i == 1 else "python",
                        version=1,
                        text=text,
                    )
                    for i, (uri, text) in enumerate(zip(self.cell_uris, self.texts, strict=True))
                ],
            )
        )

    def insert(self, index: int, line: int, text: str) -> None:
        """Insert `text` at the start of `line` of cell `index`, as a ranged (incremental)
        change, the way VS Code sends cell edits."""
        self.version += 1
        self.versions[index] += 1
        lines = self.texts[index].splitlines(keepends=True)
        lines.insert(line, text)
        self.texts[index] = "".join(lines)
        at = types.Position(line=line, character=0)
        self.client.notebook_document_did_change(
            types.DidChangeNotebookDocumentParams(
                notebook_document=types.VersionedNotebookDocumentIdentifier(
                    version=self.version, uri=self.uri
                ),
                change=types.NotebookDocumentChangeEvent(
                    cells=types.NotebookDocumentCellChanges(
                        text_content=[
                            types.NotebookDocumentCellContentChanges(
                                document=types.VersionedTextDocumentIdentifier(
                                    uri=self.cell_uris[index], version=self.versions[index]
                                ),
                                changes=[
                                    types.TextDocumentContentChangePartial(
                                        range=types.Range(start=at, end=at), text=text
                                    )
                                ],
                            )
                        ]
                    )
                ),
            )
        )

    def close(self) -> None:
        self.client.notebook_document_did_close(
            types.DidCloseNotebookDocumentParams(
                notebook_document=types.NotebookDocumentIdentifier(uri=self.uri),
                cell_text_documents=[
                    types.TextDocumentIdentifier(uri=uri) for uri in self.cell_uris
                ],
            )
        )

    async def diagnostics(self, index: int) -> list[types.Diagnostic]:
        """The diagnostics published for the current version of cell `index`."""
        uri, version = self.cell_uris[index], self.versions[index]

        def found() -> types.PublishDiagnosticsParams | None:
            matching = [p for p in self.client.published(uri) if p.version == version]
            return matching[-1] if matching else None

        params = await wait_until(found, message=f"diagnostics of {uri} v{version}")
        return list(params.diagnostics)


@pytest.fixture
def notebook(client: RecordingClient, workspace: Path):
    def make(cells: Sequence[str]) -> Notebook:
        return Notebook(client, workspace, cells)

    return make


async def test_a_loop_split_across_cells_is_reported_on_its_cell(notebook) -> None:
    nb = notebook([SETUP, MARKDOWN, LOOP])
    nb.open()
    assert await nb.diagnostics(0) == []
    (diagnostic,) = await nb.diagnostics(2)
    assert diagnostic.code == "TL101"
    # `loss.backward()`: line 4 of the third cell, column 5
    assert diagnostic.range.start == types.Position(line=3, character=4)
    assert diagnostic.range.end == types.Position(line=3, character=19)
    # the markdown cell is neither analysed nor published
    assert nb.client.published(nb.cell_uris[1]) == []

    hover = await nb.client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=nb.cell_uris[2]),
            position=types.Position(line=3, character=6),
        )
    )
    assert hover is not None and "TL101" in str(hover.contents)

    nb.insert(2, 4, STEP)  # the fix, as an incremental edit at the end of the cell
    assert await nb.diagnostics(2) == []

    nb.close()
    await wait_until(
        lambda: nb.client.published(nb.cell_uris[2])[-1].version is None,
        message="the cell cleared on close",
    )
    assert list(nb.client.published(nb.cell_uris[2])[-1].diagnostics) == []


async def test_a_clean_notebook_publishes_empty_lists_for_every_code_cell(notebook) -> None:
    # A near miss: the step is in the loop, in a cell of its own it would be flagged.
    nb = notebook([SETUP, MARKDOWN, LOOP + STEP])
    nb.open()
    assert await nb.diagnostics(0) == []
    assert await nb.diagnostics(2) == []
    nb.close()


async def test_cell_text_documents_are_not_linted_on_their_own(
    notebook, client: RecordingClient, workspace: Path
) -> None:
    nb = notebook([SETUP, MARKDOWN, LOOP])
    # A cell sent as a plain text document (a client without notebook sync for it): on its
    # own the loop would be flagged (TL101), but a cell is only linted with its notebook.
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=nb.cell_uris[2], language_id="python", version=1, text=LOOP
            )
        )
    )
    # A later plain file is linted; by then the cell would have been too.
    sentinel = uri_of(workspace / f"sentinel{next(_names)}.py")
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=sentinel, language_id="python", version=1, text=SETUP + LOOP
            )
        )
    )
    await wait_until(lambda: client.published(sentinel), message="the sentinel's diagnostics")
    await asyncio.sleep(0.2)
    assert client.published(nb.cell_uris[2]) == []
