"""`torchlint check`: read the files, analyse them (cached, here or in processes), fix, report."""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

from torchlint.analysis.source import SourceDecodeError, decode_source
from torchlint.cache import Bucket, Cache, content_hash, settings_key
from torchlint.cli_args import OUTPUT_FORMAT_ENV
from torchlint.cli_fix import _fix_file
from torchlint.cli_output import UsageError, _debug, _error, _warning, _write_stdout
from torchlint.config import (
    CliOverrides,
    Config,
    ConfigError,
    ConfigResolver,
    parse_selector_option,
)
from torchlint.diagnostics import Diagnostic
from torchlint.discovery import ReadError, discover, display_path, read_file
from torchlint.fixer import fix_applies
from torchlint.notebook import is_notebook
from torchlint.notebook import read as read_notebook
from torchlint.parallel import Outcome, Task, analyze_all, outcome_of, worker_count
from torchlint.project.layout import ProjectLayout
from torchlint.report import (
    FORMATS,
    MACHINE_FORMATS,
    OutputFormat,
    Report,
    plural,
    render,
    render_statistics,
)
from torchlint.selection import RuleSelection
from torchlint.workspace import Workspace


@dataclass
class CheckRun:
    diagnostics: list[Diagnostic] = field(default_factory=list)
    sources: dict[str, str] = field(default_factory=dict)
    # The code of notebook cells with findings, by (file name, cell number), for code frames.
    cell_sources: dict[tuple[str, int], str] = field(default_factory=dict)
    fixed: int = 0  # fixes written (or, with --diff, that would be)
    diffs: list[str] = field(default_factory=list)
    failed: bool = False  # something went wrong: exit 2
    # How the files are analysed and fixed in this process (the projects, one per layout, live
    # for the whole run); the language server goes through the same `Workspace`.
    workspace: Workspace = field(default_factory=Workspace)

    def fail(self, message: str) -> None:
        _error(message)
        self.failed = True


@dataclass
class FileJob:
    """One file of a `check` run, from reading it to its final diagnostics."""

    path: Path
    selection: RuleSelection
    bucket: Bucket | None  # where its results are cached (None with --no-cache)
    # The project it is analysed in (None: on its own, with --no-project and for notebooks).
    layout: ProjectLayout | None = None
    data: bytes = b""
    digest: str = ""  # the hash of `data`, with a cache
    diagnostics: list[Diagnostic] | None = None  # None: not analysed yet
    errors: list[str] = field(default_factory=list)
    text: str | None = None  # the decoded text, when known
    cached: bool = False

    @property
    def filename(self) -> str:
        return str(self.path)

    def source_text(self) -> str:
        if self.text is None:
            try:
                self.text = decode_source(self.data)
            except SourceDecodeError:
                self.text = ""
        return self.text


def _output_format(args: argparse.Namespace) -> OutputFormat:
    chosen = args.output_format
    if chosen is None:
        chosen = os.environ.get(OUTPUT_FORMAT_ENV, "").strip() or "full"
        if chosen not in FORMATS:
            raise UsageError(
                f"${OUTPUT_FORMAT_ENV}: `{chosen}` is not an output format "
                f"(choose from {', '.join(FORMATS)})"
            )
    return cast(OutputFormat, chosen)


def _analyze_here(task: Task, run: CheckRun) -> Outcome:
    return outcome_of(
        run.workspace.analyse_file(task.data, task.filename, task.selection, layout=task.layout)
    )


def _analyze_pending(jobs: list[FileJob], args: argparse.Namespace, run: CheckRun) -> None:
    """Analyse the files the cache had nothing for, across processes when there are many."""
    pending = [job for job in jobs if job.diagnostics is None]
    if not pending:
        return
    workers = worker_count(len(pending), args.jobs)
    how = f"{workers} processes" if workers > 1 else "this process"
    _debug(args, f"analysing {plural(len(pending), 'file')} in {how}")
    tasks = [Task(job.filename, job.data, job.selection, job.layout) for job in pending]
    if workers > 1:
        outcomes = analyze_all(tasks, workers)
    else:  # here, where an unexpected exception ends the run like any other
        with _startup_frozen():
            outcomes = [_analyze_here(task, run) for task in tasks]
    for job, outcome in zip(pending, outcomes, strict=True):
        for message in outcome.errors:
            run.fail(f"internal error: {message}")
        job.diagnostics = outcome.diagnostics
        job.errors = outcome.errors
        if outcome.text:
            job.text = outcome.text
        if job.bucket is not None and not outcome.errors:
            job.bucket.put(job.path, job.digest, outcome.diagnostics, outcome.dependencies)


@contextlib.contextmanager
def _startup_frozen() -> Iterator[None]:
    """What the run built before analysing (modules, rules, the files read) is never garbage:
    the cyclic collector's passes leave it alone meanwhile (`gc.freeze`, as the workers and the
    language server do), and take it back after, unless something had frozen objects before."""
    frozen_before = gc.get_freeze_count()
    gc.freeze()
    try:
        yield
    finally:
        if not frozen_before:
            gc.unfreeze()


def _has_fixes(job: FileJob, unsafe: bool) -> bool:
    return any(fix_applies(d, unsafe) for d in job.diagnostics or ())


def _add_sources(job: FileJob, run: CheckRun) -> None:
    """What the code frames of a file's findings show: its text, or a notebook's cells."""
    if not is_notebook(job.filename):
        run.sources[job.filename] = job.source_text()
        return
    try:
        notebook = read_notebook(job.data)
    except ValueError:
        return
    for number, text in notebook.cell_texts().items():
        run.cell_sources[(job.filename, number)] = text


def _read_jobs(
    files: list[tuple[Path, RuleSelection, Config]],
    resolver: ConfigResolver,
    cache: Cache | None,
    args: argparse.Namespace,
    run: CheckRun,
) -> list[FileJob]:
    """Read every file, find its project, and look its results up in the cache (once every
    file has been read: their hashes serve the dependency checks of the others)."""
    jobs: list[FileJob] = []
    layouts: dict[Path, ProjectLayout] = {}  # by folder: the files of a folder share one
    with_project = not args.no_project
    for path, selection, config in files:
        layout: ProjectLayout | None = None
        if with_project and not is_notebook(str(path)):
            layout = layouts.get(path.parent)
            if layout is None:
                layout = layouts[path.parent] = ProjectLayout.for_file(path)
        if args.verbose:
            _debug(
                args,
                f"checking {display_path(path)} (config: {config.path or 'defaults'}; "
                f"rules: {selection.cache_key() or 'none'}; "
                f"project: {display_path(layout.root) if layout is not None else 'none'})",
            )
        bucket: Bucket | None = None
        if cache is not None:
            root = config.path.parent if config.path is not None else resolver.cwd
            settings = settings_key(selection, config.target_torch_version, with_project)
            bucket = cache.bucket(root, settings)
        job = FileJob(path, selection, bucket, layout)
        try:
            job.data = read_file(path)
        except ReadError as exc:
            run.fail(f"{display_path(path)}: {exc}")
            continue
        if cache is not None:
            job.digest = content_hash(job.data)
            cache.hashes.remember(path, job.digest)
        jobs.append(job)
    for job in jobs:
        if job.bucket is not None:
            job.diagnostics = job.bucket.get(job.path, job.digest)
            job.cached = job.diagnostics is not None
    return jobs


def cmd_check(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    output_format = _output_format(args)
    if args.statistics and args.diff:
        raise UsageError("--statistics cannot be combined with --diff")
    try:
        select = parse_selector_option(args.select, "--select")
        ignore = parse_selector_option(args.ignore, "--ignore") or ()
        extend = parse_selector_option(args.extend_select, "--extend-select") or ()
        config = Path(args.config) if args.config else None
        if config is not None and not config.is_file():
            raise ConfigError(f"--config: {args.config}: no such file")
        resolver = ConfigResolver(CliOverrides(select, ignore, config, extend))
        paths = args.paths or ["."]
        found = discover(paths, resolver, force_exclude=args.force_exclude)
        files = [
            (path, resolver.selection_for(path), resolver.config_for_dir(path.parent))
            for path in found.files
        ]
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    run = CheckRun()
    for message in found.errors:
        run.fail(message)
    if not found.files and not found.errors:
        _warning(f"No Python files found under {', '.join(paths)}")
    cache = None if args.no_cache else Cache()
    jobs = _read_jobs(files, resolver, cache, args, run)
    hits = sum(1 for job in jobs if job.cached)
    _analyze_pending(jobs, args, run)
    if args.fix or args.diff:
        for job in jobs:
            if _has_fixes(job, args.unsafe_fixes):
                _fix_file(job, args, run)
    for job in jobs:
        if job.diagnostics:
            run.diagnostics.extend(job.diagnostics)
            _add_sources(job, run)
    run.diagnostics.sort(key=lambda d: d.sort_key)
    if cache is not None:
        for problem in cache.save():
            _debug(args, problem)
    _debug(
        args,
        f"checked {plural(len(jobs), 'file')} in {(time.perf_counter() - started) * 1000:.0f} ms"
        + (f" ({hits} from the cache)" if cache is not None else " (no cache)"),
    )

    if args.diff:
        _write_stdout("".join(run.diffs))
        if run.fixed:
            print(f"Would fix {plural(run.fixed, 'error')}.", file=sys.stderr)
        else:
            print("No errors would be fixed.", file=sys.stderr)
        found_something = run.fixed > 0
    else:
        report = Report(
            run.diagnostics,
            run.sources,
            cell_sources=run.cell_sources,
            fix_mode=args.fix,
            fixed=run.fixed,
            unsafe_fixes=args.unsafe_fixes,
            had_errors=run.failed,
        )
        if args.statistics:
            render_statistics(report, output_format, sys.stdout)
            machine = output_format == "json"
        else:
            render(report, output_format, sys.stdout)
            machine = output_format in MACHINE_FORMATS
        if machine and args.fix and run.fixed:
            print(f"Fixed {plural(run.fixed, 'error')}.", file=sys.stderr)
        found_something = bool(run.diagnostics) or (
            args.exit_non_zero_on_fix and args.fix and run.fixed > 0
        )
    if run.failed:
        return 2
    return 1 if found_something and not args.exit_zero else 0
