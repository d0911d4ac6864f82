"""Notebook documents (LSP 3.17 `notebookDocument/*`): the code cells are analysed as one
program and each diagnostic is published on its cell's URI, with the line within the cell."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import pytest
import pytest_lsp
from lsp_helpers import (
    RecordingClient,
    apply_text_edits,
    initialize_params,
    server_config,
    uri_of,
    wait_until,
)
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


# --- everything a .py document has, in cells ---------------------------------------------------

AMP_LOOP = """\
for x, y in loader:
    optimizer.zero_grad()
    with torch.cuda.amp.autocast():
        loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
"""
SCALER = "scaler = torch.cuda.amp.GradScaler()\n"
UNSHUFFLED = SETUP.replace(
    "loader = [(torch.randn(8, 4), torch.randn(8, 2)) for _ in range(10)]",
    "from torch.utils.data import DataLoader, TensorDataset\n"
    "loader = DataLoader(TensorDataset(torch.randn(64, 4), torch.randn(64, 2)), batch_size=8)",
)


async def cell_actions(
    nb: Notebook, index: int, diagnostics: Sequence[types.Diagnostic], only: list[str] | None
) -> list[types.CodeAction]:
    result = await nb.client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=nb.cell_uris[index]),
            range=diagnostics[0].range,
            context=types.CodeActionContext(diagnostics=list(diagnostics), only=only),
        )
    )
    return [a for a in result or [] if isinstance(a, types.CodeAction)]


def cell_edits(edit: types.WorkspaceEdit | None) -> dict[str, list[types.TextEdit]]:
    assert edit is not None and edit.document_changes is not None
    found: dict[str, list[types.TextEdit]] = {}
    for change in edit.document_changes:
        assert isinstance(change, types.TextDocumentEdit)
        found.setdefault(change.text_document.uri, []).extend(
            e for e in change.edits if isinstance(e, types.TextEdit)
        )
    return found


async def test_messages_cite_the_lines_of_cells(notebook) -> None:
    nb = notebook([UNSHUFFLED, MARKDOWN, LOOP + STEP])
    nb.open()
    (unshuffled,) = await nb.diagnostics(0)
    assert unshuffled.code == "TL401"
    # The loop is on the first line of the third cell, not on line 9 of the joined program.
    assert "(cell 3, line 1)" in unshuffled.message
    nb.close()


async def test_quick_fixes_noqa_and_ignore_file_in_a_cell(notebook) -> None:
    nb = notebook([SETUP, MARKDOWN, AMP_LOOP])
    nb.open()
    (deprecated,) = [d for d in await nb.diagnostics(2) if d.code == "TL204"]
    actions = await cell_actions(nb, 2, [deprecated], [types.CodeActionKind.QuickFix])
    by_title = {a.title: a for a in actions}
    fix = next(a for title, a in by_title.items() if title.startswith("TL204:"))
    (edits,) = cell_edits(fix.edit).values()
    assert list(cell_edits(fix.edit)) == [nb.cell_uris[2]]
    assert edits[0].range.start.line == 2  # the `with` line of the cell
    noqa = cell_edits(by_title["Ignore TL204 on this line"].edit)
    assert list(noqa) == [nb.cell_uris[2]] and noqa[nb.cell_uris[2]][0].new_text.endswith("TL204")
    ignore = cell_edits(by_title["Ignore TL204 in this file"].edit)
    # At the top of the first code cell, where a reader of the notebook finds it.
    assert list(ignore) == [nb.cell_uris[0]]
    assert ignore[nb.cell_uris[0]][0].range.start == types.Position(line=0, character=0)
    nb.close()


async def test_fix_all_fixes_every_cell(notebook) -> None:
    nb = notebook([SETUP + SCALER, MARKDOWN, AMP_LOOP])
    nb.open()
    assert [d.code for d in await nb.diagnostics(0)] == ["TL204"]
    (deprecated,) = [d for d in await nb.diagnostics(2) if d.code == "TL204"]
    (fix_all,) = await cell_actions(nb, 2, [deprecated], ["source.fixAll.torchlint"])
    resolved = await nb.client.code_action_resolve_async(fix_all)
    edits = cell_edits(resolved.edit)
    assert set(edits) == {nb.cell_uris[0], nb.cell_uris[2]}
    first = apply_text_edits(nb.texts[0], edits[nb.cell_uris[0]])
    assert 'scaler = torch.amp.GradScaler("cuda")' in first
    loop = apply_text_edits(nb.texts[2], edits[nb.cell_uris[2]])
    assert 'with torch.amp.autocast("cuda"):' in loop
    nb.close()


async def test_lenses_above_the_training_loop_of_its_cell(notebook) -> None:
    nb = notebook([SETUP, MARKDOWN, LOOP + STEP])
    nb.open()
    await nb.diagnostics(2)

    async def lens_lines(index: int) -> list[int]:
        lenses = await nb.client.text_document_code_lens_async(
            types.CodeLensParams(
                text_document=types.TextDocumentIdentifier(uri=nb.cell_uris[index])
            )
        )
        return sorted({lens.range.start.line for lens in lenses or []})

    assert await lens_lines(2) == [0]
    assert await lens_lines(0) == []
    nb.close()


async def test_a_cell_that_does_not_parse_leaves_the_others_checked(notebook) -> None:
    nb = notebook([SETUP + SCALER, MARKDOWN, LOOP + STEP])
    nb.open()
    assert [d.code for d in await nb.diagnostics(0)] == ["TL204"]
    nb.insert(2, 5, "    if x > \n")  # half typed, at the end of the loop cell
    (syntax,) = await nb.diagnostics(2)
    assert syntax.code == "TL001" and syntax.range.start.line == 5
    published = nb.client.published(nb.cell_uris[0])
    assert [d.code for d in published[-1].diagnostics] == ["TL204"]
    nb.close()


async def test_related_locations_point_into_their_cells() -> None:
    """A finding of one cell whose related location is in another (no rule makes one yet: the
    mapping is checked with a diagnostic built here)."""
    from torchlint.diagnostics import Diagnostic, Location, Severity
    from torchlint.engine import Analysis
    from torchlint.lsp.notebooks import cell_diagnostics
    from torchlint.notebook import build_cells

    cells = [("cell:a", SETUP, 1), ("cell:b", LOOP, 3)]
    notebook = build_cells([text for _, text, _ in cells])
    loop_row = notebook.virtual.splitlines().index("    loss.backward()") + 1
    analysis = Analysis("nb.ipynb", notebook.virtual)
    analysis.diagnostics = [
        Diagnostic(
            code="TL101",
            name="missing-optimizer-step",
            message="m",
            severity=Severity.ERROR,
            filename="nb.ipynb",
            location=Location(loop_row, 5),
            end_location=Location(loop_row, 20),
            related=(("the optimizer", Location(5, 1)),),
        )
    ]
    result = cell_diagnostics(notebook, analysis, cells, "utf-16", {})
    (diagnostic,) = result["cell:b"]
    assert diagnostic.data["version"] == 3
    (related,) = diagnostic.related_information or []
    assert related.location.uri == "cell:a"
    assert related.location.range.start == types.Position(line=4, character=0)
    assert related.message == "the optimizer"


LABELS_SETUP = """\
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
labels = torch.randint(1, 5, (64,))
loader = DataLoader(TensorDataset(torch.randn(64, 8), labels), batch_size=16, shuffle=True)
model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 4))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
"""
LABELS_LOOP = """\
for epoch in range(100):
    for x, y in loader:
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
"""


async def test_a_lens_in_a_cell_runs_the_notebook_and_puts_the_findings_on_cells(notebook) -> None:
    """The runtime checks run the notebook's code cells as one script (the editor's text); a
    finding lands on its cell and line, and the notebook's folder is left as it was."""
    nb = notebook([LABELS_SETUP, MARKDOWN, LABELS_LOOP])
    folder = Path(nb.uri.removeprefix("file://")).parent
    before = sorted(folder.iterdir())
    nb.open()
    await nb.diagnostics(2)
    lenses = await nb.client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=nb.cell_uris[2]))
    )
    lens = next(x for x in lenses or [] if x.command and x.command.title == "Overfit one batch")
    assert lens.command is not None
    count = len(nb.client.published(nb.cell_uris[2]))
    result = await asyncio.wait_for(
        nb.client.workspace_execute_command_async(
            types.ExecuteCommandParams(
                command=lens.command.command, arguments=list(lens.command.arguments or [])
            )
        ),
        90,
    )
    assert result["script"] == str(folder / Path(nb.uri).name)  # the notebook, not the script
    assert "TLR301" in [d["code"] for d in result["diagnostics"]]
    await wait_until(
        lambda: len(nb.client.published(nb.cell_uris[2])) > count, message="the runtime findings"
    )
    shown = list(nb.client.published(nb.cell_uris[2])[-1].diagnostics)
    (labels,) = [d for d in shown if d.code == "TLR301"]
    assert labels.range.start.line == 3  # the cross_entropy line, within the loop's cell
    assert sorted(folder.iterdir()) == before  # nothing written next to the notebook
    nb.close()
