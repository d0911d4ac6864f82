"""Positions: torchlint's 1-based code-point columns to LSP's 0-based code units, and back."""

from __future__ import annotations

import pytest
from lsprotocol import types

from torchlint.diagnostics import Diagnostic, Edit, Fix, Location, Severity
from torchlint.lsp.convert import PositionMap, code_units, to_lsp_diagnostic

UTF8 = types.PositionEncodingKind.Utf8
UTF16 = types.PositionEncodingKind.Utf16
UTF32 = types.PositionEncodingKind.Utf32


def position(line: int, character: int) -> types.Position:
    return types.Position(line=line, character=character)


def test_code_units() -> None:
    assert code_units("abc") == 3
    assert code_units("é") == 1  # BMP: one UTF-16 unit
    assert code_units("🔥") == 2  # astral: a surrogate pair
    assert code_units("🔥", UTF8) == 4
    assert code_units("🔥", UTF32) == 1
    assert code_units("\ud800") == 1  # a lone surrogate sent by an odd client
    assert code_units("\ud800", UTF8) == 3


def test_emoji_columns_in_utf16() -> None:
    text = 'x = "🔥🔥"; y = loss.item()\n'
    positions = PositionMap(text)
    column = text.index("loss") + 1  # 1-based, code points
    assert positions.to_position(Location(1, column)) == position(0, column - 1 + 2)
    assert positions.to_location(position(0, column - 1 + 2)) == Location(1, column)
    assert column == 15
    assert positions.to_position(Location(1, column)) == position(0, 16)


@pytest.mark.parametrize(("encoding", "character"), [(UTF8, 19), (UTF16, 14), (UTF32, 12)])
def test_every_encoding(encoding: str, character: int) -> None:
    text = "a = 1\ns = 'é🔥💥' + t\n"
    positions = PositionMap(text, encoding)
    location = Location(2, 13)  # the `t`
    assert text.splitlines()[1][12] == "t"
    assert positions.to_position(location) == position(1, character)
    assert positions.to_location(position(1, character)) == location


def test_inside_a_surrogate_pair_rounds_up() -> None:
    positions = PositionMap("🔥x")
    assert positions.to_offset(position(0, 1)) == 1
    assert positions.to_offset(position(0, 2)) == 1
    assert positions.to_offset(position(0, 3)) == 2


def test_line_endings_are_the_engines() -> None:
    text = "a\r\nb\rc\nd\x0ce\u2028f\n"
    positions = PositionMap(text)
    assert positions.line_count == 5
    assert [positions.line(i) for i in range(5)] == ["a", "b", "c", "d\x0ce\u2028f", ""]
    assert positions.to_position(Location(4, 4)) == position(3, 3)
    assert positions.offset_to_position(text.index("f")) == position(3, 4)
    assert positions.end() == position(4, 0)


def test_out_of_range_is_clamped() -> None:
    positions = PositionMap("ab\ncd")
    assert positions.to_position(Location(0, 5)) == position(0, 0)
    assert positions.to_position(Location(9, 1)) == position(1, 2)
    assert positions.to_position(Location(1, 40)) == position(0, 2)
    assert positions.to_offset(position(7, 0)) == 5
    assert positions.to_offset(position(0, 99)) == 2


def test_diagnostic_conversion() -> None:
    text = "print('🔥', loss.item())\r\n"
    fix = Fix("safe", "Do it", (Edit("a\nb", Location(1, 12), Location(1, 23)),))
    diagnostic = Diagnostic(
        code="TL204",
        name="deprecated-cuda-amp",
        message="m",
        severity=Severity.WARNING,
        filename="f.py",
        location=Location(1, 12),
        end_location=Location(1, 23),
        fix=fix,
        related=(("the other half", Location(1, 1)),),
    )
    converted = to_lsp_diagnostic(
        diagnostic,
        PositionMap(text),
        uri="file:///f.py",
        version=7,
        severity_overrides={"TL204": "hint"},
    )
    assert converted.range == types.Range(start=position(0, 12), end=position(0, 23))
    assert converted.severity == types.DiagnosticSeverity.Hint
    assert converted.tags == [types.DiagnosticTag.Deprecated]
    assert converted.code_description is not None
    assert converted.code_description.href == diagnostic.url
    assert converted.related_information is not None
    assert converted.related_information[0].message == "the other half"
    assert converted.data == {
        "name": "deprecated-cuda-amp",
        "version": 7,
        "fix": {
            "applicability": "safe",
            "message": "Do it",
            "edits": [
                {
                    "range": {
                        "start": {"line": 0, "character": 12},
                        "end": {"line": 0, "character": 23},
                    },
                    "newText": "a\r\nb",  # the document's line ending
                }
            ],
        },
    }
