"""The code actions (`textDocument/codeAction`, `codeAction/resolve`): a diagnostic's quick
fix, the runtime checks' fixes, `noqa` and `ignore-file` comments, and "fix all", whose edit
applies every safe fix with the document's project, as `torchlint check --fix` would. The
edits themselves are `torchlint.lsp.actions`."""

from __future__ import annotations

from dataclasses import dataclass

from lsprotocol import types

from torchlint.lsp import actions
from torchlint.lsp.convert import PositionMap
from torchlint.lsp.notebooks import NotebookState, fix_cells
from torchlint.lsp.server_analysis import DocumentAnalysis
from torchlint.lsp.text import file_path


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


class CodeActions(DocumentAnalysis):
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
