"""Applying edits and fixes: the pure functions and the file helpers."""

from __future__ import annotations

import dataclasses
import os
import stat
from pathlib import Path

import pytest

from torchlint import fixer
from torchlint.analysis.source import ParsedSource, parse_source
from torchlint.diagnostics import Diagnostic, Edit, Fix, Location, Severity
from torchlint.engine import DEFAULT_SELECTION, Analysis, analyze_source
from torchlint.fixer import (
    EditConflict,
    EncodingError,
    SourceFile,
    apply_edits,
    decode_file,
    dominant_newline,
    encode_file,
    fix_text,
    select_fixes,
    unified_diff,
    write_atomic,
)
from torchlint.selection import RuleSelection

DEPRECATED_SCALER = "from torch.cuda.amp import GradScaler\nscaler = GradScaler()\n"
FIXED_SCALER = 'import torch\nscaler = torch.amp.GradScaler("cuda")\n'


def edit(content: str, start: tuple[int, int], end: tuple[int, int] | None = None) -> Edit:
    return Edit(content, Location(*start), Location(*(end or start)))


def diagnostic(*edits: Edit, applicability: str = "safe", row: int = 1) -> Diagnostic:
    return Diagnostic(
        code="TL204",
        name="deprecated-cuda-amp",
        message=f"test {row}",
        severity=Severity.WARNING,
        filename="t.py",
        location=Location(row, 1),
        end_location=Location(row, 2),
        fix=Fix("safe" if applicability == "safe" else "unsafe", "do it", edits),
    )


# --- apply_edits ---------------------------------------------------------------------------


def test_apply_edits_replaces_inserts_and_deletes() -> None:
    text = "alpha beta\ngamma\n"
    result = apply_edits(
        text,
        [
            edit("GAMMA", (2, 1), (2, 6)),
            edit("", (1, 6), (1, 11)),  # delete " beta"
            edit(">> ", (1, 1)),
        ],
    )
    assert result == ">> alpha\nGAMMA\n"


def test_apply_edits_order_at_one_point() -> None:
    text = "abc"
    # insertions at one point keep their order; an insertion before a replacement starting
    # there goes first
    result = apply_edits(text, [edit("X", (1, 2), (1, 3)), edit("1", (1, 2)), edit("2", (1, 2))])
    assert result == "a12Xc"


def test_apply_edits_rejects_overlaps() -> None:
    with pytest.raises(EditConflict):
        apply_edits("abcdef", [edit("x", (1, 1), (1, 4)), edit("y", (1, 3), (1, 5))])
    with pytest.raises(EditConflict):
        apply_edits("abcdef", [edit("x", (1, 4), (1, 2))])  # ends before it starts


def test_apply_edits_uses_the_dominant_newline() -> None:
    text = "a = 1\r\nb = 2\r\n"
    result = apply_edits(text, [edit("import torch\n", (2, 1))])
    assert result == "a = 1\r\nimport torch\r\nb = 2\r\n"
    assert apply_edits("a\n", [edit("x\ny\n", (1, 1))], newline="\r") == "x\ry\ra\n"


def test_apply_edits_columns_are_code_points() -> None:
    text = 'é = "ü"; x = 1\n'
    assert apply_edits(text, [edit("y", (1, 10), (1, 11))]) == 'é = "ü"; y = 1\n'


def test_apply_edits_at_end_of_text() -> None:
    assert apply_edits("x = 1", [edit("\ny = 2", (1, 6))]) == "x = 1\ny = 2"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", "\n"),
        ("a\nb\n", "\n"),
        ("a\r\nb\r\nc\n", "\r\n"),
        ("a\rb\r", "\r"),
        ("a\r\nb\n", "\n"),  # a tie goes to \n
    ],
)
def test_dominant_newline(text: str, expected: str) -> None:
    assert dominant_newline(text) == expected


# --- choosing fixes for one pass -----------------------------------------------------------


def test_select_fixes_skips_overlapping_fixes() -> None:
    text = "abcdefgh\n"
    first = diagnostic(edit("X", (1, 1), (1, 3)), row=1)
    overlapping = diagnostic(edit("Y", (1, 2), (1, 4)), row=2)
    adjacent = diagnostic(edit("Z", (1, 3), (1, 4)), row=3)
    inside = diagnostic(edit("W", (1, 2)), row=4)  # an insertion inside a replaced range
    same_point = diagnostic(edit("A", (1, 6)), row=5)
    same_point_again = diagnostic(edit("B", (1, 6)), row=6)
    unsafe = diagnostic(edit("U", (1, 8), (1, 9)), applicability="unsafe", row=7)
    candidates = [first, overlapping, adjacent, inside, same_point, same_point_again, unsafe]
    assert select_fixes(text, candidates, unsafe=False) == [first, adjacent, same_point]
    assert unsafe in select_fixes(text, candidates, unsafe=True)


# --- fix_text ------------------------------------------------------------------------------


def test_fix_text_tl204() -> None:
    result = fix_text(DEPRECATED_SCALER, "amp.py")
    assert result.text == FIXED_SCALER
    assert result.fixed_count == 1
    assert result.remaining_diagnostics == []
    assert isinstance(parse_source(result.text), ParsedSource)
    again = fix_text(result.text, "amp.py")
    assert (again.text, again.fixed_count, again.passes) == (result.text, 0, 0)


def test_fix_text_needs_several_passes_for_overlapping_fixes() -> None:
    # Both fixes insert `import torch` at the same point: one per pass, and the second pass
    # no longer needs the import.
    text = "from torch.cuda import amp\na = amp.GradScaler()\nb = amp.GradScaler()\n"
    result = fix_text(text, "amp.py")
    assert result.text == (
        "from torch.cuda import amp\nimport torch\n"
        'a = torch.amp.GradScaler("cuda")\nb = torch.amp.GradScaler("cuda")\n'
    )
    assert result.fixed_count == 2
    assert result.passes == 2


def test_fix_text_respects_the_selection_and_keeps_other_diagnostics() -> None:
    text = DEPRECATED_SCALER + "x = torch.cuda.amp.autocast()\n"
    nothing = fix_text(text, "amp.py", RuleSelection(ignore=("TL204",)))
    assert (nothing.text, nothing.fixed_count) == (text, 0)


def test_fix_text_rejects_fixes_that_break_the_file(monkeypatch: pytest.MonkeyPatch) -> None:
    # No real rule makes a broken fix (that would be a bug), so add one to the real analysis.
    broken = diagnostic(edit("(", (1, 1)), row=1)

    def analyze_with_broken_fix(
        text: str,
        filename: str = "<stdin>",
        selection: RuleSelection = DEFAULT_SELECTION,
        project: object = None,
    ) -> Analysis:
        analysis = analyze_source(text, filename, selection)
        if not text.startswith("("):
            analysis.diagnostics.insert(0, dataclasses.replace(broken, filename=filename))
        return analysis

    monkeypatch.setattr(fixer, "analyze_source", analyze_with_broken_fix)
    result = fix_text(DEPRECATED_SCALER, "amp.py")
    assert result.text == FIXED_SCALER  # the good fix still went in
    assert result.fixed_count == 1
    assert len(result.rejected) == 1
    assert "amp.py:1:1: the fix for TL204 would break the file" in result.rejected[0]


def test_fix_text_on_unparsable_text_changes_nothing() -> None:
    text = "def f(:\n"
    result = fix_text(text, "bad.py")
    assert result.text == text
    assert [d.code for d in result.remaining_diagnostics] == ["TL001"]


# --- files ---------------------------------------------------------------------------------


def test_decode_and_encode_keep_encoding_and_bom() -> None:
    latin = b"# coding: latin-1\nx = '\xe9'\n"
    source = decode_file(latin)
    assert source is not None
    assert source.text == "# coding: latin-1\nx = 'é'\n"
    assert source.round_trips
    assert encode_file(source, source.text) == latin

    bom = b"\xef\xbb\xbfx = 1\n"
    source = decode_file(bom)
    assert source is not None and source.text == "x = 1\n"
    assert encode_file(source, "y = 2\n") == b"\xef\xbb\xbfy = 2\n"

    assert decode_file(b"x = '\xff'\n") is None  # not UTF-8, no cookie
    assert decode_file(b"# coding: nonsense\n") is None
    with pytest.raises(EncodingError):
        encode_file(SourceFile("", "iso-8859-1"), "x = '\u20ac'\n")


def test_write_atomic_keeps_mode_and_follows_links(tmp_path: Path) -> None:
    target = tmp_path / "train.py"
    target.write_bytes(b"old\n")
    target.chmod(0o751)
    link = tmp_path / "link.py"
    link.symlink_to(target)
    write_atomic(link, b"new\n")
    assert link.is_symlink()
    assert target.read_bytes() == b"new\n"
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o751
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.py", "train.py"]


def test_unified_diff() -> None:
    diff = unified_diff("a\nb", "a\nc", "x.py")
    assert diff.splitlines() == [
        "--- a/x.py",
        "+++ b/x.py",
        "@@ -1,2 +1,2 @@",
        " a",
        "-b",
        "\\ No newline at end of file",
        "+c",
        "\\ No newline at end of file",
    ]
    assert unified_diff("same\n", "same\n", "x.py") == ""
