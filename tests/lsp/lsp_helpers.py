"""Helpers for the language-server tests: a recording test client, waiting, applying edits."""

from __future__ import annotations

import asyncio
import os
import re
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.protocol import default_converter
from pygls.uris import from_fs_path
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

SERVER = [sys.executable, "-m", "torchlint.lsp"]
TIMEOUT = 30.0

# A training loop with TL204 (deprecated GradScaler, line 6) and TL301 (`.item()`, line 15).
# A model, an optimizer and a loader: what the training loops of the tests use.
HEADER = """\
import torch
from torch import nn

model = nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = [(torch.randn(8, 4), torch.randn(8, 2)) for _ in range(10)]
"""

AMP_SOURCE = """\
import torch
from torch import nn

model = nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.cuda.amp.GradScaler()
loader = [(torch.randn(8, 4), torch.randn(8, 2)) for _ in range(10)]

for x, y in loader:
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    print(loss.item())
"""


class RecordingClient(LanguageClient):
    """pytest-lsp's client, keeping every `publishDiagnostics` in order (with its version)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.publications: list[types.PublishDiagnosticsParams] = []
        self.configuration_delay = 0.0
        self.configuration_requests = 0
        self.lens_refreshes = 0
        self.initialize_result: types.InitializeResult | None = None

    def published(self, uri: str) -> list[types.PublishDiagnosticsParams]:
        return [p for p in self.publications if p.uri == uri]


def _record(client: RecordingClient, params: types.PublishDiagnosticsParams) -> None:
    client.publications.append(params)
    client.diagnostics[params.uri] = params.diagnostics


async def _configuration(client: RecordingClient, params: types.ConfigurationParams) -> list[Any]:
    client.configuration_requests += 1
    if client.configuration_delay:
        await asyncio.sleep(client.configuration_delay)
    return [
        client.get_configuration(section=item.section, scope_uri=item.scope_uri)
        for item in params.items
    ]


def _register(client: RecordingClient, params: types.RegistrationParams) -> None:
    return None


def _refresh_lenses(client: RecordingClient, params: None) -> None:
    client.lens_refreshes += 1


def _converter() -> Any:
    """pygls's converter, telling a code action that carries a command (a quick fix that also
    runs something) from a bare command: lsprotocol's union structuring takes the first for the
    second, as it only looks for `title` and `command` (VS Code's client checks the types)."""
    converter = default_converter()

    def code_action_or_command(value: Any, _: Any) -> Any:
        if isinstance(value, dict) and (
            not isinstance(value.get("command", ""), str)
            or {"kind", "edit", "diagnostics"} & set(value)
        ):
            return converter.structure(value, types.CodeAction)
        return converter.structure(value, types.Command)

    converter.register_structure_hook(types.Command | types.CodeAction, code_action_or_command)
    return converter


def make_client() -> RecordingClient:
    client = RecordingClient(converter_factory=_converter)
    register_lsp_features(
        client,
        {
            **DEFAULT_CLIENT_FEATURES,
            types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS: _record,
            types.WORKSPACE_CONFIGURATION: _configuration,
            types.CLIENT_REGISTER_CAPABILITY: _register,
            types.WORKSPACE_CODE_LENS_REFRESH: _refresh_lenses,
        },
    )
    return client


def server_config(command: Sequence[str] = SERVER, **env: str) -> ClientServerConfig:
    environment = {k: v for k, v in os.environ.items() if k != "TORCHLINT_TEST_CRASH_RULE"}
    environment.update(env)
    return ClientServerConfig(
        server_command=list(command), client_factory=make_client, server_env=environment
    )


def initialize_params(folders: Sequence[Path]) -> types.InitializeParams:
    capabilities = client_capabilities("visual-studio-code")
    # Our test client reads the `version` of each publication.
    if capabilities.text_document and capabilities.text_document.publish_diagnostics:
        capabilities.text_document.publish_diagnostics.version_support = True
    return types.InitializeParams(
        capabilities=capabilities,
        root_uri=uri_of(folders[0]),
        workspace_folders=[
            types.WorkspaceFolder(uri=uri_of(folder), name=folder.name) for folder in folders
        ],
    )


def uri_of(path: Path) -> str:
    uri = from_fs_path(str(path))
    assert uri is not None
    return uri


async def wait_until(
    predicate: Callable[[], Any], timeout: float = TIMEOUT, message: str = "condition"
) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {message}")
        await asyncio.sleep(0.01)


class Document:
    """One document the test client edits; versions count up from 1."""

    def __init__(self, client: RecordingClient, uri: str) -> None:
        self.client = client
        self.uri = uri
        self.version = 0
        self.text = ""

    def open(self, text: str, language_id: str = "python") -> None:
        self.version = 1
        self.text = text
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=self.uri, language_id=language_id, version=self.version, text=text
                )
            )
        )

    def change(self, text: str) -> None:
        self.version += 1
        self.text = text
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(
                    uri=self.uri, version=self.version
                ),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )

    def edit(self, start: tuple[int, int], end: tuple[int, int], new_text: str) -> None:
        """An incremental change (as editors send keystrokes): `start` to `end` (0-based line,
        UTF-16 character) replaced by `new_text`."""
        where = types.Range(start=types.Position(*start), end=types.Position(*end))
        self.version += 1
        self.text = apply_text_edits(self.text, [types.TextEdit(range=where, new_text=new_text)])
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(
                    uri=self.uri, version=self.version
                ),
                content_changes=[
                    types.TextDocumentContentChangePartial(range=where, text=new_text)
                ],
            )
        )

    def save(self) -> None:
        self.client.text_document_did_save(
            types.DidSaveTextDocumentParams(
                text_document=types.TextDocumentIdentifier(uri=self.uri)
            )
        )

    def close(self) -> None:
        self.client.text_document_did_close(
            types.DidCloseTextDocumentParams(
                text_document=types.TextDocumentIdentifier(uri=self.uri)
            )
        )

    def publications(self) -> list[types.PublishDiagnosticsParams]:
        return self.client.published(self.uri)

    async def diagnostics(
        self, version: int | None = None, count: int = 1, timeout: float = TIMEOUT
    ) -> list[types.Diagnostic]:
        """The diagnostics of the `count`-th publication for `version` (default: the current
        one), once it has arrived."""
        wanted = self.version if version is None else version

        def found() -> types.PublishDiagnosticsParams | None:
            matching = [p for p in self.publications() if p.version == wanted]
            return matching[count - 1] if len(matching) >= count else None

        params = await wait_until(found, timeout, f"diagnostics of {self.uri} v{wanted}")
        return list(params.diagnostics)

    async def code_actions(
        self,
        diagnostics: Sequence[types.Diagnostic],
        only: Sequence[str] | None = None,
        at: types.Range | None = None,
    ) -> list[types.CodeAction]:
        where = at or (
            diagnostics[0].range
            if diagnostics
            else types.Range(start=types.Position(0, 0), end=types.Position(0, 0))
        )
        result = await self.client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=self.uri),
                range=where,
                context=types.CodeActionContext(
                    diagnostics=list(diagnostics), only=list(only) if only is not None else None
                ),
            )
        )
        return [a for a in result or [] if isinstance(a, types.CodeAction)]

    def apply(self, edit: types.WorkspaceEdit | None) -> str:
        """The text after `edit` (checked to target this document at its current version)."""
        assert edit is not None
        return apply_workspace_edit(self.text, self.uri, self.version, edit)


def _lsp_lines(text: str) -> list[str]:
    """Lines with their endings, broken only at \\r\\n, \\r and \\n (the protocol's line breaks;
    `str.splitlines` also breaks at form feeds and Unicode separators)."""
    return [line for line in re.findall(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$", text) if line]


def _offset(text: str, position: types.Position) -> int:
    lines = _lsp_lines(text)
    offset = sum(len(line) for line in lines[: position.line])
    line = lines[position.line] if position.line < len(lines) else ""
    units = 0
    index = 0
    while index < len(line) and units < position.character:
        units += 2 if ord(line[index]) > 0xFFFF else 1
        index += 1
    return offset + index


def apply_text_edits(text: str, edits: Sequence[types.TextEdit]) -> str:
    """Apply LSP edits (UTF-16 positions; all refer to the original text)."""
    spans = sorted(
        ((_offset(text, e.range.start), _offset(text, e.range.end), e.new_text) for e in edits),
        key=lambda span: (span[0], span[1]),
        reverse=True,
    )
    for start, end, new_text in spans:
        text = text[:start] + new_text + text[end:]
    return text


def apply_workspace_edit(text: str, uri: str, version: int, edit: types.WorkspaceEdit) -> str:
    edits: list[types.TextEdit] = []
    if edit.document_changes:
        for change in edit.document_changes:
            assert isinstance(change, types.TextDocumentEdit)
            assert change.text_document.uri == uri
            assert change.text_document.version == version
            edits.extend(e for e in change.edits if isinstance(e, types.TextEdit))
    if edit.changes:
        assert set(edit.changes) == {uri}
        edits.extend(edit.changes[uri])
    return apply_text_edits(text, edits)
