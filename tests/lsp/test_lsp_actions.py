"""Code actions as pure functions: where `# noqa` and `ignore-file` go, the fix-all edit, and
the `only` filter. Each result is checked by applying it and re-analysing."""

from __future__ import annotations

import pytest
from lsp_helpers import apply_text_edits
from lsprotocol import types

from torchlint.engine import analyze
from torchlint.lsp.actions import (
    ignore_file_edit,
    kind_requested,
    noqa_edit,
    replacement_edit,
)
from torchlint.lsp.convert import PositionMap

LOOP = """\
import torch
from torch import nn

model = nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = [(torch.randn(8, 4), torch.randn(8, 2)) for _ in range(10)]

for x, y in loader:
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
{tail}
"""


def codes(text: str) -> list[str]:
    return [d.code for d in analyze(text)]


def suppress_on_line(text: str) -> str:
    (diagnostic,) = analyze(text)
    edit = noqa_edit(
        PositionMap(text),
        diagnostic.code,
        diagnostic.location.row - 1,
        diagnostic.end_location.row - 1,
    )
    assert edit is not None
    return apply_text_edits(text, [edit])


def test_noqa_appended() -> None:
    text = LOOP.format(tail="    print(loss.item())   ")
    fixed = suppress_on_line(text)
    assert "    print(loss.item())  # noqa: TL301\n" in fixed
    assert codes(fixed) == []


@pytest.mark.parametrize(
    ("comment", "expected"),
    [
        ("# noqa: E501", "# noqa: E501, TL301"),
        ("# NOQA:E501,W291", "# NOQA:E501,W291, TL301"),
        ("# keep this  # noqa: E501", "# keep this  # noqa: E501, TL301"),
        ("# type: ignore[attr-defined]", "# type: ignore[attr-defined]  # noqa: TL301"),
    ],
)
def test_noqa_extends_or_follows_a_comment(comment: str, expected: str) -> None:
    text = LOOP.format(tail=f"    print(loss.item())  {comment}")
    fixed = suppress_on_line(text)
    assert f"print(loss.item())  {expected}\n" in fixed
    assert codes(fixed) == []


def test_noqa_on_the_last_line_of_a_continued_finding() -> None:
    # The finding starts on a line continued by a backslash: the comment goes on its last
    # line, which the engine honours too.
    text = LOOP.format(tail="    value = loss \\\n        .item()")
    fixed = suppress_on_line(text)
    assert "        .item()  # noqa: TL301\n" in fixed
    assert codes(fixed) == []


def test_no_noqa_inside_a_string() -> None:
    # The finding's only line ends inside a triple-quoted string: no comment can go there.
    text = LOOP.format(tail='    print(loss.item(), """\n    done""")')
    (diagnostic,) = analyze(text)
    row = diagnostic.location.row - 1
    assert noqa_edit(PositionMap(text), "TL301", row, row) is None


def test_noqa_after_a_hash_in_a_string() -> None:
    text = LOOP.format(tail='    print("#", loss.item())')
    fixed = suppress_on_line(text)
    assert 'print("#", loss.item())  # noqa: TL301\n' in fixed
    assert codes(fixed) == []


def test_noqa_in_text_that_does_not_tokenize() -> None:
    text = "print(x  # noqa: E1\n"
    edit = noqa_edit(PositionMap(text), "TL301", 0, 0)
    assert edit is not None
    assert apply_text_edits(text, [edit]) == "print(x  # noqa: E1, TL301\n"
    text = "s = 'a # b' + (\n"
    edit = noqa_edit(PositionMap(text), "TL301", 0, 0)
    assert edit is not None
    assert apply_text_edits(text, [edit]) == "s = 'a # b' + (  # noqa: TL301\n"


@pytest.mark.parametrize(
    ("head", "expected"),
    [
        ("", "# torchlint: ignore-file[TL301]\nimport torch"),
        ("#!/usr/bin/env python\n", "#!/usr/bin/env python\n# torchlint: ignore-file[TL301]\n"),
        ("# coding: latin-1\n", "# coding: latin-1\n# torchlint: ignore-file[TL301]\nimport"),
        (
            "#!/usr/bin/python\n# -*- coding: utf-8 -*-\n",
            "# -*- coding: utf-8 -*-\n# torchlint: ignore-file[TL301]\nimport",
        ),
        ("# torchlint: ignore-file[TL303]\n", "# torchlint: ignore-file[TL303, TL301]\nimport"),
        ("# torchlint: ignore-file[]\n", "# torchlint: ignore-file[TL301]\nimport"),
    ],
)
def test_ignore_file(head: str, expected: str) -> None:
    text = head + LOOP.format(tail="    print(loss.item())")
    edit = ignore_file_edit(PositionMap(text), "TL301")
    fixed = apply_text_edits(text, [edit])
    assert expected in fixed
    assert codes(fixed) == []


def test_ignore_file_after_a_lone_shebang() -> None:
    text = "#!/usr/bin/env python"
    edit = ignore_file_edit(PositionMap(text), "TL301")
    assert (
        apply_text_edits(text, [edit]) == "#!/usr/bin/env python\n# torchlint: ignore-file[TL301]"
    )


def test_ignore_file_uses_the_documents_line_ending() -> None:
    text = "import torch\r\n"
    edit = ignore_file_edit(PositionMap(text), "TL301")
    assert apply_text_edits(text, [edit]) == "# torchlint: ignore-file[TL301]\r\nimport torch\r\n"


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("abc", "abc"),
        ("a = 1\nb = 2\n", "a = 1\nb = 3\n"),
        ("x\r\ny\r\n", "x\r\nz\r\ny\r\n"),
        ("a\r\nb", "a\nb"),
        ("🔥a🔥", "🔥b🔥"),
        ("", "new\n"),
        ("gone\n", ""),
    ],
)
def test_replacement_edit(old: str, new: str) -> None:
    edit = replacement_edit(old, new, types.PositionEncodingKind.Utf16)
    if old == new:
        assert edit is None
        return
    assert edit is not None
    assert apply_text_edits(old, [edit]) == new
    positions = PositionMap(old)
    for end in (edit.range.start, edit.range.end):  # never between `\r` and `\n`
        offset = positions.to_offset(end)
        assert old[offset - 1 : offset + 1] != "\r\n"


def test_replacement_edit_is_minimal() -> None:
    edit = replacement_edit("a = 1\nb = 2\nc = 3\n", "a = 1\nb = 22\nc = 3\n", "utf-16")
    assert edit is not None
    assert edit.range.start == types.Position(line=1, character=5)
    assert edit.new_text == "2"


@pytest.mark.parametrize(
    ("kind", "only", "expected"),
    [
        ("quickfix", None, True),
        ("quickfix", ["quickfix"], True),
        ("quickfix", ["source"], False),
        ("source.fixAll.torchlint", ["source"], True),
        ("source.fixAll.torchlint", ["source.fixAll"], True),
        ("source.fixAll.torchlint", ["source.fixAll.torchlint"], True),
        ("source.fixAll.torchlint", ["source.fix"], False),
        ("source.fixAll.torchlint", ["quickfix", "refactor"], False),
        ("quickfix", [], False),
    ],
)
def test_kind_requested(kind: str, only: list[str] | None, expected: bool) -> None:
    assert kind_requested(kind, only) is expected
