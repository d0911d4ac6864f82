"""The shortcuts of names.py and syntax.py give what libcst itself gives, for any input."""

from __future__ import annotations

import libcst as cst
import pytest
from hypothesis import given
from hypothesis import strategies as st

from torchlint.analysis.names import expr_text
from torchlint.analysis.syntax import literal

_EMPTY = cst.Module(body=())

BOUNDS = st.sampled_from(["", "i", "10", "-1", "- 1", "(n)", "len(x)", "a.b", "-(2)", "n + 1"])
SPACES = st.sampled_from(["", " "])


@given(BOUNDS, SPACES, SPACES, BOUNDS, st.sampled_from([None, "", ":"]), BOUNDS)
def test_a_slice_reads_as_libcst_writes_it(
    lower: str, before: str, after: str, upper: str, second: str | None, step: str
) -> None:
    text = f"{lower}{before}:{after}{upper}"
    if second is not None:
        text += f":{step}"
    subscript = cst.parse_expression(f"x[{text}, 0]")
    assert isinstance(subscript, cst.Subscript)
    written = _EMPTY.code_for_node(subscript.slice[0].slice).strip()
    assert expr_text(subscript) == f"x[{written}, 0]"


@pytest.mark.parametrize("code", ["x[1 :\n 2]", "x[a:b:c]", "x[::-1]", "x[(a):]", "x[:, None]"])
def test_slices_that_span_lines_or_hold_more_are_written_by_libcst(code: str) -> None:
    subscript = cst.parse_expression(code)
    assert isinstance(subscript, cst.Subscript)
    inner = ", ".join(_EMPTY.code_for_node(el.slice).strip() for el in subscript.slice)
    assert expr_text(subscript) == f"x[{inner}]"


STRING_BODIES = st.text(alphabet="ab'\"\\n é{}", max_size=8)


@given(STRING_BODIES, st.sampled_from(["", "r", "b", "u", "f", "rb"]), st.sampled_from(["'", '"']))
def test_a_string_literal_has_the_value_python_gives_it(body: str, prefix: str, quote: str) -> None:
    for quotes in (quote, quote * 3):
        code = f"{prefix}{quotes}{body}{quotes}"
        try:
            node = cst.parse_expression(code)
        except Exception:  # not Python (a quote that closes early): nothing to compare
            continue
        if type(node) is not cst.SimpleString:
            continue  # an f-string
        try:
            expected = node.evaluated_value
        except Exception:
            continue
        assert literal(node) == expected
