"""The language server end to end: a real server subprocess driven by pytest-lsp's client.

One server serves the whole module (starting one costs seconds); every test uses its own
document URIs, so they do not see each other's work.
"""

from __future__ import annotations

import asyncio
import itertools
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

pytestmark = pytest.mark.asyncio(loop_scope="module")

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

FIXED = (
    HEADER
    + """
for x, y in loader:
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
"""
)
MISSING_ZERO_GRAD = FIXED.replace("    optimizer.zero_grad()\n", "")
ITEM = FIXED + "    print(loss.item())\n"

DEPRECATED_AND_ITEM = (
    HEADER
    + """scaler = torch.cuda.amp.GradScaler()

for x, y in loader:
    optimizer.zero_grad()
    with torch.cuda.amp.autocast():
        loss = nn.functional.mse_loss(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    print(loss.item())
"""
)

ACCUMULATED = (
    HEADER
    + """total = 0.0
for x, y in loader:
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    total += loss
"""
)

_names = itertools.count()


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("workspace")


@pytest_lsp.fixture(config=server_config(), scope="module")
async def client(lsp_client: RecordingClient, workspace: Path) -> AsyncIterator[None]:
    await lsp_client.initialize_session(initialize_params([workspace]))
    yield
    await lsp_client.shutdown_session()


@pytest.fixture
def new_document(client: RecordingClient, workspace: Path):
    def make(suffix: str = ".py") -> Document:
        return Document(client, uri_of(workspace / f"doc{next(_names)}{suffix}"))

    return make


def codes(diagnostics: list[types.Diagnostic]) -> list[str]:
    return [str(d.code) for d in diagnostics]


async def test_diagnostics_appear_and_disappear_after_the_fix(new_document) -> None:
    doc = new_document()
    doc.open(MISSING_ZERO_GRAD)
    (diagnostic,) = await doc.diagnostics()
    assert diagnostic.code == "TL102"
    assert diagnostic.source == "torchlint"
    assert diagnostic.severity == types.DiagnosticSeverity.Error
    assert diagnostic.code_description is not None
    assert diagnostic.code_description.href.endswith("rules/TL102-missing-zero-grad.md")
    # `loss.backward()` on line 10 (1-based), column 5
    assert diagnostic.range.start == types.Position(line=9, character=4)
    assert diagnostic.data["name"] == "missing-zero-grad"
    assert diagnostic.data["version"] == 1
    assert diagnostic.data["fix"] is None
    doc.change(FIXED)
    assert await doc.diagnostics() == []


async def test_utf16_columns_with_an_emoji(new_document) -> None:
    doc = new_document()
    doc.open(ITEM.replace("print(loss.item())", 'print("🔥 loss", loss.item())'))
    (diagnostic,) = await doc.diagnostics()
    assert diagnostic.code == "TL301"
    line = doc.text.splitlines()[diagnostic.range.start.line]
    start = line.index("loss.item()")  # code points
    assert diagnostic.range.start.character == start + 1  # the emoji is two UTF-16 units
    assert diagnostic.range.end.character == start + 1 + len("loss.item()")


async def test_safe_quick_fix_removes_the_finding(new_document) -> None:
    doc = new_document()
    doc.open(DEPRECATED_AND_ITEM)
    diagnostics = await doc.diagnostics()
    assert sorted(codes(diagnostics)) == ["TL204", "TL204", "TL301"]
    scaler = next(d for d in diagnostics if d.code == "TL204" and d.range.start.line == 6)
    actions = await doc.code_actions([scaler], only=[types.CodeActionKind.QuickFix])
    fix = next(a for a in actions if a.title.startswith("TL204:"))
    assert fix.kind == types.CodeActionKind.QuickFix
    assert fix.is_preferred is True
    assert "(unsafe)" not in fix.title
    fixed = doc.apply(fix.edit)
    assert 'torch.amp.GradScaler("cuda")' in fixed
    doc.change(fixed)
    after = await doc.diagnostics()
    assert not [d for d in after if d.code == "TL204" and d.range.start.line == 6]
    assert sorted(codes(after)) == ["TL204", "TL301"]


async def test_unsafe_quick_fix_is_labelled(new_document) -> None:
    doc = new_document()
    doc.open(ACCUMULATED)
    (diagnostic,) = await doc.diagnostics()
    assert diagnostic.code == "TL108"
    actions = await doc.code_actions([diagnostic])
    fix = next(a for a in actions if a.title.startswith("TL108:"))
    assert fix.title.endswith("(unsafe)")
    assert not fix.is_preferred
    doc.change(doc.apply(fix.edit))
    assert "total += loss.detach()" in doc.text
    # One voice: the fix keeps a device tensor, so no per-step `.item()` (TL301) appears.
    assert codes(await doc.diagnostics()) == []


async def test_stale_fix_is_not_offered(new_document) -> None:
    doc = new_document()
    doc.open(DEPRECATED_AND_ITEM)
    diagnostics = await doc.diagnostics()
    old = next(d for d in diagnostics if d.code == "TL204")
    doc.change("# a new first line\n" + DEPRECATED_AND_ITEM)
    await doc.diagnostics()
    actions = await doc.code_actions([old], only=[types.CodeActionKind.QuickFix])
    assert not [a for a in actions if a.title.startswith("TL204:")]
    assert [a.title for a in actions] == ["Ignore TL204 on this line", "Ignore TL204 in this file"]


async def test_ignore_on_this_line(new_document) -> None:
    doc = new_document()
    doc.open(ITEM)
    (diagnostic,) = await doc.diagnostics()
    actions = await doc.code_actions([diagnostic])
    noqa = next(a for a in actions if a.title == "Ignore TL301 on this line")
    text = doc.apply(noqa.edit)
    assert "    print(loss.item())  # noqa: TL301\n" in text
    doc.change(text)
    assert await doc.diagnostics() == []


async def test_ignore_on_this_line_extends_an_existing_noqa(new_document) -> None:
    doc = new_document()
    doc.open(ITEM.replace("print(loss.item())", "print(loss.item())  # noqa: E501"))
    (diagnostic,) = await doc.diagnostics()
    actions = await doc.code_actions([diagnostic])
    noqa = next(a for a in actions if a.title == "Ignore TL301 on this line")
    text = doc.apply(noqa.edit)
    assert "print(loss.item())  # noqa: E501, TL301\n" in text
    doc.change(text)
    assert await doc.diagnostics() == []


async def test_ignore_in_this_file(new_document) -> None:
    doc = new_document()
    doc.open("#!/usr/bin/env python\n# -*- coding: utf-8 -*-\n" + ITEM)
    (diagnostic,) = await doc.diagnostics()
    actions = await doc.code_actions([diagnostic])
    ignore = next(a for a in actions if a.title == "Ignore TL301 in this file")
    text = doc.apply(ignore.edit)
    assert text.startswith(
        "#!/usr/bin/env python\n# -*- coding: utf-8 -*-\n# torchlint: ignore-file[TL301]\nimport"
    )
    doc.change(text)
    assert await doc.diagnostics() == []


async def test_fix_all_applies_every_safe_fix(new_document) -> None:
    doc = new_document()
    doc.open(DEPRECATED_AND_ITEM)
    diagnostics = await doc.diagnostics()
    actions = await doc.code_actions(diagnostics, only=[types.CodeActionKind.SourceFixAll])
    (fix_all,) = actions
    assert fix_all.kind == "source.fixAll.torchlint"
    # VS Code resolves the edit when the action is chosen: none is computed per request.
    assert fix_all.edit is None
    resolved = await doc.client.code_action_resolve_async(fix_all)
    text = doc.apply(resolved.edit)
    assert "torch.cuda.amp" not in text
    doc.change(text)
    assert codes(await doc.diagnostics()) == ["TL301"]  # no fix: left alone
    # An action resolved after the document changed has no edit (the client asks again).
    doc.change(DEPRECATED_AND_ITEM)
    await doc.diagnostics()
    stale = await doc.client.code_action_resolve_async(fix_all)
    assert stale.edit is not None and stale.edit.document_changes is not None
    assert all(
        isinstance(change, types.TextDocumentEdit) and not change.edits
        for change in stale.edit.document_changes
    )


async def test_only_filters_the_actions(new_document) -> None:
    doc = new_document()
    doc.open(DEPRECATED_AND_ITEM)
    diagnostics = await doc.diagnostics()
    quick = await doc.code_actions(diagnostics, only=[types.CodeActionKind.QuickFix])
    assert quick and all(a.kind == types.CodeActionKind.QuickFix for a in quick)
    titles = [a.title for a in quick]
    assert titles.count("Ignore TL204 in this file") == 1  # once per code
    assert "Ignore TL301 on this line" in titles
    source = await doc.code_actions(diagnostics, only=[types.CodeActionKind.Source])
    assert [a.kind for a in source] == ["source.fixAll.torchlint"]
    assert await doc.code_actions(diagnostics, only=[types.CodeActionKind.Refactor]) == []
    unfiltered = await doc.code_actions(diagnostics)
    assert {a.kind for a in unfiltered} == {"quickfix", "source.fixAll.torchlint"}


async def test_hover_shows_the_rule_documentation(client: RecordingClient, new_document) -> None:
    doc = new_document()
    doc.open(ITEM)
    (diagnostic,) = await doc.diagnostics()
    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=doc.uri),
            position=types.Position(
                line=diagnostic.range.start.line, character=diagnostic.range.start.character + 3
            ),
        )
    )
    assert hover is not None
    assert isinstance(hover.contents, types.MarkupContent)
    assert hover.contents.kind == types.MarkupKind.Markdown
    value = hover.contents.value
    assert value.startswith("### TL301 · `item-in-hot-loop`")
    for section in ("#### What it does", "#### Why is this bad?", "#### Use instead"):
        assert section in value
    assert hover.range == diagnostic.range
    elsewhere = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=doc.uri),
            position=types.Position(line=0, character=3),
        )
    )
    assert elsewhere is None


async def test_code_lenses_above_training_loops(client: RecordingClient, new_document) -> None:
    doc = new_document()
    text = (EXAMPLES / "grad_accumulation.py").read_text(encoding="utf-8")
    doc.open(text)
    await doc.diagnostics()
    lenses = await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=doc.uri))
    )
    assert lenses is not None
    lines = text.splitlines()
    loop_line = next(i for i, line in enumerate(lines) if "for step, (inputs, labels)" in line)
    main_line = lines.index('if __name__ == "__main__":')
    rows = sorted({lens.range.start.line for lens in lenses})
    assert rows == [loop_line, main_line]
    for row in rows:
        group = [lens for lens in lenses if lens.range.start.line == row]
        assert [lens.command.title for lens in group if lens.command] == [
            "Overfit one batch",
            "Gradient scan",
            "Profile step",
        ]
        assert [lens.command.command for lens in group if lens.command] == [
            "torchlint.runtime.overfit",
            "torchlint.runtime.grads",
            "torchlint.runtime.child.profile",
        ]
        assert [list(lens.command.arguments or ()) for lens in group if lens.command] == [
            [doc.uri, row]
        ] * 3


async def test_no_code_lens_without_a_training_loop(client: RecordingClient, new_document) -> None:
    doc = new_document()
    doc.open('def main():\n    return 1\n\n\nif __name__ == "__main__":\n    main()\n')
    assert await doc.diagnostics() == []
    lenses = await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=doc.uri))
    )
    assert not lenses


@pytest.mark.parametrize("command", ["torchlint.runtime.overfit", "torchlint.runtime.grads"])
async def test_runtime_checks_need_a_file_on_disk(client: RecordingClient, command: str) -> None:
    """The checks themselves run (tests/lsp/test_lsp_runtime.py); a file that is not on disk
    is refused, with a message."""
    shown = len(client.messages)
    result = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=command, arguments=["file:///x/train.py", 12])
    )
    assert result["status"] == "refused" and result["reason"] == "not-a-file"
    assert (result["uri"], result["line"]) == ("file:///x/train.py", 12)
    await wait_until(lambda: len(client.messages) > shown, message="window/showMessage")
    shown_message = client.messages[-1]
    assert shown_message.type == types.MessageType.Warning
    assert "does not exist on disk: save it first" in shown_message.message
    assert result["message"] == shown_message.message


async def test_debug_information(client: RecordingClient, new_document, workspace: Path) -> None:
    (workspace / "pyproject.toml").write_text(
        '[tool.torchlint]\nignore = ["TL303"]\n', encoding="utf-8"
    )
    try:
        doc = new_document()
        logged = len(client.log_messages)
        info = await client.workspace_execute_command_async(
            types.ExecuteCommandParams(
                command="torchlint.showDebugInformation", arguments=[doc.uri]
            )
        )
    finally:
        (workspace / "pyproject.toml").unlink()
    assert info["version"]
    assert info["python"]
    assert info["pythonVersion"].count(".") == 2
    assert info["configFile"] == str(workspace / "pyproject.toml")
    assert "TL301" in info["rulesEnabled"] and "TL303" not in info["rulesEnabled"]
    assert info["parser"] in ("incremental", "parse_source")
    await wait_until(
        lambda: any(
            "torchlint debug information" in m.message for m in client.log_messages[logged:]
        ),
        message="the debug information in the log",
    )
    general = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="torchlint.showDebugInformation")
    )
    assert general["document"] is None and general["rulesEnabled"]


async def test_a_burst_of_edits_ends_with_the_last_version(new_document) -> None:
    doc = new_document()
    # A file that takes a while to analyse; edits arrive faster: those that come while an
    # analysis runs wait for it, and only the newest of them is analysed next.
    padding = "".join(TRAIN_BLOCK.format(n=n) for n in range(40))
    doc.open(FIXED + padding)
    await doc.diagnostics()
    for index in range(20):
        body = MISSING_ZERO_GRAD if index % 2 == 0 else FIXED
        doc.change(body + padding + f"# edit {index}\n")
        await asyncio.sleep(0.002)
    last = doc.version
    assert last == 21
    final = await doc.diagnostics()  # edit 19: the fixed loop
    assert codes(final) == ["TL301"] * 40  # the padding's, nothing of the loop
    await asyncio.sleep(0.3)  # nothing older may arrive later
    versions = [p.version for p in doc.publications()]
    assert versions == sorted(versions)
    assert versions[-1] == last
    assert len(versions) < 10  # the burst was coalesced


TRAIN_BLOCK = """
def train_{n}(model, loader, optimizer):
    for x, y in loader:
        optimizer.zero_grad()
        loss = model(x).sum()
        loss.backward()
        optimizer.step()
        print(loss.item())
"""


async def test_an_edit_during_an_analysis_drops_its_result(new_document) -> None:
    # v2 takes a while to analyse; v3 arrives meanwhile. Whether v2's analysis had started or
    # not, only v3 may be published after v1.
    doc = new_document()
    doc.open("import torch\n")
    assert await doc.diagnostics() == []
    big = "import torch\n" + "".join(TRAIN_BLOCK.format(n=n) for n in range(700))
    doc.change(big)
    await asyncio.sleep(0.25)  # the debounce is over: v2 is being analysed
    doc.change(big + "# v3\n")
    assert len(await doc.diagnostics(timeout=60)) == 700
    await asyncio.sleep(0.2)
    assert [p.version for p in doc.publications()] == [1, 3]


async def test_a_half_typed_file_gives_one_syntax_error(new_document) -> None:
    doc = new_document()
    doc.open(FIXED)
    await doc.diagnostics()
    doc.change(FIXED.replace("loss.backward()", "loss.backward(\n    for z in ("))
    (diagnostic,) = await doc.diagnostics()
    assert diagnostic.code == "TL001"
    assert diagnostic.severity == types.DiagnosticSeverity.Error
    doc.change(FIXED)
    assert await doc.diagnostics() == []


async def test_a_5000_line_file(new_document) -> None:
    doc = new_document()
    text = "import torch\n" + "".join(TRAIN_BLOCK.format(n=n) for n in range(625))
    assert text.count("\n") >= 5000
    doc.open(text)
    diagnostics = await doc.diagnostics(timeout=60)
    assert codes(diagnostics) == ["TL301"] * 625


async def test_binary_text_does_not_kill_the_server(new_document) -> None:
    doc = new_document()
    doc.open("\x00\x01\x02PK\x03\x04\ufffd\ufffd\x00 binary \ud800 junk\n\x7fELF")
    diagnostics = await doc.diagnostics()
    assert codes(diagnostics) == ["TL001", "TL001"]  # one per line: each a broken block
    other = new_document()
    other.open(MISSING_ZERO_GRAD)
    assert codes(await other.diagnostics()) == ["TL102"]


async def test_not_python_is_not_linted(new_document) -> None:
    text_doc = new_document(".txt")
    text_doc.open(MISSING_ZERO_GRAD, language_id="plaintext")
    python_doc = new_document(".pyi")
    python_doc.open(MISSING_ZERO_GRAD, language_id="")
    assert codes(await python_doc.diagnostics()) == ["TL102"]
    await asyncio.sleep(0.2)
    assert text_doc.publications() == []


async def test_did_close_clears_the_diagnostics(new_document) -> None:
    doc = new_document()
    doc.open(MISSING_ZERO_GRAD)
    assert codes(await doc.diagnostics()) == ["TL102"]
    doc.close()
    await wait_until(
        lambda: not doc.publications()[-1].diagnostics, message="the clearing publication"
    )
    assert list(doc.publications()[-1].diagnostics) == []
    # reopening lints again
    doc.open(MISSING_ZERO_GRAD)
    await wait_until(lambda: len(doc.publications()) == 3, message="the reopened document")
    assert codes(list(doc.publications()[-1].diagnostics)) == ["TL102"]
