"""A notebook document's lints (see `torchlint.lsp.notebooks`): its Python code cells
analysed together as one program, with the same settings, pauses and worker threads as a text
document, each diagnostic published on its cell's URI; cells are never linted alone."""

from __future__ import annotations

import asyncio
import traceback
from collections.abc import Sequence

from lsprotocol import types

from torchlint.lsp.commands import DocumentContext
from torchlint.lsp.lenses import LensTargets
from torchlint.lsp.notebooks import CellResults, NotebookState, analyse_cells, is_cell_uri
from torchlint.lsp.server_analysis import DocumentAnalysis
from torchlint.lsp.server_documents import TYPING_PAUSE_SECONDS


class NotebookLints(DocumentAnalysis):
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

    def notebook_of_cell(self, uri: str) -> NotebookState | None:
        notebook = self.workspace.get_notebook_document(cell_uri=uri)
        state = self.notebooks.get(notebook.uri) if notebook is not None else None
        if state is None or not self.settings.for_uri(state.uri).enable:
            return None
        return state
