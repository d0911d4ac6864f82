"""Typing into a document, as an editor sends it: incremental changes, half-typed lines that do
not parse, and the code lenses while the text moves. A real server over stdio, one per module."""

from __future__ import annotations

import itertools
import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_lsp
from lsp_helpers import (
    HEADER,
    Document,
    RecordingClient,
    initialize_params,
    server_config,
    uri_of,
    wait_until,
)
from lsprotocol import types

from torchlint.engine import analyze_source

pytestmark = pytest.mark.asyncio(loop_scope="module")

# Blocks of their own: a deprecated GradScaler (TL204) at the top, and `train`, where the
# typing happens.
TWO_BLOCKS = (
    HEADER
    + """scaler = torch.cuda.amp.GradScaler()


def train(model, loader, optimizer):
    for x, y in loader:
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
"""
)
LATER = """

def later(model, loader, optimizer):
    for x, y in loader:
        model(x).sum().backward()
        optimizer.step()
"""
TRAIN_LOOP_ROW = TWO_BLOCKS.splitlines().index("    for x, y in loader:") + 1
STEP_ROW = TWO_BLOCKS.splitlines().index("        optimizer.step()") + 1

_names = itertools.count()


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("editing")


@pytest.fixture(scope="module")
def folders(workspace: Path) -> dict[str, Path]:
    found = {name: workspace / name for name in ("plain", "quiet")}
    for folder in found.values():
        folder.mkdir()
    return found


@pytest_lsp.fixture(config=server_config(), scope="module")
async def client(
    lsp_client: RecordingClient, folders: dict[str, Path]
) -> AsyncIterator[types.InitializeResult]:
    lsp_client.set_configuration(
        {"showSyntaxErrors": False}, section="torchlint", scope_uri=uri_of(folders["quiet"])
    )
    lsp_client.initialize_result = await lsp_client.initialize_session(
        initialize_params(list(folders.values()))
    )
    yield lsp_client.initialize_result
    await lsp_client.shutdown_session()


@pytest.fixture
def new_document(client: RecordingClient, folders: dict[str, Path]):
    def make(folder: str = "plain", suffix: str = ".py") -> Document:
        return Document(client, uri_of(folders[folder] / f"doc{next(_names)}{suffix}"))

    return make


def codes(diagnostics: list[types.Diagnostic]) -> list[str]:
    return sorted(str(d.code) for d in diagnostics)


def rows(diagnostics: list[types.Diagnostic], code: str) -> list[int]:
    return [d.range.start.line + 1 for d in diagnostics if d.code == code]


async def lens_rows(client: RecordingClient, doc: Document) -> list[int]:
    lenses = await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=doc.uri))
    )
    return sorted({lens.range.start.line + 1 for lens in lenses or []})


def expected(text: str) -> list[tuple[str, int, int]]:
    """What a check of the whole text reports: (code, 0-based line, column)."""
    return sorted(
        (d.code, d.location.row - 1, d.location.column - 1)
        for d in analyze_source(text, "doc.py").diagnostics
    )


def found(diagnostics: list[types.Diagnostic]) -> list[tuple[str, int, int]]:
    return sorted((str(d.code), d.range.start.line, d.range.start.character) for d in diagnostics)


async def test_the_server_asks_for_incremental_changes(client: RecordingClient) -> None:
    assert client.initialize_result is not None
    sync = client.initialize_result.capabilities.text_document_sync
    assert isinstance(sync, types.TextDocumentSyncOptions)
    assert sync.change == types.TextDocumentSyncKind.Incremental


async def test_typing_keystroke_by_keystroke(new_document) -> None:
    """A statement typed into the loop one character at a time, then deleted with Backspace:
    after every keystroke the diagnostics are those of the whole text."""
    doc = new_document()
    doc.open(TWO_BLOCKS)
    await doc.diagnostics()
    line = STEP_ROW  # 0-based: the line after `optimizer.step()`
    doc.edit((line, 0), (line, 0), "\n")
    typed = "        print(loss.item())"
    for index, char in enumerate(typed):
        doc.edit((line, index), (line, index), char)
    assert found(await doc.diagnostics()) == expected(doc.text)
    assert "TL301" in codes(await doc.diagnostics())  # `.item()` in the loop
    for index in range(len(typed), 0, -1):
        doc.edit((line, index - 1), (line, index), "")
    doc.edit((line - 1, len("        optimizer.step()")), (line, 0), "")
    assert doc.text == TWO_BLOCKS
    assert found(await doc.diagnostics()) == expected(TWO_BLOCKS)


async def test_changes_after_a_form_feed_land_where_the_editor_put_them(new_document) -> None:
    """A form feed is not a line break for the protocol (nor for an editor): a change on the
    line after one must not be applied a line off."""
    doc = new_document()
    text = "import torch\n\x0c\n" + TWO_BLOCKS.removeprefix("import torch\n")
    doc.open(text)
    await doc.diagnostics()
    lines = re.split(r"\r\n|\r|\n", text)  # the protocol's lines: the form feed is in one
    zero_grad = lines.index("        optimizer.zero_grad()")
    doc.edit((zero_grad, 8), (zero_grad, 8), "# ")  # comment the call out
    diagnostics = await doc.diagnostics()
    assert "TL102" in codes(diagnostics)
    assert re.split(r"\r\n|\r|\n", doc.text)[zero_grad] == "        # optimizer.zero_grad()"
    assert found(diagnostics) == expected(doc.text)


async def test_a_half_typed_line_keeps_the_other_findings_and_the_lenses(
    client: RecordingClient, new_document
) -> None:
    doc = new_document()
    doc.open(TWO_BLOCKS)
    before = await doc.diagnostics()
    assert codes(before) == ["TL204"]
    assert await lens_rows(client, doc) == [TRAIN_LOOP_ROW]
    # `if batch_idx > ` typed under the step: `train` does not parse any more.
    line = STEP_ROW
    doc.edit((line, 0), (line, 0), "        if batch_idx > \n")
    during = await doc.diagnostics()
    assert codes(during) == ["TL001", "TL204"]
    assert rows(during, "TL204") == rows(before, "TL204")  # the scaler's block is still checked
    (syntax,) = [d for d in during if d.code == "TL001"]
    assert syntax.range.start.line == line
    first = TWO_BLOCKS.splitlines().index("def train(model, loader, optimizer):") + 1
    assert f"lines {first - 2}-" in syntax.message  # the block, with the blank lines above
    assert "the rest of the file is checked" in syntax.message
    # The training loop's lenses stay where they were, though its block does not parse.
    assert await lens_rows(client, doc) == [TRAIN_LOOP_ROW]
    doc.edit((line, 0), (line + 1, 0), "")
    assert codes(await doc.diagnostics()) == ["TL204"]


async def test_an_unclosed_bracket_does_not_hide_the_blocks_after_it(new_document) -> None:
    doc = new_document()
    text = TWO_BLOCKS.replace("        loss.backward()\n", "        loss.backward(\n")  # in `train`
    text += LATER
    doc.open(text)
    diagnostics = await doc.diagnostics()
    assert codes(diagnostics) == ["TL001", "TL102", "TL204"]  # the others are still checked
    (syntax,) = [d for d in diagnostics if d.code == "TL001"]
    assert "was never closed" in syntax.message


async def test_show_syntax_errors_off(new_document) -> None:
    doc = new_document("quiet")
    doc.open(TWO_BLOCKS.replace("        optimizer.step()\n", "        optimizer.step(\n"))
    assert codes(await doc.diagnostics()) == ["TL204"]  # no TL001, the rest still checked


async def test_lenses_move_with_the_text_before_the_next_analysis(
    client: RecordingClient, new_document
) -> None:
    doc = new_document()
    doc.open(TWO_BLOCKS)
    await doc.diagnostics()
    assert await lens_rows(client, doc) == [TRAIN_LOOP_ROW]
    refreshes = client.lens_refreshes
    doc.edit((0, 0), (0, 0), "# a comment\n# and another\n")
    # Asked at once: the lint of this version may not have finished, the rows moved anyway.
    assert await lens_rows(client, doc) == [TRAIN_LOOP_ROW + 2]
    await doc.diagnostics()
    assert await lens_rows(client, doc) == [TRAIN_LOOP_ROW + 2]
    # A new training loop: the client is asked to fetch the lenses again.
    doc.edit(
        (len(doc.text.splitlines()), 0),
        (len(doc.text.splitlines()), 0),
        "\nfor x, y in loader:\n    model(x).sum().backward()\n    optimizer.step()\n",
    )
    await doc.diagnostics()
    await wait_until(lambda: client.lens_refreshes > refreshes, message="a codeLens refresh")
    assert len(await lens_rows(client, doc)) == 2
