"""The language server's state and what all its parts use: `ServerCore` holds the settings,
the open documents and notebooks, the parser choice, the worker threads, the runtime runs and
the project files, and gives the parts logging and messages, background tasks, a document's
context and the client's capabilities. The parts (`server_*.py`) are mixins over it (those
that lint or fix over `DocumentAnalysis`, server_analysis.py), joined into `TorchlintServer`
(server.py); the methods one part calls of another are declared here and defined in one part
each."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from torchlint import __version__
from torchlint.lsp.commands import DocumentContext
from torchlint.lsp.documents import DocumentState, ParserChoice
from torchlint.lsp.idle_gc import IdleCollector
from torchlint.lsp.lenses import LensTargets
from torchlint.lsp.notebooks import NotebookState, sync_options
from torchlint.lsp.runtime_runs import SHUTDOWN_WAIT_SECONDS, RuntimeRuns
from torchlint.lsp.settings import SettingsStore, innermost_folder, shows
from torchlint.workspace import Workspace

NAME = "torchlint"

T = TypeVar("T")


class ServerCore(LanguageServer):
    def __init__(self) -> None:
        # Incremental synchronisation: an editor sends each keystroke at once (VS Code's client
        # holds full-text changes back for 250 ms). `torchlint.lsp.text` applies the changes.
        super().__init__(
            NAME,
            __version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            notebook_document_sync=sync_options(),
        )
        self.settings = SettingsStore()
        self.settings_ready = asyncio.Event()
        self.documents: dict[str, DocumentState] = {}
        self.notebooks: dict[str, NotebookState] = {}
        self.parsers = ParserChoice.detect()
        self.executor = ThreadPoolExecutor(max_workers=4, thread_name_prefix="torchlint")
        self._pull_generation = 0
        self._announced: set[str] = set()
        self._background: set[asyncio.Task[Any]] = set()
        self.initialization_options: Any = None
        self.runtime = RuntimeRuns(self)
        self._open_paths: dict[Path, str] = {}  # path -> URI of the open (linted) documents
        # Reading, analysing and fixing files with their projects, as `torchlint check` does.
        self.files = Workspace(self.open_text)
        self.collector = IdleCollector()  # installed by `main`, for the server's process

    # --- helpers ----------------------------------------------------------------------------

    def log(self, message: str, kind: types.MessageType = types.MessageType.Info) -> None:
        self.window_log_message(types.LogMessageParams(type=kind, message=message))

    def announce(
        self,
        message: str,
        kind: types.MessageType = types.MessageType.Warning,
        uri: str | None = None,
    ) -> None:
        """Log `message`, once per settings pull (not on every keystroke), and show it when the
        `showNotifications` setting (of `uri`'s folder) asks for messages of its kind."""
        if message in self._announced:
            return
        self._announced.add(message)
        self.log(message, kind)
        settings = self.settings.for_uri(uri) if uri else self.settings.global_settings
        if shows(settings.show_notifications, kind):
            self.window_show_message(types.ShowMessageParams(type=kind, message=message))

    def text_document_publish_diagnostics(self, params: types.PublishDiagnosticsParams) -> None:
        super().text_document_publish_diagnostics(params)
        self.collector.activity()  # the garbage of this lint is collected in the next pause

    async def in_thread(self, function: Callable[..., T], *args: Any) -> T:
        return await asyncio.get_running_loop().run_in_executor(self.executor, function, *args)

    def shutdown(self) -> None:
        """Stop the running runtime checks (their children included) before pygls stops."""
        self.runtime.cancel_all(wait=SHUTDOWN_WAIT_SECONDS)
        super().shutdown()  # type: ignore[no-untyped-call]

    def spawn(self, coroutine: Any) -> asyncio.Task[Any]:
        task: asyncio.Task[Any] = asyncio.ensure_future(coroutine)
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        return task

    @property
    def encoding(self) -> str:
        encoding = self.workspace.position_encoding or types.PositionEncodingKind.Utf16
        return encoding.value if isinstance(encoding, types.PositionEncodingKind) else encoding

    @property
    def versioned_edits(self) -> bool:
        capabilities = self.client_capabilities
        workspace = capabilities.workspace if capabilities else None
        edit = workspace.workspace_edit if workspace else None
        return bool(edit and edit.document_changes)

    def folder_uris(self) -> list[str]:
        folders = [folder.uri for folder in self.workspace.folders.values()]
        if not folders and self.workspace.root_uri:
            folders = [self.workspace.root_uri]
        return folders

    def document_context(self, uri: str) -> DocumentContext:
        """Where `uri` lives on disk (a stand-in path inside its folder for an unsaved
        document), where its configuration search starts, and its settings."""
        folder = innermost_folder(uri, self.folder_uris())
        folder_path = to_fs_path(folder) if folder is not None else None
        root = Path(folder_path) if folder_path else Path.cwd()
        path_text = to_fs_path(uri)
        path = Path(path_text) if path_text else root / "untitled.py"
        return DocumentContext(uri, path, root, self.settings.for_uri(uri))

    # --- what the parts call of each other (each defined in the part named) -----------------

    def open_text(self, path: Path) -> str | None:  # server_files.py
        raise NotImplementedError

    def file_changed(self, path: Path | None, uri: str | None = None, typing: bool = False) -> None:
        raise NotImplementedError  # server_files.py

    def schedule(self, uri: str, delay: float) -> None:  # server_documents.py
        raise NotImplementedError

    def _restart(self, state: DocumentState | NotebookState, lint: Callable[[int], Any]) -> None:
        raise NotImplementedError  # server_documents.py

    def republish(self, uri: str) -> None:  # server_documents.py
        raise NotImplementedError

    def republish_cell(self, uri: str) -> None:  # server_documents.py
        raise NotImplementedError

    def shown(self, uri: str, static: list[types.Diagnostic]) -> list[types.Diagnostic]:
        raise NotImplementedError  # server_documents.py

    def tracked(self, uri: str) -> DocumentState | None:  # server_documents.py
        raise NotImplementedError

    def schedule_notebook(self, uri: str, delay: float) -> None:  # server_notebooks.py
        raise NotImplementedError

    def notebook_of_cell(self, uri: str) -> NotebookState | None:  # server_notebooks.py
        raise NotImplementedError

    def lenses_found(self, state: DocumentState, targets: LensTargets) -> None:
        raise NotImplementedError  # server_lenses.py

    def notebook_lenses_found(self, state: NotebookState, lenses: dict[str, LensTargets]) -> None:
        raise NotImplementedError  # server_lenses.py
