"""Start-up and failure: the server started as `torchlint lsp`, a client slow to answer
`workspace/configuration`, and a rule that crashes (`TORCHLINT_TEST_CRASH_RULE`, a hook the
server honours for tests only)."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path

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


CONFIGURATION_DELAY = 1.0


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("startup")


@pytest_lsp.fixture(
    config=server_config(
        [sys.executable, "-m", "torchlint", "lsp"], TORCHLINT_TEST_CRASH_RULE="TL301"
    ),
    scope="module",
)
async def client(lsp_client: RecordingClient, workspace: Path) -> AsyncIterator[None]:
    lsp_client.configuration_delay = CONFIGURATION_DELAY
    lsp_client.set_configuration({"severity": {"TL204": "error"}}, section="torchlint")
    await lsp_client.initialize_session(initialize_params([workspace]))
    yield
    await lsp_client.shutdown_session()


async def test_first_publication_already_honours_the_settings(
    client: RecordingClient, workspace: Path
) -> None:
    # Opened at once, while the client takes a second to answer workspace/configuration.
    doc = Document(client, uri_of(workspace / "first.py"))
    doc.open(AMP_SOURCE)
    await wait_until(lambda: doc.publications(), message="the first publication")
    assert client.configuration_requests >= 1
    (first,) = doc.publications()
    assert first.version == 1
    severities = {str(d.code): d.severity for d in first.diagnostics}
    assert severities == {"TL204": types.DiagnosticSeverity.Error}


async def test_a_crashing_rule_is_logged_and_the_server_keeps_serving(
    client: RecordingClient, workspace: Path
) -> None:
    doc = Document(client, uri_of(workspace / "crash.py"))
    doc.open(AMP_SOURCE)
    diagnostics = await doc.diagnostics()
    assert [d.code for d in diagnostics] == ["TL204"]  # the other rules still report
    await wait_until(
        lambda: any("rule TL301 failed" in m.message for m in client.log_messages),
        message="the crash in the log",
    )
    (logged,) = [
        m
        for m in client.log_messages
        if "rule TL301 failed" in m.message and "crash.py" in m.message
    ]
    assert logged.type == types.MessageType.Error
    assert "crashed on purpose" in logged.message
    doc.change(AMP_SOURCE.replace("torch.cuda.amp.GradScaler()", 'torch.amp.GradScaler("cuda")'))
    assert await doc.diagnostics() == []
    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=doc.uri),
            position=types.Position(line=0, character=0),
        )
    )
    assert hover is None
