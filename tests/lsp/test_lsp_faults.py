"""Fault injection into a running server: a rule that raises (`TORCHLINT_TEST_CRASH_RULE`), a
project configuration that turns invalid mid-session, a workspace folder removed (from the
workspace and from disk), and a runtime check on a script that crashes at import. After each the
server logs or shows what happened and keeps serving: diagnostics, hovers, code lenses.

One server for the module (TL102 crashes on every file it checks); every test has its own
folder."""

from __future__ import annotations

import asyncio
import shutil
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsp_helpers import (
    AMP_SOURCE,
    Document,
    RecordingClient,
    initialize_params,
    server_config,
    uri_of,
    wait_until,
)
from lsprotocol import types

pytestmark = pytest.mark.asyncio(loop_scope="module")

CRASHING = "TL102"  # missing-zero-grad: runs on every training loop; AMP_SOURCE never hits it
NAMES = ("crash", "config", "keep", "gone", "runtime")
VALID = '[tool.torchlint]\nselect = ["TL204"]\n'
BROKEN_TOML = '[tool.torchlint]\nselect = ["TL204"\n'
BROKEN_VALUE = '[tool.torchlint]\nselect = "TL204"\n'
IMPORT_CRASH = (
    "import torch\n"
    "import torchlint_no_such_module_for_the_fault_test  # line: import\n"
    "for x in torch.utils.data.DataLoader(range(4)):\n"
    "    pass\n"
)


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("faults")
    paths = {name: root / name for name in NAMES}
    for path in paths.values():
        path.mkdir()
    return paths


@pytest_lsp.fixture(
    config=server_config(TORCHLINT_TEST_CRASH_RULE=CRASHING, OMP_NUM_THREADS="1"),
    scope="module",
)
async def client(lsp_client: RecordingClient, folders: dict[str, Path]) -> AsyncIterator[None]:
    lsp_client.set_configuration(
        {"runtime": {"timeoutSeconds": 60}},
        section="torchlint",
        scope_uri=uri_of(folders["runtime"]),
    )
    await lsp_client.initialize_session(initialize_params(list(folders.values())))
    yield
    await lsp_client.shutdown_session()


def codes(diagnostics: list[types.Diagnostic]) -> list[str]:
    return sorted(str(d.code) for d in diagnostics)


async def hover(client: RecordingClient, doc: Document, line: int, character: int) -> Any:
    return await asyncio.wait_for(
        client.text_document_hover_async(
            types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=doc.uri),
                position=types.Position(line, character),
            )
        ),
        5,
    )


async def still_serving(client: RecordingClient, folder: Path, name: str) -> None:
    """A fresh document elsewhere gets its diagnostics, a hover and its code lenses."""
    doc = Document(client, uri_of(folder / name))
    doc.open(AMP_SOURCE)
    assert codes(await doc.diagnostics(timeout=10)) == ["TL204", "TL301"]
    answer = await hover(client, doc, 5, 12)  # `torch.cuda.amp.GradScaler()`
    assert answer is not None and "TL204" in str(answer.contents)
    lenses = await asyncio.wait_for(
        client.text_document_code_lens_async(
            types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=doc.uri))
        ),
        5,
    )
    assert lenses


def logged(client: RecordingClient, *needles: str, since: int = 0) -> list[str]:
    return [
        m.message
        for m in client.log_messages[since:]
        if all(needle in m.message for needle in needles)
    ]


async def test_a_crashing_rule_is_logged_once_per_document_and_message(
    client: RecordingClient, folders: dict[str, Path]
) -> None:
    missing_zero_grad = AMP_SOURCE.replace("    optimizer.zero_grad()\n", "")
    doc = Document(client, uri_of(folders["crash"] / "train.py"))
    doc.open(missing_zero_grad)
    assert codes(await doc.diagnostics()) == ["TL204", "TL301"]  # no TL102: it crashed
    for n in range(5):  # edits that keep crashing the rule
        doc.change(missing_zero_grad + f"# edit {n}\n")
        await doc.diagnostics()
    errors = logged(client, f"rule {CRASHING} failed", "crash/train.py")
    assert len(errors) == 1, errors
    assert "crashed on purpose" in errors[0]
    await still_serving(client, folders["crash"], "other.py")


async def test_a_project_configuration_that_turns_invalid(
    client: RecordingClient, folders: dict[str, Path]
) -> None:
    folder = folders["config"]
    pyproject = folder / "pyproject.toml"
    pyproject.write_text(VALID, encoding="utf-8")
    doc = Document(client, uri_of(folder / "train.py"))
    doc.open(AMP_SOURCE)
    assert codes(await doc.diagnostics()) == ["TL204"]

    for broken in (BROKEN_TOML, BROKEN_VALUE):
        shown = len(client.messages)
        pyproject.write_text(broken, encoding="utf-8")
        doc.save()  # the configuration is read afresh on every lint
        # Falls back to the editor's settings (every rule) and says why, once.
        assert codes(await doc.diagnostics(count=len(doc.publications()) + 1)) == [
            "TL204",
            "TL301",
        ]
        message = await wait_until(
            lambda shown=shown: [
                m
                for m in client.messages[shown:]
                if "linting with the editor settings only" in m.message
            ],
            message="the configuration error shown",
        )
        assert message[0].type == types.MessageType.Warning
        assert "pyproject.toml" in message[0].message
        await still_serving(client, folders["keep"], f"during_{len(client.messages)}.py")

    pyproject.write_text(VALID, encoding="utf-8")
    doc.change(AMP_SOURCE + "\n")
    assert codes(await doc.diagnostics()) == ["TL204"]  # repaired, honoured again


async def test_a_workspace_folder_removed(
    client: RecordingClient, folders: dict[str, Path]
) -> None:
    gone = folders["gone"]
    doc = Document(client, uri_of(gone / "train.py"))
    doc.open(AMP_SOURCE)
    assert codes(await doc.diagnostics()) == ["TL204", "TL301"]
    pulls = client.configuration_requests
    shutil.rmtree(gone)
    client.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(
            event=types.WorkspaceFoldersChangeEvent(
                added=[],
                removed=[types.WorkspaceFolder(uri=uri_of(gone), name=gone.name)],
            )
        )
    )
    await wait_until(lambda: client.configuration_requests > pulls, message="a settings pull")
    info = await asyncio.wait_for(
        client.workspace_execute_command_async(
            types.ExecuteCommandParams(
                command="torchlint.showDebugInformation", arguments=[doc.uri]
            )
        ),
        10,
    )
    assert uri_of(gone) not in info["workspaceFolders"]
    assert uri_of(folders["keep"]) in info["workspaceFolders"]
    # The document still open in the vanished folder is still linted and hovered.
    doc.change(AMP_SOURCE + "# edited after its folder went away\n")
    assert codes(await doc.diagnostics()) == ["TL204", "TL301"]
    answer = await hover(client, doc, 5, 12)
    assert answer is not None and "TL204" in str(answer.contents)
    # A runtime check of a file that is no longer on disk is answered, not crashed on.
    result = await asyncio.wait_for(
        client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="torchlint.runtime.overfit", arguments=[doc.uri, 0])
        ),
        60,
    )
    assert (result["status"], result["reason"]) == ("refused", "not-a-file"), result
    await still_serving(client, folders["keep"], "after_removal.py")


def processes_mentioning(needle: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and needle in (entry / "cmdline").read_text("utf-8", "replace"):
                found.append(int(entry.name))
        except OSError:
            continue
    return found


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
async def test_a_runtime_check_of_a_script_crashing_at_import(
    client: RecordingClient, folders: dict[str, Path]
) -> None:
    path = folders["runtime"] / "import_crash_lsp.py"
    path.write_text(IMPORT_CRASH, encoding="utf-8")
    doc = Document(client, uri_of(path))
    doc.open(IMPORT_CRASH)
    await doc.diagnostics()
    shown = len(client.messages)
    result = await asyncio.wait_for(
        client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="torchlint.runtime.overfit", arguments=[doc.uri, 2])
        ),
        60,
    )
    assert result["status"] == "error", result
    assert "torchlint_no_such_module_for_the_fault_test" in result["error"]["message"]
    assert processes_mentioning(str(path)) == []
    await wait_until(lambda: len(client.messages) > shown, message="window/showMessage")
    assert client.messages[-1].type == types.MessageType.Error
    await still_serving(client, folders["keep"], "after_runtime.py")
