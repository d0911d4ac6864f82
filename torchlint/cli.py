"""The `torchlint` command: `check`, `rules`, `rule`.

Exit status: 0 when nothing was found, 1 when something was, 2 on a usage, configuration or
internal error (a message on stderr; a traceback only with `--verbose`). Findings and summaries
go to stdout, errors and warnings to stderr.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn, cast

from torchlint import __version__
from torchlint.analysis.source import ParseFailure, parse_source
from torchlint.config import (
    CliOverrides,
    ConfigError,
    ConfigResolver,
    parse_selector_option,
)
from torchlint.diagnostics import Diagnostic
from torchlint.discovery import ReadError, discover, display_path, read_file
from torchlint.engine import analyze_bytes, analyze_source
from torchlint.fixer import (
    EncodingError,
    decode_file,
    encode_file,
    fix_text,
    unified_diff,
    write_atomic,
)
from torchlint.report import FORMATS, OutputFormat, Report, plural, render
from torchlint.rules import ALL_RULES, Rule, lookup
from torchlint.selection import RuleSelection

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
    check.add_argument("--no-cache", action="store_true", help="do not use the cache")
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
    return parser


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
    fixed: int = 0  # fixes written (or, with --diff, that would be)
    diffs: list[str] = field(default_factory=list)
    failed: bool = False  # something went wrong: exit 2

    def fail(self, message: str) -> None:
        _error(message)
        self.failed = True


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


def _check_file(
    path: Path, selection: RuleSelection, args: argparse.Namespace, run: CheckRun
) -> None:
    shown = display_path(path)
    try:
        data = read_file(path)
    except ReadError as exc:
        run.fail(f"{shown}: {exc}")
        return
    filename = str(path)
    fixing = args.fix or args.diff
    source = decode_file(data) if fixing else None
    if source is None:  # just checking, or the file cannot be decoded (the engine says so)
        analysis = analyze_bytes(data, filename, selection)
        for message in analysis.errors:
            run.fail(f"internal error: {message}")
        run.diagnostics.extend(analysis.diagnostics)
        run.sources[filename] = analysis.text
        return
    result = fix_text(source.text, filename, selection, unsafe=args.unsafe_fixes)
    for message in (*result.errors, *result.rejected):
        run.fail(f"internal error: {message}")
    if result.text == source.text:
        run.diagnostics.extend(result.remaining_diagnostics)
        run.sources[filename] = source.text
        return
    if args.diff:
        run.diffs.append(unified_diff(source.text, result.text, shown))
        run.fixed += result.fixed_count
        return
    problem: str | None = None
    if isinstance(parse_source(result.text), ParseFailure):
        problem = "the fixed text no longer parses"
    elif not source.round_trips:
        problem = f"its bytes do not survive decoding and encoding as {source.encoding}"
    else:
        try:
            write_data = encode_file(source, result.text)
        except EncodingError as exc:
            problem = str(exc)
        else:
            try:
                write_atomic(path, write_data)
            except OSError as exc:
                problem = f"cannot write the file: {exc.strerror or exc}"
    if problem is not None:
        run.fail(f"{shown}: not fixed: {problem}")
        original = analyze_source(source.text, filename, selection)
        run.diagnostics.extend(original.diagnostics)
        run.sources[filename] = source.text
        return
    _debug(args, f"{shown}: fixed {plural(result.fixed_count, 'error')}")
    run.fixed += result.fixed_count
    run.diagnostics.extend(result.remaining_diagnostics)
    run.sources[filename] = result.text


def cmd_check(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    output_format = _output_format(args)
    if args.no_cache:
        _debug(args, "--no-cache: there is no cache yet; nothing to do")
    try:
        select = parse_selector_option(args.select, "--select")
        ignore = parse_selector_option(args.ignore, "--ignore") or ()
        config = Path(args.config) if args.config else None
        if config is not None and not config.is_file():
            raise ConfigError(f"--config: {args.config}: no such file")
        resolver = ConfigResolver(CliOverrides(select, ignore, config))
        paths = args.paths or ["."]
        found = discover(paths, resolver, force_exclude=args.force_exclude)
        jobs = [(path, resolver.selection_for(path)) for path in found.files]
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    run = CheckRun()
    for message in found.errors:
        run.fail(message)
    if not found.files and not found.errors:
        _warning(f"No Python files found under {', '.join(paths)}")
    for path, selection in jobs:
        if args.verbose:
            config_file = resolver.config_for_dir(path.parent).path
            _debug(
                args,
                f"checking {display_path(path)} (config: {config_file or 'defaults'}; "
                f"rules: {selection.cache_key() or 'none'})",
            )
        _check_file(path, selection, args, run)
    run.diagnostics.sort(key=lambda d: d.sort_key)
    _debug(
        args,
        f"checked {plural(len(jobs), 'file')} in {(time.perf_counter() - started) * 1000:.0f} ms",
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
            fix_mode=args.fix,
            fixed=run.fixed,
            unsafe_fixes=args.unsafe_fixes,
            had_errors=run.failed,
        )
        render(report, output_format, sys.stdout)
        if output_format == "json" and args.fix and run.fixed:
            print(f"Fixed {plural(run.fixed, 'error')}.", file=sys.stderr)
        found_something = bool(run.diagnostics)
    if run.failed:
        return 2
    return 1 if found_something and not args.exit_zero else 0


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


def _run(argv: Sequence[str]) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    if args.command == "check":
        return cmd_check(args)
    if args.command == "rules":
        return cmd_rules(args)
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
