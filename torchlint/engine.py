"""`analyze()`: source text in, diagnostics out. The CLI, the language server and the fixer all
call this one function."""

from __future__ import annotations

import gc
import os
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from torchlint.analysis.collect import collect
from torchlint.analysis.frameworks import framework_bodies
from torchlint.analysis.loops import LoopModels
from torchlint.analysis.positions import PositionIndex
from torchlint.analysis.resolve import resolve
from torchlint.analysis.source import (
    ParsedSource,
    ParseFailure,
    SourceDecodeError,
    decode_source,
    parse_source,
)
from torchlint.analysis.training import is_main_guard, outermost_training_loops
from torchlint.diagnostics import Diagnostic, Location
from torchlint.project_view import AnalysisProject, FileView
from torchlint.rules.base import RuleContext
from torchlint.rules.syntax_error import SyntaxErrorRule
from torchlint.selection import RuleSelection
from torchlint.suppression import Suppressions

DEFAULT_SELECTION = RuleSelection()


@dataclass
class Analysis:
    """Everything one run over one file produced."""

    filename: str
    text: str
    diagnostics: list[Diagnostic] = field(default_factory=list)
    # Rules that crashed on this file (internal errors): the rest still ran.
    errors: list[str] = field(default_factory=list)
    # Only with `training_loops=True` (the language server's code lenses): the rows of the
    # outermost loops that do a training step's work, and of `if __name__ == "__main__":`.
    training_loop_rows: tuple[int, ...] = ()
    main_guard_row: int | None = None
    # With a project: the other project files this analysis read (path -> content hash). The
    # results stay valid while none of them changes.
    dependencies: dict[Path, str] = field(default_factory=dict)


def analyze(
    text: str, filename: str = "<stdin>", selection: RuleSelection = DEFAULT_SELECTION
) -> list[Diagnostic]:
    return analyze_source(text, filename, selection).diagnostics


def analyze_bytes(
    data: bytes,
    filename: str,
    selection: RuleSelection = DEFAULT_SELECTION,
    project: AnalysisProject | None = None,
) -> Analysis:
    try:
        text = decode_source(data)
    except SourceDecodeError as exc:
        analysis = Analysis(filename, "")
        if selection.enabled(SyntaxErrorRule):
            analysis.diagnostics.append(
                _syntax_diagnostic(
                    filename, f"cannot read the file as Python source: {exc}", Location(exc.row, 1)
                )
            )
        return analysis
    return analyze_source(text, filename, selection, project=project)


Parser = Callable[[str], ParsedSource | ParseFailure]


def analyze_source(
    text: str,
    filename: str = "<stdin>",
    selection: RuleSelection = DEFAULT_SELECTION,
    parse: Parser = parse_source,
    training_loops: bool = False,
    project: AnalysisProject | None = None,
) -> Analysis:
    """Analyse `text`. `parse` may be swapped for one that reuses earlier work (the language
    server re-parses only the top-level blocks an edit touched); it must return what
    `parse_source` would. `training_loops` also locates the training loops (for code lenses),
    from the same model the rules used. With `project` (and `filename` a path in it), calls
    into other project files are followed."""
    with gc_paused():
        return _analyze(text, filename, selection, parse, training_loops, project)


@contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic garbage collection while one file is analysed. A libcst tree is tens of
    thousands of objects; collections triggered mid-analysis would walk it again and again and
    promote it to the oldest generation, where it would outlive the analysis. Paused, all of a
    file's objects stay young, and the first collection after it frees them cheaply."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _analyze(
    text: str,
    filename: str,
    selection: RuleSelection,
    parse: Parser,
    training_loops: bool,
    project: AnalysisProject | None,
) -> Analysis:
    analysis = Analysis(filename, text)
    rules = selection.rules()
    parsed = parse(text)
    suppressions = Suppressions(text)
    if isinstance(parsed, ParseFailure):
        if SyntaxErrorRule in rules and not suppressions.suppressed(
            SyntaxErrorRule.code, (parsed.location.row,)
        ):
            analysis.diagnostics.append(
                _syntax_diagnostic(filename, parsed.message, parsed.location)
            )
        return analysis
    context = None
    if project is not None:
        path = Path(os.path.abspath(filename))
        project.begin()
        if project.layout.contains(path):
            context = FileView(project.context(path))
        else:
            project = None
    try:
        watched = frozenset().union(*(rule.watches for rule in rules))
        prefixes = tuple(p for rule in rules for p in rule.watches_prefixes)
        facts = collect(parsed, context, watched, prefixes)
        roles = resolve(facts, context)
    except RecursionError:
        analysis.errors.append(f"{filename}: nested too deeply to analyse; skipped")
        return analysis
    except Exception as exc:  # a bug of ours must cost one file, never the run
        detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        analysis.errors.append(f"{filename}: internal error while reading the file: {detail}")
        return analysis
    loops = LoopModels(facts.scopes, roles, framework_bodies(facts.classes, facts.imports))
    positions = PositionIndex(parsed, facts.anchors)
    ctx = RuleContext(
        facts,
        roles,
        loops,
        positions,
        filename,
        selection.target_torch,
        selection.torch_floor,
        project=project,
        file_context=context,
    )
    for rule in rules:
        if rule is SyntaxErrorRule:
            continue
        ctx._rule = rule
        before = len(ctx.findings)
        try:
            rule().check(ctx)
        except Exception as exc:  # one broken rule must not take the others down
            del ctx.findings[before:]
            detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
            analysis.errors.append(f"{filename}: rule {rule.code} failed: {detail}")
    try:
        analysis.diagnostics.extend(_diagnostics(ctx, suppressions, filename))
        if training_loops:
            loops_written = [m for m in ctx.step_loops if not m.loop.runner]
            outermost = outermost_training_loops(loops_written)
            analysis.training_loop_rows = tuple(
                sorted({positions.row(m.loop.node) for m in outermost})
            )
            main = next((s for s in parsed.module.body if is_main_guard(s)), None)
            analysis.main_guard_row = positions.row(main) if main is not None else None
    finally:
        facts.release()  # no reference cycles left: the tree is freed as soon as we return
        if project is not None:
            own = Path(os.path.abspath(filename))
            analysis.dependencies = {p: h for p, h in project.consulted.items() if p != own}
            project.in_use = []
    analysis.diagnostics.sort(key=lambda d: d.sort_key)
    return analysis


def _diagnostics(ctx: RuleContext, suppressions: Suppressions, filename: str) -> list[Diagnostic]:
    result: list[Diagnostic] = []
    seen: set[tuple[str, int]] = set()
    for finding in ctx.findings:
        key = (finding.rule.code, id(finding.node))
        if key in seen:
            continue
        seen.add(key)
        span = ctx.positions.span(finding.node)
        if suppressions.suppressed(finding.rule.code, (span.start.row, span.end.row)):
            continue
        result.append(
            Diagnostic(
                code=finding.rule.code,
                name=finding.rule.name,
                message=finding.message,
                severity=finding.rule.severity,
                filename=filename,
                location=span.start,
                end_location=span.end,
                fix=finding.fix,
                related=finding.related,
            )
        )
    return result


def _syntax_diagnostic(filename: str, message: str, location: Location) -> Diagnostic:
    return Diagnostic(
        code=SyntaxErrorRule.code,
        name=SyntaxErrorRule.name,
        message=f"Syntax error: {message}; nothing else in this file was checked.",
        severity=SyntaxErrorRule.severity,
        filename=filename,
        location=location,
        end_location=Location(location.row, location.column + 1),
    )
