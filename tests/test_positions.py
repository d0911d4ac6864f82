"""Positions from anchored partial code generation must equal those of a full pass."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import libcst as cst
import pytest
from hypothesis import given
from hypothesis import strategies as st

from torchlint.analysis.block_split import block_starts
from torchlint.analysis.collect import collect
from torchlint.analysis.incremental import IncrementalParser
from torchlint.analysis.positions import PositionIndex
from torchlint.analysis.source import ParsedSource, line_starts, parse_source

ROOT = Path(__file__).resolve().parent.parent
FILES = sorted([*ROOT.glob("tests/cases/*/*.py"), *ROOT.glob("examples/*.py")])

TRICKY = {
    "parens_and_continuations": """\
        import torch
        x = (
            torch.randn(3)
            .cuda()
        )
        if (x.sum()
                > 0):
            y = [v.item()
                 for v in x]
        """,
    "unicode": "café = 'ü'; total = torch.zeros(()).item()  # é\nprint(café)\n",
    "one_line_suites": "for i in range(3): loss.backward(); opt.step()\nif x: y.item()\n",
    "decorators_and_classes": """\
        class T:
            @torch.no_grad()
            @staticmethod
            def f(model, x):
                with torch.autocast("cuda"), open("f") as fh:
                    return model(x).cpu()
        """,
    "crlf": "import torch\r\nfor x in y:\r\n    loss.backward()\r\n    print(loss.item())\r\n",
    "tabs": "def f():\n\tfor x in y:\n\t\tif x:\n\t\t\tz = x.item()\n",
    "no_trailing_newline": "for x in y:\n    x.item()",
    "match": "match cmd:\n    case 1:\n        a.item()\n    case _:\n        b.cpu()\n",
    "comments_above_statements": """\
        # a comment above the class
        class Trainer:  # café
            # above a decorated method
            @torch.no_grad()

            async def evaluate(self, loader):
                # above a loop
                for x in loader:

                    # above an if, after a blank line
                    if x:
                        pass
                    elif y:  # ü
                        while z:
                            z -= 1
                    else:
                        with ctx:
                            pass
        """,
    "try": "try:\n    a.item()\nexcept E as e:\n    b.item()\nelse:\n    c()\nfinally:\n    d()\n",
}


def _all_nodes(module: cst.Module) -> list[cst.CSTNode]:
    found: list[cst.CSTNode] = []

    class Walk(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            found.append(node)
            return True

    module.visit(Walk())
    return found


def _check(parsed: ParsedSource) -> int:
    facts = collect(parsed)
    partial = PositionIndex(parsed, facts.anchors)
    full = PositionIndex(parsed)
    nodes = [n for n in _all_nodes(parsed.module) if id(n) in facts.anchors]
    assert nodes
    compound = [n for n in nodes if isinstance(n, cst.BaseCompoundStatement)]
    for node in nodes:
        if node not in compound:
            assert partial.span(node) == full.span(node), partial.text(node)
    for node in compound:  # rows from `ast`, without code generation: the keyword's row
        keyword_row = full.span(getattr(node, "name", None) or node).start.row
        if isinstance(node, cst.FunctionDef | cst.ClassDef):
            assert partial.row(node) == keyword_row
        else:
            assert partial.row(node) == full.span(node).start.row
    for node in compound:  # whole statements, from code generated for the statement alone
        assert partial.span(node) == full.span(node), full.text(node)
    return partial.full_passes


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_partial_positions_match_full_codegen_on_real_files(path: Path) -> None:
    parsed = parse_source(path.read_text())
    assert isinstance(parsed, ParsedSource)
    assert _check(parsed) == 0, "fell back to a full pass on an ordinary file"


@pytest.mark.parametrize("name", sorted(TRICKY))
def test_partial_positions_match_full_codegen_on_tricky_layouts(name: str) -> None:
    parsed = parse_source(textwrap.dedent(TRICKY[name]))
    assert isinstance(parsed, ParsedSource)
    _check(parsed)


@pytest.mark.parametrize("path", FILES[::4], ids=lambda p: str(p.relative_to(ROOT)))
def test_positions_use_the_incremental_parsers_blocks(path: Path) -> None:
    text = path.read_text()
    parsed = IncrementalParser().parse(text)
    assert isinstance(parsed, ParsedSource)
    assert parsed.block_starts == tuple(block_starts(text))  # no second scan needed
    assert _check(parsed) == 0


@given(st.text(alphabet="ab \t\r\n#", max_size=40))
def test_line_starts_break_where_the_protocol_does(text: str) -> None:
    expected = [0, *(match.end() for match in re.finditer(r"\r\n|\r|\n", text))]
    assert line_starts(text) == expected
