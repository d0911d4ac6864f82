"""From torchlint's positions and diagnostics to the Language Server Protocol's.

torchlint counts rows from 1 and columns from 1 in Unicode code points. LSP counts lines and
characters from 0, and a character is a *code unit* of the encoding agreed at initialisation:
UTF-16 unless the client offered another one (a character outside the Basic Multilingual
Plane, such as most emoji, is two UTF-16 units, four UTF-8 units and one UTF-32 unit).

Lines are split where the engine splits them (`\\r\\n`, `\\r`, `\\n`), which is also what the
protocol specifies; `str.splitlines` would also break on form feeds and Unicode separators.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from lsprotocol import types

from torchlint.analysis.source import line_starts
from torchlint.diagnostics import Diagnostic, Edit, Location, Severity
from torchlint.fixer import dominant_newline

SOURCE = "torchlint"

_NEWLINE = re.compile(r"\r\n|\r|\n")

SEVERITIES: dict[str, types.DiagnosticSeverity] = {
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "info": types.DiagnosticSeverity.Information,
    "information": types.DiagnosticSeverity.Information,
    "hint": types.DiagnosticSeverity.Hint,
}

_RULE_SEVERITY = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.INFO: types.DiagnosticSeverity.Information,
}

# Tags only where they say something true about the flagged code: TL204 flags an API that
# PyTorch has deprecated (editors strike it through).
_TAGS: dict[str, list[types.DiagnosticTag]] = {"TL204": [types.DiagnosticTag.Deprecated]}


def split_lines(text: str) -> tuple[str, ...]:
    """The lines of `text` with their line endings, broken where the protocol breaks them (as
    `str.splitlines(keepends=True)` would if it knew only `\\r\\n`, `\\r` and `\\n`)."""
    lines = []
    start = 0
    for match in _NEWLINE.finditer(text):
        lines.append(text[start : match.end()])
        start = match.end()
    if start < len(text):
        lines.append(text[start:])
    return tuple(lines)


def count_newlines(text: str) -> int:
    return len(_NEWLINE.findall(text))


def code_units(text: str, encoding: str = types.PositionEncodingKind.Utf16) -> int:
    """How many code units of `encoding` the string `text` takes."""
    if text.isascii() or encoding == types.PositionEncodingKind.Utf32:
        return len(text)
    if encoding == types.PositionEncodingKind.Utf8:
        # `surrogatepass`: a lone surrogate (odd text sent by a client) still has a size.
        return len(text.encode("utf-8", "surrogatepass"))
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


class PositionMap:
    """Converts between offsets, torchlint `Location`s and LSP `Position`s for one text."""

    def __init__(self, text: str, encoding: str = types.PositionEncodingKind.Utf16) -> None:
        self.text = text
        self.encoding = encoding
        self._starts = line_starts(text)
        self._newline: str | None = None

    @property
    def newline(self) -> str:
        """The text's dominant line ending (`fixer.dominant_newline`), counted once."""
        if self._newline is None:
            self._newline = dominant_newline(self.text)
        return self._newline

    @property
    def line_count(self) -> int:
        return len(self._starts)

    def line(self, line: int) -> str:
        """The text of a 0-based line, without its line ending ('' past the end)."""
        if not 0 <= line < len(self._starts):
            return ""
        start = self._starts[line]
        end = self._starts[line + 1] if line + 1 < len(self._starts) else len(self.text)
        return self.text[start:end].rstrip("\r\n")

    def line_has_ending(self, line: int) -> bool:
        return line + 1 < len(self._starts)

    def offset_to_position(self, offset: int) -> types.Position:
        offset = min(max(offset, 0), len(self.text))
        line = bisect_right(self._starts, offset) - 1
        prefix = self.text[self._starts[line] : offset]
        return types.Position(line=line, character=code_units(prefix, self.encoding))

    def to_position(self, location: Location) -> types.Position:
        """A 1-based, code-point `Location` as an LSP position (clamped to the text)."""
        if location.row < 1:
            return types.Position(line=0, character=0)
        if location.row > len(self._starts):
            return self.end()
        line = location.row - 1
        text = self.line(line)
        prefix = text[: max(location.column - 1, 0)]
        return types.Position(line=line, character=code_units(prefix, self.encoding))

    def to_range(self, start: Location, end: Location) -> types.Range:
        return types.Range(start=self.to_position(start), end=self.to_position(end))

    def end(self) -> types.Position:
        """The position just after the last character."""
        return self.offset_to_position(len(self.text))

    def to_offset(self, position: types.Position) -> int:
        """An LSP position as an offset into the text. A character past the end of its line
        means the end of the line; one inside a code point (half a surrogate pair) rounds up."""
        if position.line < 0:
            return 0
        if position.line >= len(self._starts):
            return len(self.text)
        start = self._starts[position.line]
        text = self.line(position.line)
        if text.isascii() or self.encoding == types.PositionEncodingKind.Utf32:
            return start + min(max(position.character, 0), len(text))
        units = 0
        for index, char in enumerate(text):
            if units >= position.character:
                return start + index
            units += code_units(char, self.encoding)
        return start + len(text)

    def to_location(self, position: types.Position) -> Location:
        offset = self.to_offset(position)
        line = bisect_right(self._starts, offset) - 1
        return Location(line + 1, offset - self._starts[line] + 1)


def severity_of(diagnostic: Diagnostic, overrides: Mapping[str, str]) -> types.DiagnosticSeverity:
    """The diagnostic's severity: the user's override for its code (settings keys are already
    normalised to codes), else the rule's."""
    override = overrides.get(diagnostic.code)
    if override is not None and override in SEVERITIES:
        return SEVERITIES[override]
    return _RULE_SEVERITY[diagnostic.severity]


def range_json(value: types.Range) -> dict[str, Any]:
    return {
        "start": {"line": value.start.line, "character": value.start.character},
        "end": {"line": value.end.line, "character": value.end.character},
    }


def range_from_json(value: Any) -> types.Range:
    """The inverse of `range_json`; raises `KeyError`, `TypeError` or `ValueError` on junk."""
    start, end = value["start"], value["end"]
    return types.Range(
        start=types.Position(line=int(start["line"]), character=int(start["character"])),
        end=types.Position(line=int(end["line"]), character=int(end["character"])),
    )


def text_edits(edits: Iterable[Edit], positions: PositionMap) -> list[types.TextEdit]:
    """A fix's edits as LSP text edits. Like `fixer.apply_edits`, the `\\n`s in the new text
    become the document's dominant line ending."""
    newline = positions.newline
    result = []
    for edit in edits:
        content = edit.content
        if newline != "\n" and "\n" in content:
            content = content.replace("\r\n", "\n").replace("\n", newline)
        result.append(
            types.TextEdit(
                range=positions.to_range(edit.location, edit.end_location), new_text=content
            )
        )
    return result


def diagnostic_data(
    diagnostic: Diagnostic, positions: PositionMap, version: int | None
) -> dict[str, Any]:
    """What a code action needs later, as plain JSON (the client hands it back verbatim): the
    rule's name, the document version the ranges refer to, and the fix, if any."""
    fix = diagnostic.fix
    fix_json: dict[str, Any] | None = None
    if fix is not None and fix.edits:
        fix_json = {
            "applicability": fix.applicability,
            "message": fix.message,
            "edits": [
                {"range": range_json(edit.range), "newText": edit.new_text}
                for edit in text_edits(fix.edits, positions)
            ],
        }
    return {"name": diagnostic.name, "version": version, "fix": fix_json}


def to_lsp_diagnostic(
    diagnostic: Diagnostic,
    positions: PositionMap,
    *,
    uri: str,
    version: int | None,
    severity_overrides: Mapping[str, str] | None = None,
) -> types.Diagnostic:
    related = [
        types.DiagnosticRelatedInformation(
            location=types.Location(uri=uri, range=positions.to_range(where, where)),
            message=message,
        )
        for message, where in diagnostic.related
    ]
    return types.Diagnostic(
        range=positions.to_range(diagnostic.location, diagnostic.end_location),
        message=diagnostic.message,
        severity=severity_of(diagnostic, severity_overrides or {}),
        code=diagnostic.code,
        code_description=types.CodeDescription(href=diagnostic.url),
        source=SOURCE,
        tags=list(_TAGS[diagnostic.code]) if diagnostic.code in _TAGS else None,
        related_information=related or None,
        data=diagnostic_data(diagnostic, positions, version),
    )


def to_lsp_diagnostics(
    diagnostics: Sequence[Diagnostic],
    text: str,
    *,
    uri: str,
    version: int | None,
    encoding: str = types.PositionEncodingKind.Utf16,
    severity_overrides: Mapping[str, str] | None = None,
) -> list[types.Diagnostic]:
    positions = PositionMap(text, encoding)
    return [
        to_lsp_diagnostic(
            diagnostic,
            positions,
            uri=uri,
            version=version,
            severity_overrides=severity_overrides,
        )
        for diagnostic in diagnostics
    ]


def position_before(a: types.Position, b: types.Position) -> bool:
    return (a.line, a.character) < (b.line, b.character)


def range_contains(outer: types.Range, position: types.Position) -> bool:
    """Whether `position` lies in `outer` (both ends included, so an empty range and the
    character just after a range still count: where an editor's cursor sits)."""
    return not position_before(position, outer.start) and not position_before(outer.end, position)


def ranges_overlap(a: types.Range, b: types.Range) -> bool:
    """Whether two ranges share a position (touching ends count)."""
    return not position_before(a.end, b.start) and not position_before(b.end, a.start)
