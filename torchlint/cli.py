"""The `torchlint` command: `check`, `rules`, `rule`, `clean`, `lsp`.

Exit status: 0 when nothing was found, 1 when something was, 2 on a usage, configuration or
internal error (a message on stderr; a traceback only with `--verbose`). Findings and summaries
go to stdout, errors and warnings to stderr.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import io
import json
import os
import sys
import time
import traceback
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn, cast

from torchlint import __version__
from torchlint.analysis.source import ParseFailure, SourceDecodeError, decode_source, parse_source
from torchlint.cache import (
    CACHE_DIR_NAME,
    Bucket,
    Cache,
    content_hash,
    find_cache_dirs,
    remove_cache_dir,
    settings_key,
)
from torchlint.config import (
    CliOverrides,
    Config,
    ConfigError,
    ConfigResolver,
    parse_selector_option,
)
from torchlint.diagnostics import Diagnostic
from torchlint.discovery import ReadError, discover, display_path, read_file
from torchlint.fixer import (
    EncodingError,
    decode_file,
    encode_file,
    fix_applies,
    unified_diff,
    write_atomic,
)
from torchlint.notebook import fix_notebook, is_notebook
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
from torchlint.rules import ALL_RULES, Rule, lookup
from torchlint.runtime.checks import CHECKS, add_run_arguments
from torchlint.selection import RuleSelection
from torchlint.workspace import Workspace

OUTPUT_FORMAT_ENV = "TORCHLINT_OUTPUT_FORMAT"


class UsageError(Exception):
    """A problem with the command line or the configuration: exit 2 with the message."""


class _Parser(argparse.ArgumentParser):
    """argparse, with its usage errors on stderr and exit status 2 (as argparse does), but
    without the long usage block repeated before every message."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="torchlint",
        description="A linter for PyTorch training code.",
    )
    parser.add_argument("--version", action="version", version=f"torchlint {__version__}")
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="print progress, and tracebacks on errors"
    )
    # The subcommands' `--verbose` must not reset what was given before the subcommand.
    common = _Parser(add_help=False)
    common.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        default=argparse.SUPPRESS,
        help="print progress, and tracebacks on errors",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    check = commands.add_parser(
        "check", parents=[common], help="check files and folders", description="Check files."
    )
    check.add_argument("paths", nargs="*", metavar="PATH", help="files or folders (default: .)")
    check.add_argument(
        "--output-format",
        choices=FORMATS,
        default=None,
        help=f"how to show the findings (default: full, or ${OUTPUT_FORMAT_ENV})",
    )
    check.add_argument(
        "--select",
        action="append",
        metavar="RULES",
        help="comma-separated rules to run (codes, prefixes, names or ALL); replaces the "
        "configuration's `select`",
    )
    check.add_argument(
        "--extend-select",
        action="append",
        metavar="RULES",
        help="comma-separated rules to run on top of the selection (the configuration's or "
        "--select's)",
    )
    check.add_argument(
        "--ignore",
        action="append",
        metavar="RULES",
        help="comma-separated rules not to run; added to the configuration's `ignore`",
    )
    check.add_argument("--fix", action="store_true", help="apply the safe fixes")
    check.add_argument(
        "--unsafe-fixes", action="store_true", help="also apply the unsafe fixes (with --fix)"
    )
    check.add_argument(
        "--diff",
        action="store_true",
        help="print a diff of what --fix would change, write nothing",
    )
    check.add_argument(
        "--exit-zero", action="store_true", help="exit 0 even when something is found"
    )
    check.add_argument(
        "--force-exclude",
        action="store_true",
        help="apply the exclusions to files named on the command line too",
    )
    check.add_argument(
        "--exit-non-zero-on-fix",
        action="store_true",
        help="with --fix, exit 1 when something was fixed, even if nothing is left",
    )
    check.add_argument(
        "--statistics",
        action="store_true",
        help="show how many findings each rule has instead of the findings",
    )
    check.add_argument(
        "--no-cache",
        action="store_true",
        help=f"neither read nor write the results cache ({CACHE_DIR_NAME}/)",
    )
    check.add_argument(
        "--no-project",
        action="store_true",
        help="analyse each file on its own: do not follow calls into other project files",
    )
    check.add_argument(
        "--jobs",
        type=_jobs_value,
        default=None,
        metavar="N",
        help="processes that analyse files (default: one per CPU when there are many files; "
        "1: analyse in the torchlint process)",
    )
    check.add_argument(
        "--config",
        metavar="PYPROJECT",
        help="use this pyproject.toml for every file instead of looking for the nearest one",
    )

    rules = commands.add_parser(
        "rules", parents=[common], help="list the rules", description="List every rule."
    )
    rules.add_argument("--output-format", choices=("text", "json"), default="text")

    rule = commands.add_parser(
        "rule",
        parents=[common],
        help="show a rule's documentation",
        description="Show the documentation of one rule.",
    )
    rule.add_argument("key", metavar="CODE_OR_NAME", help="a rule code (TL101) or name")
    rule.add_argument("--output-format", choices=("text", "json"), default="text")

    run = commands.add_parser(
        "run",
        parents=[common],
        help="run a runtime check on a training script (executes it, in a child process)",
        description="Run your unmodified training script in a child process under light "
        "instrumentation and check the training step: `overfit` replays the first training "
        "batch and expects the loss to collapse; `grads` scans every parameter's gradient. "
        "Arguments for the script go after `--`: torchlint run overfit train.py -- --lr 0.1. "
        "Exit status: 0 pass, 1 the check failed, 2 it could not run.",
        usage=f"torchlint run {{{','.join(CHECKS)}}} SCRIPT [options] [-- SCRIPT_ARGS ...]",
        allow_abbrev=False,  # a script's --lr must never be read as our --lr-min
    )
    add_run_arguments(run)

    commands.add_parser(
        "lsp",
        parents=[common],
        help="start the language server (on stdin/stdout, for editors)",
        description="Start the torchlint language server, speaking the Language Server "
        "Protocol on stdin and stdout.",
    )

    commands.add_parser(
        "clean",
        parents=[common],
        help=f"remove the {CACHE_DIR_NAME} folders under the current directory",
        description=f"Remove every {CACHE_DIR_NAME} folder under the current directory.",
    )
    return parser


def _jobs_value(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"`{text}` is not a number of processes") from None
    if value < 0:
        raise argparse.ArgumentTypeError("the number of processes cannot be negative")
    return value


# --- output helpers ------------------------------------------------------------------------


def _error(message: str) -> None:
    print(f"error: {message}", file=sys.stderr)


def _warning(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr)


def _debug(args: argparse.Namespace, message: str) -> None:
    if args.verbose:
        print(f"debug: {message}", file=sys.stderr)


def _write_stdout(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


# --- check ---------------------------------------------------------------------------------


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


def _changed_on_disk(job: FileJob) -> str | None:
    """Why the file must not be rewritten: its bytes are no longer those the fixes were
    computed from (someone saved it meanwhile), or it can no longer be read. None if unchanged."""
    try:
        current = read_file(job.path)
    except ReadError as exc:
        return str(exc)
    if current != job.data:
        return "the file changed on disk since it was read"
    return None


def _fix_file(job: FileJob, args: argparse.Namespace, run: CheckRun) -> None:
    """Apply (or, with --diff, show) the fixes of a file whose findings have some. The file is
    analysed again from its text: results from the cache are never trusted for a rewrite."""
    path, filename = job.path, job.filename
    shown = display_path(path)
    if is_notebook(filename):
        _fix_notebook(job, args, run)
        return
    source = decode_file(job.data)
    if source is None:  # the engine reported why it cannot be read; nothing to fix
        return
    fixing = run.workspace.fix(
        source.text,
        filename,
        job.selection,
        path=job.path if job.layout is not None else None,
        layout=job.layout,
        unsafe=args.unsafe_fixes,
    )
    for message in fixing.problems:
        _debug(args, message)
    result = fixing.result
    for message in result.errors:
        if message not in job.errors:  # reported already by the first analysis
            run.fail(f"internal error: {message}")
    for message in result.rejected:
        run.fail(f"internal error: {message}")
    if result.text == source.text:
        job.diagnostics = result.remaining_diagnostics
        job.text = source.text
        return
    if args.diff:
        run.diffs.append(unified_diff(source.text, result.text, shown))
        run.fixed += result.fixed_count
        return
    problem: str | None = None
    written: bytes | None = None
    if isinstance(parse_source(result.text), ParseFailure):
        problem = "the fixed text no longer parses"
    elif not source.round_trips:
        problem = f"its bytes do not survive decoding and encoding as {source.encoding}"
    else:
        try:
            written = encode_file(source, result.text)
        except EncodingError as exc:
            problem = str(exc)
        else:
            problem = _changed_on_disk(job)
            if problem is None:
                try:
                    write_atomic(path, written)
                except OSError as exc:
                    problem = f"cannot write the file: {exc.strerror or exc}"
    if problem is not None or written is None:
        run.fail(f"{shown}: not fixed: {problem}")
        job.text = source.text  # the findings of the first analysis stand
        return
    _debug(args, f"{shown}: fixed {plural(result.fixed_count, 'error')}")
    run.fixed += result.fixed_count
    job.diagnostics = result.remaining_diagnostics
    job.text = result.text
    if job.bucket is not None and not result.errors and not result.rejected:
        job.bucket.put(
            path, content_hash(written), result.remaining_diagnostics, result.dependencies
        )


def _fix_notebook(job: FileJob, args: argparse.Namespace, run: CheckRun) -> None:
    """`_fix_file` for a notebook: only the changed cells' sources are rewritten."""
    shown = display_path(job.path)
    result = fix_notebook(job.data, job.filename, job.selection, unsafe=args.unsafe_fixes)
    for message in result.errors:
        if message not in job.errors:
            run.fail(f"internal error: {message}")
    for message in result.rejected:
        run.fail(f"internal error: {message}")
    if result.problem is not None:
        run.fail(f"{shown}: not fixed: {result.problem}")
        return
    if result.data is None:
        job.diagnostics = result.remaining_diagnostics
        return
    if args.diff:
        for cell, (old, new) in sorted(result.changed.items()):
            run.diffs.append(unified_diff(old, new, f"{shown}:cell {cell}"))
        run.fixed += result.fixed_count
        return
    changed = _changed_on_disk(job)
    if changed is not None:
        run.fail(f"{shown}: not fixed: {changed}")
        return
    try:
        write_atomic(job.path, result.data)
    except OSError as exc:
        run.fail(f"{shown}: not fixed: cannot write the file: {exc.strerror or exc}")
        return
    _debug(args, f"{shown}: fixed {plural(result.fixed_count, 'error')}")
    run.fixed += result.fixed_count
    job.diagnostics = result.remaining_diagnostics
    job.data = result.data
    if job.bucket is not None and not result.errors and not result.rejected:
        # A notebook is analysed alone: it has no dependencies.
        job.bucket.put(job.path, content_hash(result.data), result.remaining_diagnostics, {})


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


# --- clean ---------------------------------------------------------------------------------


def cmd_clean(args: argparse.Namespace) -> int:
    cwd = Path.cwd()
    failed = False
    removed = 0
    for folder in find_cache_dirs(cwd):
        try:
            remove_cache_dir(folder)
        except OSError as exc:
            _error(f"cannot remove {display_path(folder)}: {exc.strerror or exc}")
            failed = True
            continue
        removed += 1
        print(f"Removed {display_path(folder)}")
    if not removed and not failed:
        print(f"Nothing to clean: no {CACHE_DIR_NAME} folder under {display_path(cwd)}")
    return 2 if failed else 0


# --- rules / rule --------------------------------------------------------------------------


def _rule_json(rule: type[Rule]) -> dict[str, Any]:
    return {
        "code": rule.code,
        "name": rule.name,
        "family": rule.family,
        "severity": rule.severity.value,
        "default_enabled": rule.default_enabled,
        "fixable": rule.fixable,
        "summary": rule.summary,
    }


def cmd_rules(args: argparse.Namespace) -> int:
    if args.output_format == "json":
        _write_stdout(json.dumps([_rule_json(rule) for rule in ALL_RULES], indent=2) + "\n")
        return 0
    from rich import box
    from rich.table import Table

    from torchlint.report import make_console

    console = make_console(sys.stdout)
    console.soft_wrap = False
    if not console.is_terminal:
        console.width = 200  # a pipe or a file: no reason to truncate
    columns = ["Code", "Name", "Family", "Severity", "Default", "Fixable"]
    wide = console.width >= 120  # room for the one-line summaries
    if wide:
        columns.append("Summary")
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
    for column in columns:
        table.add_column(column, no_wrap=column != "Summary")
    for rule in ALL_RULES:
        cells = [
            rule.code,
            rule.name,
            rule.family,
            rule.severity.value,
            "yes" if rule.default_enabled else "no",
            "yes" if rule.fixable else "no",
        ]
        table.add_row(*cells, *([rule.summary] if wide else []))
    with console.capture() as captured:
        console.print(table)
    _write_stdout("".join(line.rstrip() + "\n" for line in captured.get().splitlines()))
    return 0


def cmd_rule(args: argparse.Namespace) -> int:
    rule = lookup(args.key.strip())
    if rule is None:
        raise UsageError(f"unknown rule `{args.key}` (run `torchlint rules` to list them)")
    try:
        from torchlint.docs import rule_doc
    except ImportError as exc:
        raise UsageError(f"the rule documentation is not available: {exc}") from None
    doc = rule_doc(rule.code)
    if doc is None:
        raise UsageError(f"no documentation found for {rule.code} ({rule.name})")
    if args.output_format == "json":
        payload = {**_rule_json(rule), "url": _rule_url(rule), "doc": doc}
        _write_stdout(json.dumps(payload, indent=2) + "\n")
    else:
        _write_stdout(doc if doc.endswith("\n") else doc + "\n")
    return 0


def _rule_url(rule: type[Rule]) -> str:
    from torchlint.diagnostics import rule_url

    return rule_url(rule.code, rule.name)


# --- entry point ---------------------------------------------------------------------------


def _prepare_streams() -> None:
    """Never die on a character the terminal's encoding lacks."""
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            with contextlib.suppress(ValueError, OSError):  # a detached or odd stream
                stream.reconfigure(errors="backslashreplace")


def _split_script_args(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    """`torchlint run ... -- ARGS`: everything after the first `--` belongs to the script."""
    arguments = list(argv)
    if "--" in arguments and "run" in arguments[: arguments.index("--")]:
        cut = arguments.index("--")
        return arguments[:cut], arguments[cut + 1 :]
    return arguments, []


def _run(argv: Sequence[str]) -> int:
    parser = build_parser()
    own, script_args = _split_script_args(argv)
    args = parser.parse_args(own)
    args.script_args = script_args
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    if args.command == "check":
        return cmd_check(args)
    if args.command == "rules":
        return cmd_rules(args)
    if args.command == "clean":
        return cmd_clean(args)
    if args.command == "run":
        from torchlint.runtime.command import cmd_run

        return cmd_run(args)
    if args.command == "lsp":
        from torchlint.lsp.server import main as lsp_main  # pygls only loads for the server

        return lsp_main()
    return cmd_rule(args)


def _silence_stdout() -> None:
    """After a broken pipe, point stdout at /dev/null so the interpreter's final flush does not
    complain a second time."""
    with contextlib.suppress(OSError, ValueError, io.UnsupportedOperation):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    verbose = any(arg in ("-v", "--verbose") for arg in arguments)
    _prepare_streams()
    try:
        return _run(arguments)
    except UsageError as exc:
        _error(str(exc))
        return 2
    except BrokenPipeError:
        _silence_stdout()
        return 2
    except KeyboardInterrupt:
        _error("interrupted")
        return 130
    except Exception as exc:
        if verbose:
            traceback.print_exc(file=sys.stderr)
        lines = str(exc).strip().splitlines()
        detail = f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__
        hint = "" if verbose else " (run with --verbose for the traceback)"
        _error(f"internal error: {detail}{hint}")
        return 2
