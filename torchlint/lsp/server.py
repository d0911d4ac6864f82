"""The torchlint language server (pygls 2.x, over stdio): `torchlint lsp` or
`python -m torchlint.lsp`.

How the work is scheduled:

- *Settings first.* After `initialized` the server pulls the `torchlint` settings of every
  workspace folder (`workspace/configuration`). Nothing is published before they have arrived:
  every lint waits on `settings_ready`, so a document opened meanwhile is linted once, with
  them. `workspace/didChangeConfiguration` pulls them again and re-lints every open document.
- *Typing never waits.* The analysis runs in a worker thread, never on the event loop. An edit
  is linted after a 15 ms pause, which coalesces the edits an editor sends together; while an
  analysis runs, later edits queue behind it and only the newest is analysed next, so a burst
  costs at most two analyses. Opening and saving lint at once.
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
  (`torchlint.lsp.project_index`): calls into other project files are followed, reading open
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
from torchlint.analysis.source import parse_source
from torchlint.config import ConfigError, ConfigResolver
from torchlint.engine import Analysis, Parser, analyze_source
from torchlint.fixer import fix_text
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
from torchlint.lsp.hover import hover_at
from torchlint.lsp.lenses import (
    GRADS,
    OVERFIT,
    PROFILE,
    code_lenses,
    find_lens_targets,
    targets_of,
)
from torchlint.lsp.notebooks import NotebookState, analyse_cells, is_cell_uri, sync_options
from torchlint.lsp.project_index import (
    ProjectIndex,
    ProjectRun,
    analyse_with_project,
    file_path,
)
from torchlint.lsp.runtime_runs import SHUTDOWN_WAIT_SECONDS, RuntimeRuns
from torchlint.lsp.settings import (
    ClientSettings,
    SettingsStore,
    innermost_folder,
    parse_settings,
)
from torchlint.rules import lookup
from torchlint.selection import RuleSelection

NAME = "torchlint"
SECTION = "torchlint"
DEBOUNCE_SECONDS = 0.015
CONFIGURATION_TIMEOUT_SECONDS = 10.0
CRASH_RULE_ENV = "TORCHLINT_TEST_CRASH_RULE"

T = TypeVar("T")


@dataclass
class LintOutcome:
    """What a worker thread hands back to the event loop."""

    diagnostics: list[types.Diagnostic]
    logs: list[tuple[types.MessageType, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # shown to the user, once each
    dependencies: dict[Path, str] = field(default_factory=dict)  # other project files read


class TorchlintServer(LanguageServer):
    def __init__(self) -> None:
        # Full synchronisation: the analysis needs the whole text anyway, and pygls applies
        # incremental changes with `str.splitlines`, which also breaks lines at form feeds and
        # Unicode separators where editors do not.
        super().__init__(
            NAME,
            __version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Full,
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
        self.projects = ProjectIndex(self.open_text)

    # --- helpers ----------------------------------------------------------------------------

    def log(self, message: str, kind: types.MessageType = types.MessageType.Info) -> None:
        self.window_log_message(types.LogMessageParams(type=kind, message=message))

    def announce(self, message: str, kind: types.MessageType = types.MessageType.Warning) -> None:
        """Log and show `message`, once per settings pull (not on every keystroke)."""
        if message not in self._announced:
            self._announced.add(message)
            self.log(message, kind)
            self.window_show_message(types.ShowMessageParams(type=kind, message=message))

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
        store.global_settings = self._parse("global", raw_global)
        for folder in folders:
            raw = raw_folders.get(folder, raw_global)
            store.folders[folder] = self._parse(folder, raw)
        self.settings = store
        self.log(f"settings: {json.dumps(store.global_settings.to_json())}")
        for folder, settings in store.folders.items():
            if settings != store.global_settings:
                self.log(f"settings for {folder}: {json.dumps(settings.to_json())}")
        self.settings_ready.set()
        return True

    def _parse(self, scope: str, raw: Any) -> ClientSettings:
        settings, problems = parse_settings(raw)
        for problem in problems:
            self.announce(f"torchlint settings ({scope}): {problem}")
        return settings

    async def settings_changed(self, pushed: Any = None) -> None:
        if await self.pull_settings(pushed):
            for uri in list(self.documents):
                self.schedule(uri, delay=0.0)
            for uri in list(self.notebooks):
                self.schedule_notebook(uri, delay=0.0)

    # --- the project files documents read (see `torchlint.lsp.project_index`) ---------------

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
            self.projects.changed(path)
            dependents = [
                state
                for state in self.documents.values()
                if state.uri != uri and path in state.dependencies
            ]
            if typing:
                for state in dependents:
                    if self.settings.for_uri(state.uri).run == "onType":
                        self.schedule(state.uri, DEBOUNCE_SECONDS)
                return
            current = self.projects.current_hash(path) if dependents else None
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
            layouts = [layout for layout in self.projects.layouts if layout.contains(path)]
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

    def document_changed(self, uri: str) -> None:
        """An edit: runtime findings for the document are stale now; lint it again, and the
        documents that read it."""
        stale = self.runtime.document_changed(uri)
        if uri in self.documents:
            self.file_changed(file_path(uri), uri, typing=True)
        if uri in self.documents and self.settings.for_uri(uri).run == "onType":
            self.schedule(uri, DEBOUNCE_SECONDS)  # publishes without them
        elif stale:
            self.republish(uri)

    def document_saved(self, uri: str) -> None:
        self.schedule(uri, delay=0.0)
        if uri in self.documents:
            self.file_changed(file_path(uri), uri)

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
        runtime = self.runtime.diagnostics.for_uri(uri)
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(
                uri=uri,
                diagnostics=with_confirmations(static, runtime) + runtime,
                version=version,
            )
        )

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
                started = self.projects.sequence
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
                self.announce(warning)
            if not self._current(state, generation):
                return
            if self.projects.changed_since(outcome.dependencies, started):
                # It read a file that changed meanwhile, before it knew to watch that file.
                self.schedule(state.uri, DEBOUNCE_SECONDS)
                return
            if self.workspace.get_text_document(state.uri).version != version:
                return  # the document moved on: its own lint is on the way
            published = state.published
            if published is not None and _older(version, published.version):
                return
            state.published = Published(version, outcome.diagnostics)
            runtime = self.runtime.diagnostics.for_uri(state.uri)
            self.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(
                    uri=state.uri,
                    diagnostics=with_confirmations(outcome.diagnostics, runtime) + runtime,
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
        for identifier in (structure.did_close or []) if structure else []:
            if state.published.pop(identifier.uri, None) is not None:
                self.text_document_publish_diagnostics(
                    types.PublishDiagnosticsParams(uri=identifier.uri, diagnostics=[])
                )
        if self.settings.for_uri(state.uri).run == "onType":
            self.schedule_notebook(state.uri, DEBOUNCE_SECONDS)

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
                context = self.document_context(state.uri)
                results: dict[str, list[types.Diagnostic]] = {uri: [] for uri, _, _ in cells}
                if context.settings.enable and cells:
                    outcome = await self.in_thread(
                        self._analyse_notebook, state, context, cells, self.encoding
                    )
                    results, logs, warnings = outcome
                    for kind, message in logs:
                        self.log(message, kind)
                    for warning in warnings:
                        self.announce(warning)
            if not current():
                return
            stale = [uri for uri in state.published if uri not in results]
            for uri in stale:
                del state.published[uri]
                self.text_document_publish_diagnostics(
                    types.PublishDiagnosticsParams(uri=uri, diagnostics=[])
                )
            versions = {uri: version for uri, _, version in cells}
            for uri, diagnostics in results.items():
                state.published[uri] = diagnostics
                self.text_document_publish_diagnostics(
                    types.PublishDiagnosticsParams(
                        uri=uri, diagnostics=diagnostics, version=versions.get(uri)
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
        encoding: str,
    ) -> tuple[dict[str, list[types.Diagnostic]], list[tuple[types.MessageType, str]], list[str]]:
        """In a worker thread: the diagnostics of every code cell, logs and warnings. A
        notebook the configuration excludes gets empty lists (its cells are cleared)."""
        selection, problem = self.selection_for(context)
        warnings = [problem] if problem else []
        if selection is None:
            return {uri: [] for uri, _, _ in cells}, [], warnings
        results, analysis = analyse_cells(
            cells, str(context.path), selection, encoding, context.settings.severity
        )
        logs: list[tuple[types.MessageType, str]] = []
        for error in analysis.errors:
            if error not in state.logged:
                state.logged.add(error)
                logs.append((types.MessageType.Error, f"internal error: {error}"))
        return results, logs, warnings

    def selection_for(self, context: DocumentContext) -> tuple[RuleSelection | None, str | None]:
        """The rules for a document: its folder's `[tool.torchlint]` (found afresh each time,
        so edits to it count) with the client's `select` / `ignore` over it; None for a file
        the configuration's `exclude` leaves out (as `check --force-exclude` would). A broken
        configuration falls back to the client's settings alone, with a message."""
        overrides = context.settings.overrides
        try:
            resolver = ConfigResolver(overrides, cwd=context.root)
            if resolver.is_excluded(context.path, False, ancestors=True):
                return None, None
            return resolver.selection_for(context.path), None
        except ConfigError as exc:
            fallback = RuleSelection(overrides.select, overrides.ignore)
            return fallback, f"{exc} (linting with the editor settings only)"

    def _analyse(
        self,
        state: DocumentState,
        context: DocumentContext,
        text: str,
        version: int | None,
        encoding: str,
    ) -> LintOutcome:
        """In a worker thread: analyse and convert."""
        selection, problem = self.selection_for(context)
        outcome = LintOutcome([], warnings=[problem] if problem else [])
        if selection is None:
            return outcome  # excluded by the project's configuration
        filename = str(context.path)
        path = file_path(state.uri)  # None for an untitled document: no project

        def run(parse: Parser) -> ProjectRun:
            return analyse_with_project(
                self.projects,
                path,
                lambda project: analyze_source(
                    text, filename, selection, parse=parse, training_loops=True, project=project
                ),
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
        analysis = result.analysis
        outcome.dependencies = result.dependencies
        for problem in result.problems:
            if problem not in state.logged:
                state.logged.add(problem)
                outcome.logs.append((types.MessageType.Error, problem))
        state.lenses = (version, text, targets_of(analysis))  # the lens request reuses them
        self._collect_errors(state, analysis, outcome)
        outcome.diagnostics = to_lsp_diagnostics(
            analysis.diagnostics,
            text,
            uri=state.uri,
            version=version,
            encoding=encoding,
            severity_overrides=context.settings.severity,
        )
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

    async def code_actions(self, params: types.CodeActionParams) -> list[types.CodeAction] | None:
        uri = params.text_document.uri
        state = self.tracked(uri)
        if state is None:
            return None
        document = self.workspace.get_text_document(uri)
        text, version = document.source, document.version
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
            for diagnostic in ours:
                code = str(diagnostic.code)
                if (code, diagnostic.range.start.line) not in noqa_seen:
                    noqa_seen.add((code, diagnostic.range.start.line))
                    noqa = actions.noqa_action(uri, diagnostic, positions, version, versioned)
                    if noqa is not None:
                        result.append(noqa)
            for diagnostic in ours:
                code = str(diagnostic.code)
                if code not in file_seen:
                    file_seen.add(code)
                    result.append(
                        actions.ignore_file_action(uri, diagnostic, positions, version, versioned)
                    )
        if only is not None and actions.kind_requested(actions.FIX_ALL_KIND, only):
            wanted = True
        else:
            # Unfiltered requests come on every cursor move: offer "fix all" only when a
            # current diagnostic has a safe fix.
            current = state.current_diagnostics(version) or []
            wanted = only is None and any(
                (stored := actions.stored_fix(d)) is not None and stored.applicability == "safe"
                for d in current
            )
        if wanted:
            context = self.document_context(uri)
            selection, _ = await self.in_thread(self.selection_for, context)
            edit = None
            if selection is not None:
                fixed = await self.in_thread(fix_text, text, str(context.path), selection)
                edit = actions.replacement_edit(text, fixed.text, self.encoding)
            result.append(actions.fix_all_action(uri, edit, version, versioned))
        return result

    def hover(self, params: types.HoverParams) -> types.Hover | None:
        uri = params.text_document.uri
        state = self.tracked(uri)
        if state is None:
            return self.notebook_hover(params)
        version = self.workspace.get_text_document(uri).version
        diagnostics = state.current_diagnostics(version)
        if not diagnostics:
            return None
        return hover_at(params.position, diagnostics)

    def notebook_hover(self, params: types.HoverParams) -> types.Hover | None:
        uri = params.text_document.uri
        notebook = self.workspace.get_notebook_document(cell_uri=uri)
        state = self.notebooks.get(notebook.uri) if notebook is not None else None
        if state is None or not self.settings.for_uri(state.uri).enable:
            return None
        diagnostics = state.published.get(uri)
        return hover_at(params.position, diagnostics) if diagnostics else None

    async def code_lens(self, params: types.CodeLensParams) -> list[types.CodeLens]:
        uri = params.text_document.uri
        state = self.tracked(uri)
        if state is None:
            return []
        async with state.lock:
            document = self.workspace.get_text_document(uri)
            text, version = document.source, document.version
            cached = state.lenses
            if cached is not None and cached[0] == version and cached[1] == text:
                targets = cached[2]
            else:
                try:
                    targets = await self.in_thread(find_lens_targets, text, state.parse)
                except Exception:
                    self.log(
                        f"finding the training loops of {uri} failed:\n{traceback.format_exc()}",
                        types.MessageType.Error,
                    )
                    return []
                state.lenses = (version, text, targets)
        return code_lenses(uri, targets)

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
        ls.document_changed(params.text_document.uri)

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
            code_action_kinds=[types.CodeActionKind.QuickFix, actions.FIX_ALL_KIND]
        ),
    )
    async def code_action(
        ls: TorchlintServer, params: types.CodeActionParams
    ) -> list[types.CodeAction] | None:
        return await ls.code_actions(params)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls: TorchlintServer, params: types.HoverParams) -> types.Hover | None:
        return ls.hover(params)

    @server.feature(types.TEXT_DOCUMENT_CODE_LENS, types.CodeLensOptions(resolve_provider=False))
    async def code_lens(ls: TorchlintServer, params: types.CodeLensParams) -> list[types.CodeLens]:
        return await ls.code_lens(params)

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
    protocol_out = sys.stdout.buffer
    # The protocol owns stdout: a stray print() anywhere must land on stderr instead.
    sys.stdout = sys.stderr
    server.start_io(sys.stdin.buffer, protocol_out)
    return 0
