"""A document's analysis, in a worker thread: the rules its configuration selects, the
analysis with its project (through syntax errors, see `torchlint.lsp.partial`; from scratch
when the incremental parser fails), the lenses' places and the LSP diagnostics. The parts
that lint or fix (documents, notebooks, code actions) build on it."""

from __future__ import annotations

import traceback

from lsprotocol import types

from torchlint.analysis.source import ParsedSource, ParseFailure, parse_source
from torchlint.config import ConfigError, ConfigResolver
from torchlint.engine import Analysis, Parser
from torchlint.lsp.commands import DocumentContext
from torchlint.lsp.convert import to_lsp_diagnostics
from torchlint.lsp.documents import DocumentState, LintOutcome
from torchlint.lsp.lenses import kept_lenses
from torchlint.lsp.partial import BrokenBlock, mask_broken_blocks, syntax_diagnostics
from torchlint.lsp.server_core import ServerCore
from torchlint.lsp.settings import editor_excludes
from torchlint.lsp.text import file_path
from torchlint.rules.syntax_error import SyntaxErrorRule
from torchlint.selection import RuleSelection
from torchlint.workspace import FileRun


class DocumentAnalysis(ServerCore):
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
