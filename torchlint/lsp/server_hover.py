"""The hover (`textDocument/hover`): the current diagnostics under the cursor, of a document
or a notebook's cell, as `torchlint.lsp.hover` writes them."""

from __future__ import annotations

from lsprotocol import types

from torchlint.lsp.hover import hover_at
from torchlint.lsp.server_core import ServerCore


class Hovers(ServerCore):
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
