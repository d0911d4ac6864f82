"""Property tests: whatever text the analysis is given, it answers with diagnostics, never a
traceback. Valid programs come from hypothesmith (generated from Python's grammar, and from
libcst's node types); arbitrary text mixes random characters with the pieces that break
tokenizers: NUL bytes, lone surrogates, BOMs, mixed line endings, tabs, form feeds, very long
lines and 200-deep nesting.

The example counts come from the hypothesis profile (tests/hypothesis_profiles.py): a few dozen
in CI, `--hypothesis-profile=long` for a deeper run."""

from __future__ import annotations

import ast
import re
import warnings

import hypothesmith
from hypothesis import example, given
from hypothesis import strategies as st

from torchlint.engine import Analysis, analyze_bytes, analyze_source
from torchlint.selection import RuleSelection

ALL = RuleSelection(select=("ALL",))
CODE = re.compile(r"TL\d{3}")
# Lines as Python counts them: `\n`, `\r\n` and `\r` end a line; form feeds and the like do not.
PY_LINES = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
DEEP = 200


def _python_parses(text: str) -> bool:
    """Whether Python parses `text` as it would a file's decoded text (a leading BOM is
    allowed there, though `ast.parse` refuses it in a string)."""
    text = text.removeprefix("\ufeff")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # invalid escape sequences and the like
        try:
            ast.parse(text)
        except (SyntaxError, ValueError, MemoryError, RecursionError, UnicodeError):
            return False
    return True


def check_well_formed(analysis: Analysis, text: str, filename: str) -> None:
    """The invariants every answer keeps: positions inside the text, one TL001 alone."""
    lines = PY_LINES.findall(text)
    last_row = len(lines) + 1
    for d in analysis.diagnostics:
        assert CODE.fullmatch(d.code), d
        assert d.filename == filename
        assert d.message
        assert 1 <= d.location.row <= last_row, (d, last_row)
        assert 1 <= d.end_location.row <= last_row, (d, last_row)
        assert d.location.column >= 1 and d.end_location.column >= 1, d
        assert (d.location.row, d.location.column) <= (d.end_location.row, d.end_location.column)
        if d.code != "TL001" and d.location.row <= len(lines):
            line = lines[d.location.row - 1].rstrip("\r\n")
            assert d.location.column <= len(line) + 1, (d, line)
    codes = [d.code for d in analysis.diagnostics]
    if "TL001" in codes:
        assert codes == ["TL001"], codes
    for error in analysis.errors:  # only the one documented way to skip a file
        assert "nested too deeply to analyse" in error, error


# --- valid programs --------------------------------------------------------------------------


@given(hypothesmith.from_grammar())
def test_generated_programs_never_raise(source: str) -> None:
    analysis = analyze_source(source, "generated.py", ALL)
    check_well_formed(analysis, source, "generated.py")


@given(hypothesmith.from_node())
def test_generated_syntax_trees_never_raise(source: str) -> None:
    analysis = analyze_source(source, "generated.py", ALL)
    check_well_formed(analysis, source, "generated.py")
    if _python_parses(source):
        assert [d.code for d in analysis.diagnostics if d.code == "TL001"] == []


# --- arbitrary text --------------------------------------------------------------------------

_NASTY = [
    "\x00",
    "\ud800",  # a lone surrogate: cannot be encoded as UTF-8
    "\udfff",
    "\ufeff",  # a BOM, at the start or anywhere
    "\r\n",
    "\r",
    "\n",
    "\t",
    "\f",
    "\v",
    "\x1a",
    "\u2028",
    "\\\n",
    "x" * 20_000,  # a very long line
    "(" * DEEP,
    ")" * DEEP,
    "[" * DEEP + "]" * DEEP,
    "".join(" " * i + "if x:\n" for i in range(DEEP)) + " " * DEEP + "pass\n",
    "f'{" * 20,
    '"""',
    "'",
    "#",
    "# noqa: TL101\n",
    "# coding: latin-1\n",
    "    ",
    ":",
    "def f(",
    "class C:\n",
    "lambda: (yield)",
    "import torch\n",
    "for x in loader:\n    loss.backward()\n",
    "optimizer.step()\n",
    "with torch.autocast('cuda'):\n",
]

_PIECES = st.one_of(
    st.text(max_size=20),
    st.text(st.characters(codec="utf-8"), max_size=20),
    st.sampled_from(_NASTY),
)
ARBITRARY_TEXT = st.lists(_PIECES, max_size=12).map("".join)

_TRAINING_LOOP = (
    "import torch\n"
    "for batch in loader:\n"
    "    optimizer.zero_grad()\n"
    "    loss = model(batch)\n"
    "    loss.backward()\n"
)


@given(ARBITRARY_TEXT)
@example("")
@example("\ufeff")
@example("\x00")
@example("\ud800")
@example("(" * DEEP + ")" * DEEP)
@example("(" * (DEEP + 1) + ")" * (DEEP + 1))
@example(_NASTY[17])
@example(_TRAINING_LOOP.replace("\n", "\r"))
@example(_TRAINING_LOOP.replace("\n", "\r\n", 2) + "\f\t\v")
@example("\ufeff" + _TRAINING_LOOP + "x = '\ud800'\n")
def test_arbitrary_text_gives_diagnostics_or_one_tl001(text: str) -> None:
    analysis = analyze_source(text, "any.py", ALL)
    check_well_formed(analysis, text, "any.py")
    if not _python_parses(text):
        assert [d.code for d in analysis.diagnostics] == ["TL001"]


_NASTY_BYTES = [
    b"\xef\xbb\xbf",  # a BOM
    b"# -*- coding: latin-1 -*-\n",
    b"# coding: utf-16\n",
    b"# coding: no-such-codec\n",
    b"\xff\xfe",
    b"\xed\xa0\x80",  # an encoded lone surrogate: not valid UTF-8
    b"\xe9",
    b"\x00",
    b"\r\n",
    b"\r",
    b"\n",
    b"\t\f",
    b"x = 1\n",
]

ARBITRARY_BYTES = st.lists(
    st.one_of(st.binary(max_size=20), st.sampled_from(_NASTY_BYTES)), max_size=10
).map(b"".join)


@given(ARBITRARY_BYTES)
@example(b"")
@example(b"\xef\xbb\xbf")
@example(b"\xef\xbb\xbf# coding: latin-1\n")
@example(b"# coding: latin-1\nname = '\xe9'\n")
@example(b"# coding: no-such-codec\n")
@example(b"\n\n# coding: latin-1\n\xe9\n")  # the cookie is too late to count
def test_arbitrary_bytes_give_diagnostics_or_one_tl001(data: bytes) -> None:
    analysis = analyze_bytes(data, "any.py", ALL)
    # Undecodable bytes leave no text: count their lines as bytes instead.
    check_well_formed(analysis, analysis.text or data.decode("latin-1"), "any.py")
