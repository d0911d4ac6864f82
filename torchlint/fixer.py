"""Applying fixes: pure text functions (shared with the language server) and the file
plumbing `--fix` needs (encoding, line endings, atomic writes).

`fix_text` loops: analyse, apply every applicable fix whose edits do not overlap an earlier
chosen fix's, re-analyse, until nothing changes (at most `MAX_PASSES` passes). A pass whose
result no longer parses is redone one fix at a time, and the fixes that break the parse are
dropped (reported in `FixResult.rejected`), so the text returned always parses when the
input did.
"""

from __future__ import annotations

import contextlib
import difflib
import io
import os
import re
import stat
import tempfile
import tokenize
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from torchlint.analysis.source import LineIndex, ParseFailure, parse_source
from torchlint.diagnostics import Diagnostic, Edit
from torchlint.engine import DEFAULT_SELECTION, analyze_source
from torchlint.selection import RuleSelection

if TYPE_CHECKING:
    from torchlint.project_view import AnalysisProject

MAX_PASSES = 10

# Lines with their endings, split the way Python (and `LineIndex`) count lines.
_LINES = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


class EditConflict(ValueError):
    """Edits given to `apply_edits` whose ranges intersect."""


def dominant_newline(text: str) -> str:
    """The most common line ending of `text` (`\\n` when there is none, or on a tie)."""
    crlf = text.count("\r\n")
    lf = text.count("\n") - crlf
    cr = text.count("\r") - crlf
    best = max((lf, "\n"), (crlf, "\r\n"), (cr, "\r"), key=lambda pair: pair[0])
    return best[1] if best[0] > lf else "\n"


def _span(index: LineIndex, edit: Edit, size: int) -> tuple[int, int]:
    start = min(max(index.offset(edit.location), 0), size)
    end = min(max(index.offset(edit.end_location), 0), size)
    if end < start:
        raise EditConflict(f"edit ends before it starts: {edit}")
    return start, end


def _intersect(a: tuple[int, int], b: tuple[int, int]) -> bool:
    """Whether two ranges overlap: they share text, or both insert at the same point."""
    if a[0] == a[1] == b[0] == b[1]:
        return True
    return a[0] < b[1] and b[0] < a[1]


def apply_edits(text: str, edits: Iterable[Edit], newline: str | None = None) -> str:
    """Apply `edits` (locations refer to `text` as given) and return the new text.

    The `\\n`s of the edits' contents become `newline` (by default, the dominant line ending
    of `text`). Insertions at the same point keep their given order, and an insertion at the
    start of a replaced range goes before the replacement. Raises `EditConflict` when two
    edits share text."""
    index = LineIndex(text)
    eol = dominant_newline(text) if newline is None else newline
    spans = sorted(
        ((_span(index, edit, len(text)), order, edit) for order, edit in enumerate(edits)),
        key=lambda item: (item[0][0], item[0][1], item[1]),
    )
    pieces: list[str] = []
    cursor = 0
    for (start, end), _, edit in spans:
        if start < cursor:
            raise EditConflict(f"overlapping edits at {edit.location.row}:{edit.location.column}")
        content = edit.content
        if eol != "\n" and "\n" in content:
            content = content.replace("\r\n", "\n").replace("\n", eol)
        pieces.append(text[cursor:start])
        pieces.append(content)
        cursor = end
    pieces.append(text[cursor:])
    return "".join(pieces)


def fix_applies(diagnostic: Diagnostic, unsafe: bool) -> bool:
    fix = diagnostic.fix
    return fix is not None and bool(fix.edits) and (fix.applicability == "safe" or unsafe)


def select_fixes(text: str, diagnostics: Sequence[Diagnostic], unsafe: bool) -> list[Diagnostic]:
    """The diagnostics whose fixes can go into one pass: in order, each fix whose edits overlap
    none of the fixes already chosen (the others wait for the next pass)."""
    index = LineIndex(text)
    taken: list[tuple[int, int]] = []
    chosen: list[Diagnostic] = []
    for diagnostic in diagnostics:
        if diagnostic.fix is None or not fix_applies(diagnostic, unsafe):
            continue
        try:
            spans = [_span(index, edit, len(text)) for edit in diagnostic.fix.edits]
        except EditConflict:
            continue
        if any(_intersect(span, other) for span in spans for other in taken):
            continue
        chosen.append(diagnostic)
        taken.extend(spans)
    return chosen


@dataclass
class FixResult:
    text: str
    fixed_count: int
    remaining_diagnostics: list[Diagnostic]
    # Internal errors (rules that crashed) seen on any pass.
    errors: list[str] = field(default_factory=list)
    # Fixes left out because they would have broken the file (a bug in a rule).
    rejected: list[str] = field(default_factory=list)
    passes: int = 0
    # With a project: the other project files the last analysis read (path -> content hash),
    # which `remaining_diagnostics` hold for.
    dependencies: dict[Path, str] = field(default_factory=dict)


def _fix_key(diagnostic: Diagnostic) -> tuple[str, str, str, tuple[str, ...]]:
    fix = diagnostic.fix
    assert fix is not None
    return (diagnostic.code, diagnostic.message, fix.message, tuple(e.content for e in fix.edits))


def _parses(text: str) -> bool:
    return not isinstance(parse_source(text), ParseFailure)


def _apply_fixes(text: str, diagnostics: Sequence[Diagnostic], newline: str) -> str:
    edits = [edit for d in diagnostics if d.fix is not None for edit in d.fix.edits]
    return apply_edits(text, edits, newline)


def fix_text(
    text: str,
    filename: str = "<stdin>",
    selection: RuleSelection = DEFAULT_SELECTION,
    unsafe: bool = False,
    allow: Callable[[str, Diagnostic], bool] | None = None,
    project: AnalysisProject | None = None,
) -> FixResult:
    """Apply every applicable fix to `text`, re-analysing between passes. `allow(text, d)`,
    when given, may refuse a fix for the current text (notebooks: edits across cells).
    `project` is passed to every analysis, so the diagnostics left are those a check of the
    fixed file reports; the findings it redirects from other files carry no fix, so only
    `text` is ever edited."""
    newline = dominant_newline(text)
    analysis = analyze_source(text, filename, selection, project=project)
    errors: list[str] = list(analysis.errors)
    rejected: list[str] = []
    rejected_keys: set[tuple[str, str, str, tuple[str, ...]]] = set()
    current = text
    fixed = 0
    passes = 0
    while passes < MAX_PASSES:
        candidates = [
            d
            for d in analysis.diagnostics
            if fix_applies(d, unsafe)
            and _fix_key(d) not in rejected_keys
            and (allow is None or allow(current, d))
        ]
        chosen = select_fixes(current, candidates, unsafe)
        if not chosen:
            break
        passes += 1
        accepted: list[Diagnostic] = []
        try:
            updated = _apply_fixes(current, chosen, newline)
            trouble = not _parses(updated)
        except EditConflict:
            trouble = True
        if trouble:  # find the fixes to blame, one at a time
            updated = current
            for diagnostic in chosen:
                try:
                    trial = _apply_fixes(current, [*accepted, diagnostic], newline)
                except EditConflict:
                    trial = None
                if trial is not None and _parses(trial):
                    accepted.append(diagnostic)
                    updated = trial
                else:
                    rejected_keys.add(_fix_key(diagnostic))
                    location = diagnostic.location
                    rejected.append(
                        f"{filename}:{location.row}:{location.column}: the fix for "
                        f"{diagnostic.code} would break the file; not applied"
                    )
        else:
            accepted = chosen
        if updated == current:
            if trouble:
                continue  # everything chosen was rejected: try what is left
            break
        current = updated
        fixed += len(accepted)
        analysis = analyze_source(current, filename, selection, project=project)
        errors.extend(error for error in analysis.errors if error not in errors)
    return FixResult(
        current,
        fixed,
        list(analysis.diagnostics),
        errors,
        rejected,
        passes,
        dict(analysis.dependencies),
    )


# --- files ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class SourceFile:
    """A file's text and what is needed to write it back the same way."""

    text: str
    encoding: str  # as `tokenize.detect_encoding` names it; `utf-8-sig` keeps a BOM
    # Whether encoding `text` gives back the file's bytes exactly (if not, never write it).
    round_trips: bool = True


class EncodingError(ValueError):
    """Text that cannot be written back in its file's encoding."""


def decode_file(data: bytes) -> SourceFile | None:
    """Decode like Python does (BOM, PEP 263 cookie, UTF-8); None when that fails."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        text = data.decode(encoding)
    except (SyntaxError, UnicodeDecodeError, LookupError):
        return None
    if text.startswith("\ufeff"):  # a second BOM: the engine would read this differently
        return None
    try:
        round_trips = text.encode(encoding) == data
    except (UnicodeEncodeError, LookupError):
        round_trips = False
    return SourceFile(text, encoding, round_trips)


def encode_file(source: SourceFile, text: str) -> bytes:
    """`text` in the file's encoding (with its BOM when it had one)."""
    try:
        return text.encode(source.encoding)
    except (UnicodeEncodeError, LookupError) as exc:
        raise EncodingError(f"cannot encode the fixed text as {source.encoding}: {exc}") from None


def write_atomic(path: Path, data: bytes) -> None:
    """Replace the file's content with `data` through a temporary file in the same folder and
    `os.replace`, keeping its permission bits (and owner, where allowed). A symbolic link is
    followed: its target is rewritten, the link stays."""
    target = Path(os.path.realpath(path))
    info = os.stat(target)
    fd, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, stat.S_IMODE(info.st_mode))
        if hasattr(os, "chown"):
            with contextlib.suppress(OSError):
                os.chown(temporary, info.st_uid, info.st_gid)
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def unified_diff(old: str, new: str, label: str) -> str:
    """A unified diff from `old` to `new`, with `a/label` and `b/label` headers."""
    old_lines = _LINES.findall(old)
    new_lines = _LINES.findall(new)
    lines: list[str] = []
    for line in difflib.unified_diff(old_lines, new_lines, f"a/{label}", f"b/{label}"):
        if line.endswith(("\n", "\r")):
            lines.append(line)
        else:
            lines.append(line + "\n\\ No newline at end of file\n")
    return "".join(lines)
