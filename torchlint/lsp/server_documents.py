"""A text document's lints: opened, edited, saved and closed; each lint scheduled after its
pause, superseding the earlier ones, run in a worker thread (`server_analysis.py`) and
published only while the document still has the version it was computed for, with what the
runtime checks found in it (see the module docstring of server.py)."""

from __future__ import annotations

import asyncio
import traceback
from collections.abc import Callable, Sequence
from typing import Any

from lsprotocol import types

from torchlint.analysis.source import parse_source
from torchlint.lsp.confirmed import with_confirmations
from torchlint.lsp.documents import DocumentState, LintOutcome, Published
from torchlint.lsp.findings import merge
from torchlint.lsp.lenses import shifted
from torchlint.lsp.notebooks import NotebookState
from torchlint.lsp.server_analysis import DocumentAnalysis
from torchlint.lsp.text import file_path

TYPING_PAUSE_SECONDS = 0.0  # an edited document: lint at once (see the module docstring)
DEPENDENT_PAUSE_SECONDS = 0.015  # a document that reads an edited file


class DocumentLints(DocumentAnalysis):
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

    def tracked(self, uri: str) -> DocumentState | None:
        state = self.documents.get(uri)
        if state is None or not self.settings.for_uri(uri).enable:
            return None
        return state


def _older(version: int | None, than: int | None) -> bool:
    return version is not None and than is not None and version < than
