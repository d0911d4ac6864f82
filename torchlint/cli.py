"""The `torchlint` command: `check`, `rules`, `rule`, `clean`, `lsp`.

Exit status: 0 when nothing was found, 1 when something was, 2 on a usage, configuration or
internal error (a message on stderr; a traceback only with `--verbose`). Findings and summaries
go to stdout, errors and warnings to stderr.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import traceback
from collections.abc import Sequence

from torchlint.cli_args import build_parser
from torchlint.cli_check import cmd_check
from torchlint.cli_clean import cmd_clean
from torchlint.cli_output import UsageError, _error
from torchlint.cli_rules import cmd_rule, cmd_rules


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
