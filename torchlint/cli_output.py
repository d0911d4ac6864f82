"""What the command line writes: errors, warnings and debug lines on stderr, text on stdout."""

from __future__ import annotations

import argparse
import sys


class UsageError(Exception):
    """A problem with the command line or the configuration: exit 2 with the message."""


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
