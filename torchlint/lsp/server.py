"""The torchlint language server (pygls 2.x, over stdio): `torchlint lsp` or
`python -m torchlint.lsp`.

How the work is scheduled:

- *Settings first.* After `initialized` the server pulls the `torchlint` settings of every
  workspace folder (`workspace/configuration`). Nothing is published before they have arrived:
  every lint waits on `settings_ready`, so a document opened meanwhile is linted once, with
  them. `workspace/didChangeConfiguration` pulls them again and re-lints every open document.
- *Typing never waits.* The analysis runs in a worker thread, never on the event loop. An edit
  is linted as soon as the changes already received are applied (editors send each keystroke at
  once, with incremental synchronisation); while an analysis runs, later edits queue behind it
  and only the newest is analysed next, so a burst costs at most two analyses. A document that
  reads an edited file is linted after a 15 ms pause.
- *Newest wins.* Each edit bumps the document's generation; work of an older generation is
  dropped before it starts and before it publishes, and a result is published only while the
  document still has the version it was computed for (the version goes in the notification).
  One analysis runs at a time per document, because an incremental parser holds state.
- *Parser.* `torchlint.analysis.incremental.IncrementalParser` (one per document, dropped on
  close) when that module exists, else `parse_source`. If the incremental parser raises, that
  run is redone with `parse_source` and the document gets a fresh parser.
- *Runtime checks.* The lenses' commands run the runtime checks on the document's file, in a
  child process watched from a thread of their own (`torchlint.lsp.runtime_runs`), with
  progress and cancellation; one run per file at a time. What a run finds is kept per document
  and added to every publication of that document, beside the lint's diagnostics, until the
  document is edited or closed or the same check runs again.
- *Notebooks.* A notebook document's Python code cells are analysed together as one program
  (`torchlint.lsp.notebooks`), with the same settings, debounce and worker threads; each
  diagnostic is published on its cell's URI. Cells are never linted as standalone documents.
- *Whole project.* A document with a file path is analysed with its project
  (`torchlint.workspace`): calls into other project files are followed, reading open
  documents from the editor and the rest from disk, through one warm `Project` per project
  layout, kept for the server's lifetime. Each document remembers which files its last
  analysis read; when one of them is edited, opened, closed, saved or changes on disk (watched
  files, when the client lets the server register for them), those documents are linted
  again, edits after the same pause as their own. Untitled documents and notebooks are
  analysed alone, and so is any document whose analysis with the project fails.
- *Failures stay local.* A rule that crashes (`Analysis.errors`) is logged to the client once per
  document and message; the other rules' diagnostics are still published. Nothing is ever
  written to stdout, which carries the protocol.

Test hook: when the environment variable `TORCHLINT_TEST_CRASH_RULE` names rule codes
(comma-separated), those rules raise on every file. The test-suite uses it to check that a
crashing rule is reported and the server keeps serving; nothing else sets it.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import sys
import traceback
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import unquote

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from torchlint import __version__
from torchlint.analysis.source import ParsedSource, ParseFailure, parse_source
from torchlint.config import ConfigError, ConfigResolver
from torchlint.engine import Analysis, Parser
from torchlint.lsp import actions
from torchlint.lsp.commands import (
    SHOW_DEBUG_INFORMATION,
    DocumentContext,
    debug_information,
    format_debug_information,
)
from torchlint.lsp.confirmed import with_confirmations
from torchlint.lsp.convert import PositionMap, to_lsp_diagnostics
from torchlint.lsp.documents import (
    DocumentState,
    ParserChoice,
    Published,
    is_python_document,
)
from torchlint.lsp.findings import merge
from torchlint.lsp.hover import hover_at
from torchlint.lsp.idle_gc import IdleCollector
from torchlint.lsp.lenses import (
    GRADS,
    OVERFIT,
    PROFILE,
    LensTargets,
    code_lenses,
    kept_lenses,
    shifted,
)
from torchlint.lsp.notebooks import (
    CellResults,
    NotebookState,
    analyse_cells,
    fix_cells,
    is_cell_uri,
    sync_options,
)
from torchlint.lsp.partial import BrokenBlock, mask_broken_blocks, syntax_diagnostics
from torchlint.lsp.runtime_runs import SHUTDOWN_WAIT_SECONDS, RuntimeRuns
from torchlint.lsp.settings import (
    ClientSettings,
    SettingsStore,
    editor_excludes,
    innermost_folder,
    origin_of,
    parse_settings,
    shows,
)
from torchlint.lsp.text import TorchlintWorkspace, file_path
from torchlint.rules import lookup
from torchlint.rules.syntax_error import SyntaxErrorRule
from torchlint.selection import RuleSelection
from torchlint.workspace import FileRun, Workspace

NAME = "torchlint"
SECTION = "torchlint"
TYPING_PAUSE_SECONDS = 0.0  # an edited document: lint at once (see the module docstring)
DEPENDENT_PAUSE_SECONDS = 0.015  # a document that reads an edited file
CONFIGURATION_TIMEOUT_SECONDS = 10.0
CRASH_RULE_ENV = "TORCHLINT_TEST_CRASH_RULE"
GLOBAL_SCOPE = "the settings outside every workspace folder"

T = TypeVar("T")


@dataclass
class Editable:
    """The text a code action edits: a document, or a notebook's code cell (`top`: the first
    code cell, where `ignore-file` goes), and its current diagnostics."""

    uri: str
    text: str
    version: int | None
    current: list[types.Diagnostic]
    notebook: NotebookState | None = None
    top: tuple[str, str, int | None] | None = None


@dataclass
class LintOutcome:
    """What a worker thread hands back to the event loop."""

    diagnostics: list[types.Diagnostic]
    logs: list[tuple[types.MessageType, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # shown to the user, once each
    dependencies: dict[Path, str] = field(default_factory=dict)  # other project files read
    lenses: LensTargets = field(default_factory=LensTargets)  # where the code lenses go


class TorchlintServer(LanguageServer):
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

    # --- settings ---------------------------------------------------------------------------

    def _supports_pull(self) -> bool:
        capabilities = self.client_capabilities
        return bool(
            capabilities and capabilities.workspace and capabilities.workspace.configuration
        )

    async def pull_settings(self, pushed: Any = None) -> bool:
        """Ask the client for the settings (or use what it pushed when it cannot be asked);
        False when a newer pull overtook this one."""
        self._pull_generation += 1
        generation = self._pull_generation
        folders = self.folder_uris()
        raw_global: Any = pushed
        raw_folders: dict[str, Any] = {}
        if self._supports_pull():
            items = [types.ConfigurationItem(section=SECTION)] + [
                types.ConfigurationItem(section=SECTION, scope_uri=folder) for folder in folders
            ]
            try:
                answer = await asyncio.wait_for(
                    self.workspace_configuration_async(types.ConfigurationParams(items=items)),
                    CONFIGURATION_TIMEOUT_SECONDS,
                )
            except Exception as exc:
                self.log(
                    f"workspace/configuration failed ({exc!r}); using the default settings",
                    types.MessageType.Warning,
                )
                answer = []
            answer = list(answer or [])
            raw_global = answer[0] if answer else None
            raw_folders = {
                folder: answer[index + 1]
                for index, folder in enumerate(folders)
                if index + 1 < len(answer)
            }
        if generation != self._pull_generation:
            return False
        self._announced.clear()
        store = SettingsStore()
        shown: list[str] = []  # problems of scopes whose `showNotifications` pops warnings up
        logged: list[str] = []
        scopes = [(GLOBAL_SCOPE, raw_global, None)] + [
            (f"the settings of {folder}", raw_folders.get(folder, raw_global), folder)
            for folder in folders
        ]
        for scope, raw, folder in scopes:
            settings, problems = self._parse(scope, raw)
            if folder is None:
                store.global_settings = settings
            else:
                store.folders[folder] = settings
            warn = shows(settings.show_notifications, types.MessageType.Warning)
            (shown if warn else logged).extend(problems)
        self.settings = store
        self.log(f"settings: {json.dumps(store.global_settings.to_json())}")
        for folder, settings in store.folders.items():
            if settings != store.global_settings:
                self.log(f"settings for {folder}: {json.dumps(settings.to_json())}")
        # One message for the whole pull: a problem of the user settings is in every folder's
        # answer too, but it is named once, with the place to fix it.
        for problem in dict.fromkeys(logged):
            if problem not in shown:
                self.log(f"torchlint settings: {problem}", types.MessageType.Warning)
        if shown:
            message = "torchlint settings: " + "; ".join(dict.fromkeys(shown))
            self._announced.add(message)
            self.log(message, types.MessageType.Warning)
            self.window_show_message(
                types.ShowMessageParams(type=types.MessageType.Warning, message=message)
            )
        self.settings_ready.set()
        return True

    def _parse(self, scope: str, raw: Any) -> tuple[ClientSettings, list[str]]:
        settings, found = parse_settings(raw)
        problems = [
            f"torchlint.{problem.key} ({origin_of(raw, problem.key) or scope}): {problem.message}"
            for problem in found
        ]
        return settings, problems

    async def settings_changed(self, pushed: Any = None) -> None:
        if await self.pull_settings(pushed):
            for uri in list(self.documents):
                self.schedule(uri, delay=0.0)
            for uri in list(self.notebooks):
                self.schedule_notebook(uri, delay=0.0)

    # --- the project files documents read (see `torchlint.workspace`) ---------------

    def open_text(self, path: Path) -> str | None:
        """The editor's text of `path` while it is open (called from worker threads)."""
        uri = self._open_paths.get(path)
        if uri is None:
            return None
        document = self.workspace.text_documents.get(unquote(uri))
        return document.source if document is not None else None

    def file_changed(self, path: Path | None, uri: str | None = None, typing: bool = False) -> None:
        """`path` was edited (`typing`), opened, closed, saved or changed on disk: the projects
        read it again, and the other open documents whose last analysis read it are linted
        again. After an edit, the ones linted on type, after the usual pause; otherwise at once,
        those that read a content other than the file's now."""
        if path is None:
            return
        try:
            self.files.changed(path)
            dependents = [
                state
                for state in self.documents.values()
                if state.uri != uri and path in state.dependencies
            ]
            if typing:
                for state in dependents:
                    if self.settings.for_uri(state.uri).run == "onType":
                        self.schedule(state.uri, DEPENDENT_PAUSE_SECONDS)
                return
            current = self.files.current_hash(path) if dependents else None
            for state in dependents:
                if state.dependencies.get(path) != current:
                    self.schedule(state.uri, delay=0.0)
        except Exception:
            self.log(
                f"following the change of {path} into other documents failed:\n"
                + traceback.format_exc(),
                types.MessageType.Error,
            )

    def watched_files_changed(self, changes: Sequence[types.FileEvent]) -> None:
        """Files changed on disk. A new module may be what an open document imports: every
        open document of its project is linted again."""
        for change in changes:
            path = file_path(change.uri)
            if path is None or not path.name.endswith((".py", ".pyi")):
                continue
            self.file_changed(path)
            if change.type != types.FileChangeType.Created:
                continue
            layouts = [layout for layout in self.files.layouts if layout.contains(path)]
            for state in list(self.documents.values()):
                own = file_path(state.uri)
                if own is not None and any(layout.contains(own) for layout in layouts):
                    self.schedule(state.uri, delay=0.0)

    # --- linting ----------------------------------------------------------------------------

    def open_document(self, uri: str) -> None:
        parse, problem = self.parsers.new_parser()
        if problem is not None:
            self.log(problem, types.MessageType.Warning)
        state = DocumentState(uri, parse, incremental=parse is not parse_source)
        self.documents[uri] = state
        path = file_path(uri)
        if path is not None:
            self._open_paths[path] = uri
        self.file_changed(path, uri)
        self.schedule(uri, delay=0.0)

    def close_document(self, uri: str) -> None:
        self.runtime.document_closed(uri)
        state = self.documents.pop(uri, None)
        if state is None:
            return
        state.closed = True
        state.generation += 1
        path = file_path(uri)
        if path is not None and self._open_paths.get(path) == uri:
            del self._open_paths[path]
        self.file_changed(path, uri)  # read from disk again: unsaved edits are gone
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=[])
        )

    def document_changed(
        self, uri: str, changes: Sequence[types.TextDocumentContentChangeEvent] = ()
    ) -> None:
        """An edit: runtime findings for the document are stale now; lint it again, and the
        documents that read it. Its lenses move with the text until then."""
        state = self.documents.get(uri)
        if state is not None:
            state.lens_targets = shifted(state.lens_targets, changes)
        stale = self.runtime.document_changed(uri)
        if uri in self.documents:
            self.file_changed(file_path(uri), uri, typing=True)
        if uri in self.documents and self.settings.for_uri(uri).run == "onType":
            self.schedule(uri, TYPING_PAUSE_SECONDS)  # publishes without them
        elif stale:
            self.republish(uri)

    def document_saved(self, uri: str) -> None:
        """A save: the documents that read the file are linted again; the file itself only if
        its last lint is not of this text with this configuration (a save right after an edit
        would otherwise analyse the same text twice, doubling the time to its diagnostics)."""
        state = self.documents.get(uri)
        if state is None:
            return
        self.spawn(self._lint_after_save(state, state.generation))
        self.file_changed(file_path(uri), uri)

    async def _lint_after_save(self, state: DocumentState, generation: int) -> None:
        try:
            await self.settings_ready.wait()
            # After the lint in flight, if any: it may be the one of this very text.
            async with state.lock:
                if not self._current(state, generation):
                    return  # superseded: a newer lint is on its way
                version = self.workspace.get_text_document(state.uri).version
                context = self.document_context(state.uri)
                if state.linted is not None and state.linted[0] == version:
                    selection, problem = await self.in_thread(self.selection_for, context)
                    if state.linted == (version, selection, problem):
                        return
            if self._current(state, generation):
                self.schedule(state.uri, delay=0.0)
        except Exception:
            self.log(
                f"linting {state.uri} after its save failed:\n" + traceback.format_exc(),
                types.MessageType.Error,
            )

    def republish(self, uri: str) -> None:
        """Publish `uri` again after its runtime diagnostics changed: the lint's last
        diagnostics (with their version) and the runtime ones. A lint still to come for the
        document includes the runtime ones itself."""
        state = self.documents.get(uri)
        if state is None or state.closed:
            return
        published = state.published
        if published is not None:
            static, version = published.diagnostics, published.version
        else:
            static, version = [], self.workspace.get_text_document(uri).version
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(
                uri=uri, diagnostics=self.shown(uri, static), version=version
            )
        )

    def republish_cell(self, uri: str) -> None:
        """Publish a notebook cell again after its runtime diagnostics changed."""
        state = self.notebook_of_cell(uri)
        if state is None or uri not in state.cells:
            return
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(
                uri=uri,
                diagnostics=self.shown(uri, state.published.get(uri, [])),
                version=state.cells[uri].version,
            )
        )

    def shown(self, uri: str, static: list[types.Diagnostic]) -> list[types.Diagnostic]:
        """What a document shows: its lint's diagnostics with what the runtime checks found
        (a finding that confirms a static one folded into it, `torchlint.lsp.findings`)."""
        runtime = self.runtime.diagnostics.for_uri(uri)
        # A static finding a run measured (TL301 at a line the profile saw syncing) keeps
        # its place and says what the run measured (`torchlint.lsp.confirmed`).
        return merge(with_confirmations(static, runtime), runtime, uri)

    def schedule(self, uri: str, delay: float) -> None:
        """Lint `uri` after `delay` seconds, superseding every earlier request for it."""
        state = self.documents.get(uri)
        if state is not None:
            self._restart(state, lambda generation: self._lint(state, generation, delay))

    def _restart(self, state: DocumentState | NotebookState, lint: Callable[[int], Any]) -> None:
        """Supersede every pending lint of a document or notebook with `lint(generation)`."""
        state.generation += 1
        task = self.spawn(lint(state.generation))
        state.tasks.add(task)
        task.add_done_callback(state.tasks.discard)

    def _current(self, state: DocumentState, generation: int) -> bool:
        return not state.closed and state.generation == generation

    async def _lint(self, state: DocumentState, generation: int, delay: float) -> None:
        try:
            await self.settings_ready.wait()
            if delay:
                await asyncio.sleep(delay)
            if not self._current(state, generation):
                return
            async with state.lock:
                if not self._current(state, generation):
                    return
                document = self.workspace.get_text_document(state.uri)
                text, version = document.source, document.version
                context = self.document_context(state.uri)
                started = self.files.sequence
                if context.settings.enable:
                    outcome = await self.in_thread(
                        self._analyse, state, context, text, version, self.encoding
                    )
                else:
                    outcome = LintOutcome([])
                state.dependencies = outcome.dependencies
            for kind, message in outcome.logs:
                self.log(message, kind)
            for warning in outcome.warnings:
                self.announce(warning, uri=state.uri)
            if not self._current(state, generation):
                return
            if self.files.changed_since(outcome.dependencies, started):
                # It read a file that changed meanwhile, before it knew to watch that file.
                self.schedule(state.uri, DEPENDENT_PAUSE_SECONDS)
                return
            if self.workspace.get_text_document(state.uri).version != version:
                return  # the document moved on: its own lint is on the way
            published = state.published
            if published is not None and _older(version, published.version):
                return
            state.published = Published(version, outcome.diagnostics)
            self.lenses_found(state, outcome.lenses)
            self.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(
                    uri=state.uri,
                    diagnostics=self.shown(state.uri, outcome.diagnostics),
                    version=version,
                )
            )
        except Exception:
            self.log(
                f"torchlint failed on {state.uri}:\n{traceback.format_exc()}",
                types.MessageType.Error,
            )

    # --- notebooks (see `torchlint.lsp.notebooks`) -----------------------------------------

    def is_notebook_cell(self, uri: str) -> bool:
        """Whether `uri` is a cell of a notebook: linted with its notebook, never alone."""
        if is_cell_uri(uri):
            return True
        return self.workspace.get_notebook_document(cell_uri=uri) is not None

    def open_notebook(self, params: types.DidOpenNotebookDocumentParams) -> None:
        uri = params.notebook_document.uri
        state = NotebookState(uri, self.workspace.position_codec)
        for item in params.cell_text_documents:
            state.add_cell(item)
        self.notebooks[uri] = state
        self.schedule_notebook(uri, delay=0.0)

    def notebook_changed(self, params: types.DidChangeNotebookDocumentParams) -> None:
        state = self.notebooks.get(params.notebook_document.uri)
        if state is None:
            return
        structure = params.change.cells.structure if params.change.cells else None
        state.apply(params.change)
        for content in (params.change.cells.text_content or []) if params.change.cells else []:
            self.runtime.document_changed(content.document.uri)  # its runtime findings are stale
        for identifier in (structure.did_close or []) if structure else []:
            if state.published.pop(identifier.uri, None) is not None:
                self.text_document_publish_diagnostics(
                    types.PublishDiagnosticsParams(uri=identifier.uri, diagnostics=[])
                )
        if self.settings.for_uri(state.uri).run == "onType":
            self.schedule_notebook(state.uri, TYPING_PAUSE_SECONDS)

    def close_notebook(self, uri: str, cells: Sequence[str]) -> None:
        state = self.notebooks.pop(uri, None)
        if state is None:
            return
        state.closed = True
        state.generation += 1
        for cell in {*cells, *state.cells, *state.published}:
            self.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=cell, diagnostics=[])
            )

    def schedule_notebook(self, uri: str, delay: float) -> None:
        state = self.notebooks.get(uri)
        if state is not None:
            self._restart(state, lambda generation: self._lint_notebook(state, generation, delay))

    async def _lint_notebook(self, state: NotebookState, generation: int, delay: float) -> None:
        def current() -> bool:
            return not state.closed and state.generation == generation

        try:
            await self.settings_ready.wait()
            if delay:
                await asyncio.sleep(delay)
            if not current():
                return
            async with state.lock:
                if not current():
                    return
                notebook = self.workspace.get_notebook_document(notebook_uri=state.uri)
                cells = [(d.uri, d.source, d.version) for d in state.code_cells(notebook)]
                numbers = state.numbers(notebook)
                positions = [numbers.get(uri, 0) for uri, _, _ in cells]
                context = self.document_context(state.uri)
                results: dict[str, list[types.Diagnostic]] = {uri: [] for uri, _, _ in cells}
                lenses: dict[str, LensTargets] = {}
                if context.settings.enable and cells:
                    outcome = await self.in_thread(
                        self._analyse_notebook, state, context, cells, positions, self.encoding
                    )
                    found, logs, warnings = outcome
                    if found is not None:
                        results, lenses = found.diagnostics, found.lenses
                    for kind, message in logs:
                        self.log(message, kind)
                    for warning in warnings:
                        self.announce(warning, uri=state.uri)
            if not current():
                return
            stale = [uri for uri in state.published if uri not in results]
            for uri in stale:
                del state.published[uri]
                self.text_document_publish_diagnostics(
                    types.PublishDiagnosticsParams(uri=uri, diagnostics=[])
                )
            versions = {uri: version for uri, _, version in cells}
            self.notebook_lenses_found(state, lenses)
            for uri, diagnostics in results.items():
                state.published[uri] = diagnostics
                self.text_document_publish_diagnostics(
                    types.PublishDiagnosticsParams(
                        uri=uri, diagnostics=self.shown(uri, diagnostics), version=versions.get(uri)
                    )
                )
        except Exception:
            self.log(
                f"torchlint failed on {state.uri}:\n{traceback.format_exc()}",
                types.MessageType.Error,
            )

    def _analyse_notebook(
        self,
        state: NotebookState,
        context: DocumentContext,
        cells: Sequence[tuple[str, str, int | None]],
        numbers: Sequence[int],
        encoding: str,
    ) -> tuple[CellResults | None, list[tuple[types.MessageType, str]], list[str]]:
        """In a worker thread: the diagnostics and lenses of every code cell, logs and
        warnings. A notebook the configuration excludes gets none (its cells are cleared)."""
        selection, problem = self.selection_for(context)
        warnings = [problem] if problem else []
        if selection is None:
            return None, [], warnings
        results = analyse_cells(
            cells,
            str(context.path),
            selection,
            encoding,
            context.settings.severity,
            show_syntax_errors=context.settings.show_syntax_errors,
            numbers=numbers,
        )
        logs: list[tuple[types.MessageType, str]] = []
        for error in results.analysis.errors:
            if error not in state.logged:
                state.logged.add(error)
                logs.append((types.MessageType.Error, f"internal error: {error}"))
        return results, logs, warnings

    def selection_for(self, context: DocumentContext) -> tuple[RuleSelection | None, str | None]:
        """The rules for a document: its folder's `[tool.torchlint]` (found afresh each time,
        so edits to it count; or the `configuration` file the settings name) with the client's
        `select` / `extendSelect` / `ignore` over it; None for a file the configuration's
        `exclude` or the editor's leaves out (as `check --force-exclude` would). A broken
        configuration falls back to the client's settings alone, with a message."""
        settings = context.settings
        overrides = settings.overrides
        if editor_excludes(settings, context.path, context.root):
            return None, None
        try:
            resolver = ConfigResolver(overrides, cwd=context.root)
            if resolver.is_excluded(context.path, False, ancestors=True):
                return None, None
            return resolver.selection_for(context.path), None
        except ConfigError as exc:
            fallback = RuleSelection(
                overrides.select, overrides.ignore, extend=overrides.extend_select
            )
            return fallback, f"{exc} (linting with the editor settings only)"

    def _analyse(
        self,
        state: DocumentState,
        context: DocumentContext,
        text: str,
        version: int | None,
        encoding: str,
    ) -> LintOutcome:
        """In a worker thread: analyse (through syntax errors, see `torchlint.lsp.partial`) and
        convert."""
        selection, problem = self.selection_for(context)
        outcome = LintOutcome([], warnings=[problem] if problem else [])
        if selection is None:
            state.linted = (version, selection, problem)
            return outcome  # excluded by the project's configuration
        filename = str(context.path)
        # None for an untitled document, or with `--no-project` in lint.args: no project
        path = file_path(state.uri) if context.settings.project else None
        parsed: list[ParsedSource | ParseFailure] = []

        def run(parse: Parser, source: str = text) -> FileRun:
            def remembered(value: str) -> ParsedSource | ParseFailure:
                result = parse(value)
                parsed[:] = [result]
                return result

            return self.files.analyse(
                source, filename, selection, path=path, parse=remembered, training_loops=True
            )

        try:
            result = run(state.parse)
        except Exception:
            if not state.incremental:
                raise
            outcome.logs.append(
                (
                    types.MessageType.Error,
                    f"the incremental parser failed on {state.uri}; parsing from scratch:\n"
                    + traceback.format_exc(),
                )
            )
            parse, _ = self.parsers.new_parser()
            state.parse = parse
            result = run(parse_source)
        diagnostics = result.analysis.diagnostics
        broken: list[BrokenBlock] = []
        if parsed and isinstance(parsed[0], ParseFailure):
            masked = mask_broken_blocks(text, state.parse, parsed[0])
            if masked is not None:
                result = run(masked.parse, masked.text)
                broken = masked.broken
                diagnostics = result.analysis.diagnostics + syntax_diagnostics(
                    masked, text, filename, selection
                )
        if not context.settings.show_syntax_errors:
            diagnostics = [d for d in diagnostics if d.code != SyntaxErrorRule.code]
        analysis = result.analysis
        outcome.dependencies = result.dependencies
        for problem in result.problems:
            if problem not in state.logged:
                state.logged.add(problem)
                outcome.logs.append((types.MessageType.Error, problem))
        outcome.lenses = kept_lenses(analysis, state.lens_targets, broken)
        self._collect_errors(state, analysis, outcome)
        outcome.diagnostics = to_lsp_diagnostics(
            sorted(diagnostics, key=lambda d: d.sort_key),
            text,
            uri=state.uri,
            version=version,
            encoding=encoding,
            severity_overrides=context.settings.severity,
        )
        state.linted = (version, selection, problem)
        return outcome

    def _collect_errors(
        self, state: DocumentState, analysis: Analysis, outcome: LintOutcome
    ) -> None:
        for error in analysis.errors:
            if error not in state.logged:
                state.logged.add(error)
                outcome.logs.append((types.MessageType.Error, f"internal error: {error}"))

    # --- features ---------------------------------------------------------------------------

    def tracked(self, uri: str) -> DocumentState | None:
        state = self.documents.get(uri)
        if state is None or not self.settings.for_uri(uri).enable:
            return None
        return state

    def editable(self, uri: str) -> Editable | None:
        """What the code actions of `uri` work on: a tracked document, or a code cell of a
        tracked notebook (None: neither, or linting is off for it)."""
        state = self.tracked(uri)
        if state is not None:
            document = self.workspace.get_text_document(uri)
            version = document.version
            current = state.current_diagnostics(version) or []
            return Editable(uri, document.source, version, current)
        notebook = self.notebook_of_cell(uri)
        if notebook is None:
            return None
        cells = notebook.cells
        cell = cells.get(uri)
        if cell is None:
            return None
        code = notebook.code_cells(self.workspace.get_notebook_document(notebook_uri=notebook.uri))
        first = code[0] if code else cell
        return Editable(
            uri,
            cell.source,
            cell.version,
            notebook.published.get(uri, []),
            notebook=notebook,
            top=(first.uri, first.source, first.version),
        )

    def notebook_of_cell(self, uri: str) -> NotebookState | None:
        notebook = self.workspace.get_notebook_document(cell_uri=uri)
        state = self.notebooks.get(notebook.uri) if notebook is not None else None
        if state is None or not self.settings.for_uri(state.uri).enable:
            return None
        return state

    async def code_actions(self, params: types.CodeActionParams) -> list[types.CodeAction] | None:
        uri = params.text_document.uri
        target = self.editable(uri)
        if target is None:
            return None
        text, version = target.text, target.version
        positions = PositionMap(text, self.encoding)
        only = params.context.only
        versioned = self.versioned_edits
        result: list[types.CodeAction] = []
        if actions.kind_requested(types.CodeActionKind.QuickFix, only):
            noqa_seen: set[tuple[str, int]] = set()
            file_seen: set[str] = set()
            ours = [d for d in params.context.diagnostics if actions.is_ours(d)]
            for diagnostic in ours:
                fix = actions.quick_fix(uri, diagnostic, version, versioned)
                if fix is not None:
                    result.append(fix)
            result.extend(self.runtime.quick_fixes(uri, params.context.diagnostics, text, version))
            for diagnostic in ours:
                code = str(diagnostic.code)
                if (code, diagnostic.range.start.line) not in noqa_seen:
                    noqa_seen.add((code, diagnostic.range.start.line))
                    noqa = actions.noqa_action(uri, diagnostic, positions, version, versioned)
                    if noqa is not None:
                        result.append(noqa)
            top_uri, top_text, top_version = target.top or (uri, text, version)
            top = positions if top_uri == uri else PositionMap(top_text, self.encoding)
            for diagnostic in ours:
                code = str(diagnostic.code)
                if code not in file_seen:
                    file_seen.add(code)
                    result.append(
                        actions.ignore_file_action(top_uri, diagnostic, top, top_version, versioned)
                    )
        if only is not None and actions.kind_requested(actions.FIX_ALL_KIND, only):
            wanted = True
        else:
            # Unfiltered requests come on every cursor move: offer "fix all" only when a
            # current diagnostic has a safe fix.
            wanted = only is None and any(
                (stored := actions.stored_fix(d)) is not None and stored.applicability == "safe"
                for d in target.current
            )
        if wanted and self.resolves_edits:
            # The edit is worked out when the action is chosen (`codeAction/resolve`), not on
            # every cursor move: fixing a file analyses it again after each pass.
            data = {"uri": uri, "version": version}
            result.append(actions.fix_all_action(None, data))
        elif wanted:
            result.append(actions.fix_all_action(await self.fix_all_edit(uri)))
        return result

    @property
    def resolves_edits(self) -> bool:
        """Whether the client asks for a code action's edit with `codeAction/resolve`."""
        capabilities = self.client_capabilities
        document = capabilities.text_document if capabilities else None
        action = document.code_action if document else None
        support = action.resolve_support if action else None
        return bool(support and "edit" in support.properties)

    async def fix_all_edit(self, uri: str) -> types.WorkspaceEdit:
        """The edit that applies every safe fix of the document `uri` (of every cell, for a
        notebook's cell), computed with the document's project, as `torchlint check --fix`
        would."""
        versioned = self.versioned_edits
        notebook = self.notebook_of_cell(uri)
        if notebook is not None:
            return await self._fix_all_cells(notebook, versioned)
        document = self.workspace.get_text_document(uri)
        text, version = document.source, document.version
        context = self.document_context(uri)
        selection, _ = await self.in_thread(self.selection_for, context)
        edits: list[types.TextEdit] = []
        if selection is not None:
            fixing = await self.in_thread(
                lambda: self.files.fix(text, str(context.path), selection, path=file_path(uri))
            )
            for problem in fixing.problems:
                self.log(problem, types.MessageType.Error)
            edit = actions.replacement_edit(text, fixing.result.text, self.encoding)
            edits = [edit] if edit is not None else []
        return actions.workspace_edit(uri, version, edits, versioned)

    async def _fix_all_cells(self, state: NotebookState, versioned: bool) -> types.WorkspaceEdit:
        document = self.workspace.get_notebook_document(notebook_uri=state.uri)
        cells = [(d.uri, d.source, d.version) for d in state.code_cells(document)]
        numbers = state.numbers(document)
        context = self.document_context(state.uri)
        selection, _ = await self.in_thread(self.selection_for, context)
        edits: dict[str, types.TextEdit] = {}
        if selection is not None and cells:
            positions = [numbers.get(uri, 0) for uri, _, _ in cells]
            edits = await self.in_thread(
                fix_cells, cells, str(context.path), selection, self.encoding, positions
            )
        versions = {uri: version for uri, _, version in cells}
        return actions.edits_of_documents(
            {uri: (versions.get(uri), [edit]) for uri, edit in edits.items()}, versioned
        )

    async def resolve_code_action(self, action: types.CodeAction) -> types.CodeAction:
        """`codeAction/resolve`: the fix-all's edit, for the text the action was offered on (an
        edit without changes when the document has changed since: the client asks again)."""
        data = action.data if isinstance(action.data, dict) else {}
        uri, version = data.get("uri"), data.get("version")
        if action.kind != actions.FIX_ALL_KIND or not isinstance(uri, str):
            return action
        target = self.editable(uri)
        if target is not None and target.version == version:
            action.edit = await self.fix_all_edit(uri)
        else:
            action.edit = actions.workspace_edit(uri, version, [], self.versioned_edits)
        return action

    def hover(self, params: types.HoverParams) -> types.Hover | None:
        uri = params.text_document.uri
        state = self.tracked(uri)
        if state is None:
            return self.notebook_hover(params)
        version = self.workspace.get_text_document(uri).version
        diagnostics = state.current_diagnostics(version)
        if diagnostics is None:
            return None
        return hover_at(params.position, self.shown(uri, diagnostics))

    def notebook_hover(self, params: types.HoverParams) -> types.Hover | None:
        uri = params.text_document.uri
        state = self.notebook_of_cell(uri)
        diagnostics = state.published.get(uri) if state is not None else None
        return hover_at(params.position, diagnostics) if diagnostics else None

    def code_lens(self, params: types.CodeLensParams) -> list[types.CodeLens]:
        """The lenses of the document's last analysis, moved through the edits since (the
        analysis after the next edit places them again, and asks for a refresh if they moved
        otherwise): a lens request never waits for, or runs, an analysis. A notebook's cell
        gets the lenses of the training loops in it."""
        uri = params.text_document.uri
        state = self.tracked(uri)
        if state is not None:
            state.lens_served = state.lens_targets
            return code_lenses(uri, state.lens_targets)
        notebook = self.notebook_of_cell(uri)
        if notebook is None:
            return []
        targets = notebook.lenses.get(uri, LensTargets())
        notebook.lenses_served[uri] = targets
        return code_lenses(uri, targets)

    def lenses_found(self, state: DocumentState, targets: LensTargets) -> None:
        """A new analysis placed the lenses: ask the client to fetch them again when what it
        last got differs."""
        state.lens_targets = targets
        if state.lens_served is not None and state.lens_served != targets:
            state.lens_served = None
            self.refresh_lenses()

    def notebook_lenses_found(self, state: NotebookState, lenses: dict[str, LensTargets]) -> None:
        state.lenses = dict(lenses)
        moved = [
            uri
            for uri, served in state.lenses_served.items()
            if served != lenses.get(uri, LensTargets())
        ]
        if moved:
            state.lenses_served.clear()
            self.refresh_lenses()

    def refresh_lenses(self) -> None:
        capabilities = self.client_capabilities
        workspace = capabilities.workspace if capabilities else None
        lens = workspace.code_lens if workspace else None
        if lens and lens.refresh_support:
            self.spawn(self._refresh_lenses())

    async def _refresh_lenses(self) -> None:
        try:
            await self.workspace_code_lens_refresh_async(None)
        except Exception as exc:
            self.log(f"workspace/codeLens/refresh failed: {exc!r}", types.MessageType.Log)

    async def runtime_command(self, command: str, arguments: Sequence[Any]) -> dict[str, Any]:
        """A lens's runtime check (see `torchlint.lsp.runtime_runs`): the run's envelope, or
        why none started."""
        try:
            return await self.runtime.execute(command, arguments)
        except asyncio.CancelledError:
            raise
        except Exception:
            message = f"{command} failed inside the server:\n{traceback.format_exc()}"
            self.log(message, types.MessageType.Error)
            self.window_show_message(
                types.ShowMessageParams(
                    type=types.MessageType.Error,
                    message=f"{command} failed inside the server (see the torchlint log)",
                )
            )
            return {"status": "failed", "command": command, "message": message}

    async def debug_info(self, arguments: Sequence[Any]) -> dict[str, Any]:
        uri = arguments[0] if arguments and isinstance(arguments[0], str) else None
        context = self.document_context(uri) if uri else None
        info = await self.in_thread(
            lambda: debug_information(
                parser=self.parsers.name,
                position_encoding=self.encoding,
                open_documents=len(self.documents),
                folders=self.folder_uris(),
                global_settings=self.settings.global_settings,
                document=context,
            )
        )
        self.log(format_debug_information(info))
        return info


def _pushed_settings(value: Any) -> Any:
    """The `torchlint` settings inside what a client pushed (initialization options or a
    `didChangeConfiguration` payload): `{"torchlint": {...}}`, `{"settings": {...}}` or the
    table itself. Used only by clients that cannot answer `workspace/configuration`."""
    if not isinstance(value, dict):
        return None
    for key in (SECTION, "settings"):
        if isinstance(value.get(key), dict):
            return value[key]
    return value


def _older(version: int | None, than: int | None) -> bool:
    return version is not None and than is not None and version < than


def build_server() -> TorchlintServer:
    server = TorchlintServer()

    @server.feature(types.INITIALIZE)
    def initialize(ls: TorchlintServer, params: types.InitializeParams) -> None:
        ls.initialization_options = params.initialization_options
        # pygls has just made the (empty) workspace: one whose documents apply ranged changes
        # with the protocol's line breaks (`torchlint.lsp.text`).
        ls.protocol._workspace = TorchlintWorkspace.replacing(ls.workspace)

    @server.feature(types.INITIALIZED)
    async def initialized(ls: TorchlintServer, params: types.InitializedParams) -> None:
        if ls.parsers.problem:
            ls.log(ls.parsers.problem, types.MessageType.Warning)
        ls.log(f"torchlint {__version__} language server, parser: {ls.parsers.name}")
        ls.spawn(_register_configuration_change(ls))
        ls.spawn(_register_watched_files(ls))
        await ls.pull_settings(_pushed_settings(ls.initialization_options))

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(
        ls: TorchlintServer, params: types.DidChangeConfigurationParams
    ) -> None:
        await ls.settings_changed(_pushed_settings(params.settings))

    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    async def did_change_folders(
        ls: TorchlintServer, params: types.DidChangeWorkspaceFoldersParams
    ) -> None:
        await ls.settings_changed()

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: TorchlintServer, params: types.DidOpenTextDocumentParams) -> None:
        item = params.text_document
        if is_python_document(item.uri, item.language_id) and not ls.is_notebook_cell(item.uri):
            ls.open_document(item.uri)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
    def did_open_notebook(ls: TorchlintServer, params: types.DidOpenNotebookDocumentParams) -> None:
        ls.open_notebook(params)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
    def did_change_notebook(
        ls: TorchlintServer, params: types.DidChangeNotebookDocumentParams
    ) -> None:
        ls.notebook_changed(params)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_SAVE)
    def did_save_notebook(ls: TorchlintServer, params: types.DidSaveNotebookDocumentParams) -> None:
        ls.schedule_notebook(params.notebook_document.uri, delay=0.0)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
    def did_close_notebook(
        ls: TorchlintServer, params: types.DidCloseNotebookDocumentParams
    ) -> None:
        ls.close_notebook(
            params.notebook_document.uri, [cell.uri for cell in params.cell_text_documents]
        )

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: TorchlintServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.document_changed(params.text_document.uri, params.content_changes)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: TorchlintServer, params: types.DidSaveTextDocumentParams) -> None:
        ls.document_saved(params.text_document.uri)

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched_files(
        ls: TorchlintServer, params: types.DidChangeWatchedFilesParams
    ) -> None:
        ls.watched_files_changed(params.changes)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: TorchlintServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.close_document(params.text_document.uri)

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(
            code_action_kinds=[types.CodeActionKind.QuickFix, actions.FIX_ALL_KIND],
            resolve_provider=True,
        ),
    )
    async def code_action(
        ls: TorchlintServer, params: types.CodeActionParams
    ) -> list[types.CodeAction] | None:
        return await ls.code_actions(params)

    @server.feature(types.CODE_ACTION_RESOLVE)
    async def resolve_code_action(
        ls: TorchlintServer, params: types.CodeAction
    ) -> types.CodeAction:
        return await ls.resolve_code_action(params)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls: TorchlintServer, params: types.HoverParams) -> types.Hover | None:
        return ls.hover(params)

    @server.feature(types.TEXT_DOCUMENT_CODE_LENS, types.CodeLensOptions(resolve_provider=False))
    def code_lens(ls: TorchlintServer, params: types.CodeLensParams) -> list[types.CodeLens]:
        return ls.code_lens(params)

    @server.feature(types.SHUTDOWN)
    async def shutdown(ls: TorchlintServer, params: Any) -> None:
        await ls.runtime.stop_all(SHUTDOWN_WAIT_SECONDS)

    @server.command(OVERFIT)
    async def overfit(ls: TorchlintServer, *args: Any) -> dict[str, Any]:
        return await ls.runtime_command(OVERFIT, args)

    @server.command(GRADS)
    async def grads(ls: TorchlintServer, *args: Any) -> dict[str, Any]:
        return await ls.runtime_command(GRADS, args)

    @server.command(PROFILE)
    async def profile(ls: TorchlintServer, *args: Any) -> dict[str, Any]:
        return await ls.runtime_command(PROFILE, args)

    @server.command(SHOW_DEBUG_INFORMATION)
    async def show_debug_information(ls: TorchlintServer, *args: Any) -> dict[str, Any]:
        return await ls.debug_info(args)

    return server


async def _register_configuration_change(ls: TorchlintServer) -> None:
    """Ask the client to send `workspace/didChangeConfiguration` (VS Code's client sends it
    only to servers that register for it)."""
    capabilities = ls.client_capabilities
    workspace = capabilities.workspace if capabilities else None
    change = workspace.did_change_configuration if workspace else None
    if not (change and change.dynamic_registration):
        return
    registration = types.Registration(
        id="torchlint-did-change-configuration",
        method=types.WORKSPACE_DID_CHANGE_CONFIGURATION,
        register_options=types.DidChangeConfigurationRegistrationOptions(section=SECTION),
    )
    await _register(ls, registration, "configuration changes")


async def _register_watched_files(ls: TorchlintServer) -> None:
    """Ask the client to report Python files changed on disk (by another program, or a
    checkout): open documents that read them are linted again."""
    capabilities = ls.client_capabilities
    workspace = capabilities.workspace if capabilities else None
    watched = workspace.did_change_watched_files if workspace else None
    if not (watched and watched.dynamic_registration):
        return
    registration = types.Registration(
        id="torchlint-did-change-watched-files",
        method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
        register_options=types.DidChangeWatchedFilesRegistrationOptions(
            watchers=[
                types.FileSystemWatcher(glob_pattern=pattern) for pattern in ("**/*.py", "**/*.pyi")
            ]
        ),
    )
    await _register(ls, registration, "file changes")


async def _register(ls: TorchlintServer, registration: types.Registration, what: str) -> None:
    try:
        await ls.client_register_capability_async(
            types.RegistrationParams(registrations=[registration])
        )
    except Exception as exc:
        ls.log(f"could not register for {what}: {exc!r}", types.MessageType.Log)


def install_test_crash_hook() -> list[str]:
    """Make the rules named in `TORCHLINT_TEST_CRASH_RULE` raise (tests only; see the module
    docstring). Returns the codes it broke."""
    broken = []
    for key in os.environ.get(CRASH_RULE_ENV, "").split(","):
        rule = lookup(key.strip()) if key.strip() else None
        if rule is None:
            continue

        def crash(self: object, ctx: object, code: str = rule.code) -> None:
            raise RuntimeError(f"{code} crashed on purpose ({CRASH_RULE_ENV})")

        setattr(rule, "check", crash)  # noqa: B010 - a method swapped at run time, for tests
        broken.append(rule.code)
    return broken


def main() -> int:
    install_test_crash_hook()
    server = build_server()
    # What start-up made (modules, rules, the protocol's converters) lives as long as the
    # server: out of the collector's sight, a full collection while typing walks only the
    # documents' trees, not a few hundred thousand objects that are never garbage.
    gc.freeze()
    server.collector.install()  # and collections while typing, rare: see `idle_gc`
    protocol_out = sys.stdout.buffer
    # The protocol owns stdout: a stray print() anywhere must land on stderr instead.
    sys.stdout = sys.stderr
    server.start_io(sys.stdin.buffer, protocol_out)
    return 0
