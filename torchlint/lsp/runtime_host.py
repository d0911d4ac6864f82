"""What the runtime runs use of the language server, as a protocol: `RuntimeRuns` and its
parts never import the server, which owns the runs (server_core.py)."""

from __future__ import annotations

import asyncio
from typing import Protocol

from lsprotocol import types
from pygls.progress import Progress
from pygls.protocol import LanguageServerProtocol
from pygls.workspace import Workspace

from torchlint.lsp.documents import DocumentState
from torchlint.lsp.notebooks import NotebookState
from torchlint.lsp.settings import SettingsStore


class RuntimeHost(Protocol):
    """The server, as the runtime runs see it."""

    settings: SettingsStore
    settings_ready: asyncio.Event
    documents: dict[str, DocumentState]

    @property
    def protocol(self) -> LanguageServerProtocol: ...

    @property
    def workspace(self) -> Workspace: ...

    @property
    def work_done_progress(self) -> Progress: ...

    @property
    def client_capabilities(self) -> types.ClientCapabilities: ...

    @property
    def encoding(self) -> str: ...

    @property
    def versioned_edits(self) -> bool: ...

    def log(self, message: str, kind: types.MessageType = types.MessageType.Info) -> None: ...

    def window_show_message(self, params: types.ShowMessageParams) -> None: ...

    def folder_uris(self) -> list[str]: ...

    def notebook_of_cell(self, uri: str) -> NotebookState | None: ...

    def republish(self, uri: str) -> None: ...

    def republish_cell(self, uri: str) -> None: ...
