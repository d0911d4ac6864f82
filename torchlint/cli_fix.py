"""`torchlint check --fix` and `--diff` on one file: its fixes, written when it did not change."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from torchlint.analysis.source import ParseFailure, parse_source
from torchlint.cache import content_hash
from torchlint.cli_output import _debug
from torchlint.discovery import ReadError, display_path, read_file
from torchlint.fixer import EncodingError, decode_file, encode_file, unified_diff, write_atomic
from torchlint.notebook import fix_notebook, is_notebook
from torchlint.report import plural

if TYPE_CHECKING:
    from torchlint.cli_check import CheckRun, FileJob


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
