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

The server is one class, `TorchlintServer`, made of parts, one module each: the state and
what every part uses (`server_core.py`), the settings (`server_settings.py`), the project
files the documents read (`server_files.py`), a document's lints (`server_documents.py`) and
its analysis in a worker thread (`server_analysis.py`), notebooks (`server_notebooks.py`), the
code actions (`server_actions.py`), the hover (`server_hover.py`), the code lenses
(`server_lenses.py`) and the commands (`server_commands.py`). This module joins them and
registers the protocol's features.
"""

from __future__ import annotations

import gc
import os
import sys
from typing import Any

from lsprotocol import types

from torchlint import __version__
from torchlint.lsp import actions
from torchlint.lsp.commands import SHOW_DEBUG_INFORMATION
from torchlint.lsp.documents import is_python_document
from torchlint.lsp.lenses import GRADS, OVERFIT, PROFILE
from torchlint.lsp.runtime_runs import SHUTDOWN_WAIT_SECONDS
from torchlint.lsp.server_actions import CodeActions
from torchlint.lsp.server_commands import Commands
from torchlint.lsp.server_documents import DocumentLints
from torchlint.lsp.server_files import ProjectFiles
from torchlint.lsp.server_hover import Hovers
from torchlint.lsp.server_lenses import CodeLenses
from torchlint.lsp.server_notebooks import NotebookLints
from torchlint.lsp.server_settings import SECTION, ServerSettings, pushed_settings
from torchlint.lsp.text import TorchlintWorkspace
from torchlint.rules import lookup

CRASH_RULE_ENV = "TORCHLINT_TEST_CRASH_RULE"


class TorchlintServer(
    ServerSettings,
    ProjectFiles,
    DocumentLints,
    NotebookLints,
    CodeActions,
    Hovers,
    CodeLenses,
    Commands,
):
    """The language server: its parts joined (mixins over `ServerCore`)."""


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
        await ls.pull_settings(pushed_settings(ls.initialization_options))

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(
        ls: TorchlintServer, params: types.DidChangeConfigurationParams
    ) -> None:
        await ls.settings_changed(pushed_settings(params.settings))

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
