"""Code actions: a quick fix per fixable finding, `# noqa` for a line, `ignore-file` for a file,
and `source.fixAll.torchlint`.

Everything here is a pure function of the document's text and the diagnostics the client
sends back, so it is tested without a server.
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from lsprotocol import types

from torchlint.fixer import dominant_newline
from torchlint.lsp.convert import SOURCE, PositionMap, range_from_json

FIX_ALL_KIND = "source.fixAll.torchlint"
FIX_ALL_TITLE = "torchlint: Fix all safe fixes"

# `noqa: X, Y` comments: the same shape `torchlint.suppression` reads, so that what we extend is
# exactly the list it parses.
_NOQA = re.compile(r"#\s*noqa:\s*(?P<codes>[\w-]+(?:[\s,]+[\w-]+)*)", re.IGNORECASE)
_IGNORE_FILE_LINE = re.compile(
    r"^\s*#\s*torchlint:\s*ignore-file\[(?P<codes>[^\]]*)\]\s*$", re.IGNORECASE
)
_CODING = re.compile(r"^[ \t\f]*#.*?coding[:=][ \t]*[-\w.]+")


def kind_requested(kind: str, only: Sequence[str] | None) -> bool:
    """Whether an action of `kind` answers a request filtered by `only` (a kind matches itself
    and every more specific kind: `source` asks for `source.fixAll.torchlint`)."""
    if only is None:
        return True
    return any(kind == wanted or kind.startswith(f"{wanted}.") for wanted in only)


def workspace_edit(
    uri: str, version: int | None, edits: list[types.TextEdit], versioned: bool
) -> types.WorkspaceEdit:
    """Edits of one document; tied to its version when the client supports that, so a client
    rejects an edit computed for text that has changed since."""
    return edits_of_documents({uri: (version, edits)}, versioned and version is not None)


def is_ours(diagnostic: types.Diagnostic) -> bool:
    return diagnostic.source == SOURCE and isinstance(diagnostic.code, str)


@dataclass(frozen=True)
class StoredFix:
    """A fix as `convert.diagnostic_data` stored it in a diagnostic's `data`."""

    applicability: str
    message: str
    edits: list[types.TextEdit]
    version: int | None


def stored_fix(diagnostic: types.Diagnostic) -> StoredFix | None:
    """The fix in a diagnostic's `data`, or None (no fix, or data we did not write)."""
    data: Any = diagnostic.data
    if not isinstance(data, dict) or not isinstance(data.get("fix"), dict):
        return None
    fix = data["fix"]
    try:
        edits = [
            types.TextEdit(range=range_from_json(edit["range"]), new_text=str(edit["newText"]))
            for edit in fix["edits"]
        ]
        version = data.get("version")
        return StoredFix(
            str(fix["applicability"]),
            str(fix["message"]),
            edits,
            version if isinstance(version, int) else None,
        )
    except (KeyError, TypeError, ValueError):
        return None


def quick_fix(
    uri: str,
    diagnostic: types.Diagnostic,
    current_version: int | None,
    versioned: bool,
) -> types.CodeAction | None:
    """The finding's own fix. None when it has none, or when the document has changed since
    the diagnostic was computed (its ranges would land in the wrong place)."""
    fix = stored_fix(diagnostic)
    if fix is None or not fix.edits or fix.version != current_version:
        return None
    safe = fix.applicability == "safe"
    title = f"{diagnostic.code}: {fix.message}" + ("" if safe else " (unsafe)")
    return types.CodeAction(
        title=title,
        kind=types.CodeActionKind.QuickFix,
        diagnostics=[diagnostic],
        is_preferred=safe,
        edit=workspace_edit(uri, fix.version, fix.edits, versioned),
    )


# --- noqa comments for one line --------------------------------------------------------------


@dataclass(frozen=True)
class _Lines:
    """What tokenizing tells about line ends: the rows (1-based) whose end is outside any
    string and not continued by a backslash, so a comment may go there, and the column span
    (code points) of the comment on a row."""

    open_ends: frozenset[int]
    comments: dict[int, tuple[int, int]]


@lru_cache(maxsize=4)  # the quick fixes of one request (and the next) scan one text
def _scan_lines(text: str) -> _Lines | None:
    if re.search(r"\r(?!\n)", text):  # lone-CR line endings: tokenize would count otherwise
        return None
    ends: set[int] = set()
    comments: dict[int, tuple[int, int]] = {}
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type in (tokenize.NEWLINE, tokenize.NL):
                ends.add(token.start[0])
            elif token.type == tokenize.COMMENT:
                ends.add(token.start[0])
                comments[token.start[0]] = (token.start[1], token.end[1])
    except (tokenize.TokenError, SyntaxError, ValueError):
        return None
    return _Lines(frozenset(ends), comments)


def _comment_start(line: str) -> int | None:
    """Where the comment of a line starts, by a simple quote scan (for text that does not
    tokenize)."""
    quote: str | None = None
    index = 0
    while index < len(line):
        char = line[index]
        if char == "\\" and quote:
            index += 2
            continue
        if quote is None and char == "#":
            return index
        if quote is None and char in "'\"":
            quote = char
        elif char == quote:
            quote = None
        index += 1
    return None


def noqa_edit(
    positions: PositionMap, code: str, first_line: int, last_line: int
) -> types.TextEdit | None:
    """The edit that suppresses `code` for a finding on 0-based lines `first_line` to
    `last_line`: it extends the `# noqa: ...` of the first line that can hold a comment, or
    appends `  # noqa: CODE` to that line. (The engine honours a `noqa` on the first or the last
    row of a finding; a line ending inside a string or a backslash continuation cannot hold
    one.) None when none of those lines can: a comment there would land inside a string."""
    scan = _scan_lines(positions.text)
    line = first_line
    comment: tuple[int, int] | None = None
    if scan is not None:
        rows = [row for row in range(first_line + 1, last_line + 2) if row in scan.open_ends]
        if not rows:
            return None
        line = rows[0] - 1
        comment = scan.comments.get(line + 1)
    text = positions.line(line)
    if scan is None:
        start = _comment_start(text)
        comment = (start, len(text)) if start is not None else None
    if comment is not None:
        start, end = comment
        match = _NOQA.search(text, start, end)
        if match is not None:
            at = match.end("codes")
            where = positions.offset_to_position(_line_offset(positions, line) + at)
            return types.TextEdit(range=types.Range(start=where, end=where), new_text=f", {code}")
    body_end = len(text.rstrip())
    offset = _line_offset(positions, line)
    return types.TextEdit(
        range=types.Range(
            start=positions.offset_to_position(offset + body_end),
            end=positions.offset_to_position(offset + len(text)),
        ),
        new_text=f"  # noqa: {code}",
    )


def _line_offset(positions: PositionMap, line: int) -> int:
    return positions.to_offset(types.Position(line=line, character=0))


def noqa_action(
    uri: str,
    diagnostic: types.Diagnostic,
    positions: PositionMap,
    version: int | None,
    versioned: bool,
) -> types.CodeAction | None:
    code = str(diagnostic.code)
    edit = noqa_edit(positions, code, diagnostic.range.start.line, diagnostic.range.end.line)
    if edit is None:
        return None
    return types.CodeAction(
        title=f"Ignore {code} on this line",
        kind=types.CodeActionKind.QuickFix,
        diagnostics=[diagnostic],
        edit=workspace_edit(uri, version, [edit], versioned),
    )


# --- ignore-file ----------------------------------------------------------------------------


def ignore_file_edit(positions: PositionMap, code: str) -> types.TextEdit:
    """Adds `code` to an existing `# torchlint: ignore-file[...]` line, or inserts
    `# torchlint: ignore-file[CODE]` as the first line (after a shebang and a coding line)."""
    for line in range(positions.line_count):
        text = positions.line(line)
        match = _IGNORE_FILE_LINE.match(text)
        if match is None:
            continue
        codes = match.group("codes")
        if code in {part.strip().upper() for part in re.split(r"[\s,]+", codes)}:
            continue  # already listed (it would not be reported): look further
        at = positions.offset_to_position(_line_offset(positions, line) + match.end("codes"))
        return types.TextEdit(
            range=types.Range(start=at, end=at),
            new_text=f", {code}" if codes.strip() else code,
        )
    line = 0
    if positions.line(0).startswith("#!"):
        line = 1
    if line <= 1 and _CODING.match(positions.line(line)):
        line += 1
    comment = f"# torchlint: ignore-file[{code}]"
    newline = dominant_newline(positions.text)
    if line > 0 and not positions.line_has_ending(line - 1):
        # the shebang or coding line is the last line and has no line ending
        at = positions.offset_to_position(len(positions.text))
        return types.TextEdit(range=types.Range(start=at, end=at), new_text=newline + comment)
    at = types.Position(line=line, character=0)
    return types.TextEdit(range=types.Range(start=at, end=at), new_text=comment + newline)


def ignore_file_action(
    uri: str,
    diagnostic: types.Diagnostic,
    positions: PositionMap,
    version: int | None,
    versioned: bool,
) -> types.CodeAction:
    code = str(diagnostic.code)
    return types.CodeAction(
        title=f"Ignore {code} in this file",
        kind=types.CodeActionKind.QuickFix,
        diagnostics=[diagnostic],
        edit=workspace_edit(uri, version, [ignore_file_edit(positions, code)], versioned),
    )


# --- fix all --------------------------------------------------------------------------------


def replacement_edit(old: str, new: str, encoding: str) -> types.TextEdit | None:
    """One edit that turns `old` into `new`, covering only the part between their common
    prefix and suffix (so the editor keeps folds, cursors and undo steps elsewhere)."""
    if old == new:
        return None
    prefix = 0
    limit = min(len(old), len(new))
    while prefix < limit and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and old[len(old) - 1 - suffix] == new[len(new) - 1 - suffix]:
        suffix += 1
    # Never split a `\r\n`: a position between its two characters is not a place in LSP.
    if 0 < prefix < len(old) and old[prefix - 1] == "\r" and old[prefix] == "\n":
        prefix -= 1
    end = len(old) - suffix
    if suffix and 0 < end < len(old) and old[end - 1] == "\r" and old[end] == "\n":
        suffix -= 1
    positions = PositionMap(old, encoding)
    return types.TextEdit(
        range=types.Range(
            start=positions.offset_to_position(prefix),
            end=positions.offset_to_position(len(old) - suffix),
        ),
        new_text=new[prefix : len(new) - suffix],
    )


def fix_all_action(
    edit: types.WorkspaceEdit | None, data: dict[str, Any] | None = None
) -> types.CodeAction:
    """`source.fixAll.torchlint`: every safe fix at once (an edit without changes when there is
    none, which editors running it on save expect rather than no action). Without `edit`, the
    client asks for it (`codeAction/resolve`) with `data`."""
    return types.CodeAction(title=FIX_ALL_TITLE, kind=FIX_ALL_KIND, edit=edit, data=data)


def edits_of_documents(
    edits: dict[str, tuple[int | None, list[types.TextEdit]]], versioned: bool
) -> types.WorkspaceEdit:
    """One workspace edit over several documents (a notebook's cells): URI -> (version, edits)."""
    if versioned:
        return types.WorkspaceEdit(
            document_changes=[
                types.TextDocumentEdit(
                    text_document=types.OptionalVersionedTextDocumentIdentifier(
                        uri=uri, version=version
                    ),
                    edits=list(changes),
                )
                for uri, (version, changes) in edits.items()
            ]
        )
    return types.WorkspaceEdit(changes={uri: list(changes) for uri, (_, changes) in edits.items()})
