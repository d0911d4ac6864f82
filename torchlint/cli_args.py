"""The command line's arguments: the parser of `torchlint` and its subcommands."""

from __future__ import annotations

import argparse
import sys
from typing import NoReturn

from torchlint import __version__
from torchlint.cache import CACHE_DIR_NAME
from torchlint.report import FORMATS
from torchlint.runtime.checks import CHECKS, add_run_arguments

OUTPUT_FORMAT_ENV = "TORCHLINT_OUTPUT_FORMAT"


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
