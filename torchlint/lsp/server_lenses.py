"""The code lenses (`textDocument/codeLens`) of a document or a notebook's cells, from the
last analysis (placed by `torchlint.lsp.lenses`), and the refresh the client is asked for when
an analysis moved them."""

from __future__ import annotations

from lsprotocol import types

from torchlint.lsp.documents import DocumentState
from torchlint.lsp.lenses import LensTargets, code_lenses
from torchlint.lsp.notebooks import NotebookState
from torchlint.lsp.server_core import ServerCore


class CodeLenses(ServerCore):
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
