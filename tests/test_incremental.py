"""`IncrementalParser` gives what `parse_source` gives: a module that generates the text byte for
byte and equals the whole-file parse node for node, or the same `ParseFailure`; and so the same
diagnostics, also over a sequence of edits to one parser, while re-parsing only what changed."""

from __future__ import annotations

import itertools
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import libcst as cst
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from torchlint.analysis import block_split, incremental
from torchlint.analysis.incremental import IncrementalParser
from torchlint.analysis.source import ParsedSource, ParseFailure, parse_source
from torchlint.engine import analyze_source
from torchlint.selection import RuleSelection

ROOT = Path(__file__).resolve().parent.parent
ALL = RuleSelection(select=("ALL",))


def check(parser: IncrementalParser, text: str) -> ParsedSource | ParseFailure:
    """Parse `text` with `parser` and compare everything with the whole-file path."""
    result = parser.parse(text)
    expected = parse_source(text)
    if isinstance(expected, ParseFailure):
        assert result == expected
    else:
        assert isinstance(result, ParsedSource), result
        assert result.text == text
        assert result.module.deep_equals(expected.module)
        if parser.stats.fallback is None:  # (libcst itself loses a final lone \r)
            assert result.module.code == text
        assert result.lines.starts == expected.lines.starts
    mine = analyze_source(text, "f.py", ALL, parse=parser.parse)
    theirs = analyze_source(text, "f.py", ALL)
    assert mine.diagnostics == theirs.diagnostics
    assert mine.errors == theirs.errors
    return result


def nodes(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    yield node
    for child in node.children:
        yield from nodes(child)


def assert_no_shared_nodes(module: cst.Module) -> None:
    """The analysis keys its tables by node identity: no node may sit twice in one tree."""
    seen: set[int] = set()
    for node in nodes(module):
        assert id(node) not in seen, node
        seen.add(id(node))


# --- files -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    out = tmp_path_factory.mktemp("corpus")
    subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "make_corpus.py"), str(out), "--count", "10"],
        check=True,
        capture_output=True,
    )
    return sorted(out.glob("*.py"))


def _project_files() -> list[Path]:
    return sorted((ROOT / "examples").glob("*.py")) + sorted((ROOT / "tests/cases").rglob("*.py"))


@pytest.mark.parametrize(
    "path", _project_files(), ids=lambda p: str(p.relative_to(ROOT)).replace("/", ":")
)
def test_project_files_parse_the_same(path: Path) -> None:
    parser = IncrementalParser()
    check(parser, path.read_text(encoding="utf-8"))
    assert parser.stats.fallback is None


def test_corpus_files_parse_the_same(corpus: list[Path]) -> None:
    for path in corpus[:8]:
        parser = IncrementalParser()
        check(parser, path.read_text(encoding="utf-8"))
        assert parser.stats.fallback is None
        assert parser.stats.parsed == 0  # analyze_source's parse found every block cached
        assert parser.stats.reused == parser.stats.blocks > 10


# --- tricky inputs -----------------------------------------------------------------------------

TRICKY = {
    "empty": "",
    "newline only": "\n",
    "blank lines": "\n\n   \n\t\n",
    "only comments": "# one\n\n# two\n    # indented\n",
    "no trailing newline": "import torch\n\ndef f():\n    return torch.zeros(1)",
    "comment without trailing newline": "x = 1\n# end",
    "decorators": (
        "import functools\n\n\n@functools.lru_cache\n# between\n@functools.wraps(\n    print,\n)\n"
        "\ndef f():\n    pass\n@staticmethod\nasync def g():\n    pass\n@decorate\nclass C:\n"
        "    @property\n    def x(self):\n        return 1\n"
    ),
    "if elif else": (
        "if a:\n    x = 1\n# comment\nelif b:\n    x = 2\n\nelse:\n    x = 3\nif c: y = 1\n"
        "else: y = 2\nelsewhere = 4\n"
    ),
    "try except finally": (
        "try:\n    import torch\nexcept ImportError:\n    torch = None\nexcept (ValueError,"
        "\n        TypeError):\n    pass\nelse:\n    pass\nfinally:\n    done = True\ntry:\n"
        "    pass\nexcept* OSError:\n    pass\n"
    ),
    "loops with else": (
        "for i in range(3):\n    pass\nelse:\n    print(i)\nwhile False:\n    pass\nelse:\n"
        "    pass\n"
    ),
    "match": (
        "match command:\n    case [x, y]:\n        pass\n    case {'k': v}:\n        pass\n"
        "    case _:\n        pass\ncase = 1\nmatch = 2\nmatch (case):\n    case 1:\n        pass\n"
    ),
    "brackets at column 0": (
        "x = [\n1,\n2,\n]\ny = dict(\na=1,\nb=(\n3\n),\n)\ndef f(\na,\nb,\n):\n    return {\n"
        "'k':\n[a,\nb]}\nz = 1\n"
    ),
    "triple quoted strings": (
        's = """\ndef x():\n    pass\n\\"""\nclass Y: pass\n"""\nt = r\'\'\'\nimport os\n'
        "''' + rb'''\nif x:\n'''\ndef f():\n    return f\"\"\"\n{s}\ndef g():\n\"\"\"\n"
        'u = """one line"""\n"""\ndef docstring_at_top_level():\n"""\nv = 1\n'
    ),
    "single quoted strings": (
        "s = 'abc\\\ndef x(): pass'\nt = \"it's # not a comment (\"\ndef f():\n    return 'x'\n"
        'u = \'\\\\\'\nv = "\\""\nw = 2\n'
    ),
    "backslash continuations": (
        "x = 1 + \\\n2\nif a and \\\nb:\n    pass\nimport os, \\\n  sys\ny = 3\n"
        "# a comment ending in a backslash \\\nz = 4\n"
    ),
    "comments with brackets and quotes": '# it\'s ( open [\nx = 1\n# """ not a string\ny = 2\n',
    "semicolons and one-liners": "import os; import sys\nif x: pass\nclass C: pass\nx = 1; y = 2\n",
    "f-strings": (
        'width = 5\ns = f"{width!r:>{width}}"\nt = f\'{ {"a": 1}["a"] }\'\n'
        'u = f"""\n{width}\ndef x():\n"""\ndef f():\n    return f"{s}"\n'
    ),
    "trailing comments at every depth": (
        "def f():\n    if a:\n        x = 1\n        # deep\n    # middle\n  # odd\n# top\n\n"
        "def g():\n    pass\n\n    # after a blank line\n\n\n# before h\ndef h():\n    pass\n"
        "    # last, indented\n# last\n\n"
    ),
    "whitespace-only lines": (
        "import os\n\n\n    \nclass C:\n    def f(self):\n        pass\n\n    \n\n  \t\n"
        "class D:\n    pass\n        \n# c\n   \ny = 2\n"
    ),
    "backslash-only lines": "import os\n\\\nx = 1\n\\\n\ny = 2\n",
    "f-string across lines": 'x = 1\ns = f"{\n1\n}"\ny = 2\n',  # PEP 701; libcst takes it
    "unicode": (
        "# -*- coding: utf-8 -*-\nnäme = 'ünïcödé ✓'\ndef grüße(π=3.14):\n    return f\"{π} 🔥\"\n"
        "ключ = 1\n"
    ),
    "tabs": "import torch\n\ndef f(x):\n\tif x:\n\t\treturn 1\n\treturn 2\n\nclass C:\n\tpass\n",
    "mixed indentation": (
        "x = 1\ndef two():\n  return 2\ndef four():\n    return 4\ndef tab():\n\treturn 8\n"
        "class C:\n    def m(self):\n      return 6\nif x:\n  pass\n"
    ),
    "crlf": "import torch\r\n\r\ndef f():\r\n    # c\r\n    return 1\r\n\r\nx = f()\r\n",
    "mixed newlines": "x = 1\ndef f():\r\n    return 1\r\ny = '''\r\n'''\nz = 2\r\n",
    "lone carriage returns": "x = 1\ry = 2\rdef f():\r    pass\r",
    "form feed": "x = 1\n\f\ndef f():\n    pass\n\fy = 2\n",
    "duplicate blocks": (
        "x = 1\nx = 1\ndef f():\n    return 1\n\n\ndef f():\n    return 1\n\n\nx = 1\n"
    ),
    "async and walrus": (
        "import asyncio\nasync def f():\n    async with a as b:\n        pass\n"
        "    async for i in c:\n        pass\nif (n := 10) > 5:\n    pass\n"
    ),
    "training loop": (
        "import torch\n\nmodel = torch.nn.Linear(2, 1)\n"
        "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n\n\n"
        "for x in [torch.randn(3, 2)]:\n    loss = model(x).sum()\n    loss.backward()\n"
        "    optimizer.step()\n    print(loss.item())\n"
    ),
    "unterminated string": "x = 1\ns = 'abc\ndef f():\n    pass\n",
    "unterminated triple quote": 'x = 1\ns = """abc\ndef f():\n    pass\n',
    "unclosed bracket": "x = (1,\ndef f():\n    pass\n",
    # CPython is asked about the text from the failed block on: its row, and the lines its
    # message names, must still be those of the whole text
    "mismatched bracket late": "x = 1\n\ndef f():\n    pass\n\ny = (1,\n     2]\n",
    "syntax error late": "x = 1\n\ndef f():\n    pass\n\nif x >\n    pass\n",
    "dangling decorator": "@decorator\n\nx = 1\n",
    "dangling else": "x = 1\nelse:\n    pass\n",
    "bad indentation": "def f():\n    x = 1\n  y = 2\nz = 3\n",
    "unexpected indent": "x = 1\n    y = 2\n",
    "indented first line": "  x = 1\ny = 2\n",
    "backslash at the end": "x = 1 \\",
    "nul byte": "x = 1\ny = '\x00'\n",
    "too deeply nested": "x = " + "(" * 250 + ")" * 250 + "\n",
    "nested but fine": "".join(f"x{i} = " + "(" * 60 + ")" * 60 + "\n" for i in range(4)),
}


@pytest.mark.parametrize("name", list(TRICKY))
def test_tricky_inputs_parse_the_same(name: str) -> None:
    text = TRICKY[name]
    parser = IncrementalParser()
    result = check(parser, text)
    if isinstance(result, ParsedSource):
        assert_no_shared_nodes(result.module)


@pytest.mark.parametrize(
    "name",
    [
        "decorators",
        "if elif else",
        "try except finally",
        "match",
        "brackets at column 0",
        "triple quoted strings",
        "backslash continuations",
        "trailing comments at every depth",
        "whitespace-only lines",
        "tabs",
        "mixed indentation",
        "crlf",
        "mixed newlines",
        "f-strings",
    ],
)
def test_tricky_inputs_are_split_not_fallen_back(name: str) -> None:
    parser = IncrementalParser()
    parser.parse(TRICKY[name])
    assert parser.stats.fallback is None
    assert parser.stats.blocks >= 2


def test_block_boundaries_of_tricky_constructs() -> None:
    parser = IncrementalParser()
    parser.parse(TRICKY["if elif else"])
    assert parser.stats.blocks == 3  # if/elif/else, the one-line if/else, elsewhere
    parser.parse(TRICKY["triple quoted strings"])
    assert parser.stats.blocks == 6  # s, t, f, u, the string statement, v
    parser.parse(TRICKY["backslash continuations"])
    assert parser.stats.blocks == 4  # y and z stay together after a comment ending in \\


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("unterminated string", "syntax error"),
        ("unclosed bracket", "syntax error"),
        ("dangling decorator", "syntax error"),
        ("dangling else", "syntax error"),
        ("lone carriage returns", "carriage return"),
        ("too deeply nested", "nesting"),
        ("f-string across lines", "unterminated string"),
    ],
)
def test_stats_say_why_a_text_was_not_combined(name: str, reason: str) -> None:
    parser = IncrementalParser()
    parser.parse(TRICKY[name])
    assert parser.stats.fallback == reason


def test_duplicate_blocks_get_their_own_nodes() -> None:
    text = TRICKY["duplicate blocks"]
    parser = IncrementalParser()
    first = parser.parse(text)
    second = parser.parse(text)
    assert parser.stats.parsed == 0
    for result in (first, second):
        assert isinstance(result, ParsedSource)
        assert_no_shared_nodes(result.module)


# --- edits -------------------------------------------------------------------------------------


def _insert_after(text: str, anchor: str, line: str) -> str:
    index = text.index(anchor) + len(anchor)
    index = text.index("\n", index) + 1
    return text[:index] + line + text[index:]


def test_a_sequence_of_edits_stays_equivalent() -> None:
    original = (ROOT / "examples" / "trainer_class.py").read_text(encoding="utf-8")
    parser = IncrementalParser()
    check(parser, original)
    blocks = parser.stats.blocks

    # a line inserted in a method: one block re-parsed
    edited = _insert_after(original, ".backward()", "            seen = step + 1\n")
    check(parser, edited)
    assert parser.stats.fallback is None
    fresh = IncrementalParser()
    fresh.parse(original)
    fresh.parse(edited)
    assert (fresh.stats.parsed, fresh.stats.reused) == (1, blocks - 1)

    # a whole top-level block deleted
    start = edited.index("\nclass ") + 1
    end = edited.index("\nclass ", start) + 1
    deleted = edited[:start] + edited[end:]
    check(parser, deleted)
    assert parser.stats.blocks == blocks - 1

    # a syntax error typed in, then fixed
    broken = _insert_after(deleted, ".backward()", "            x = (\n")
    result = check(parser, broken)
    assert isinstance(result, ParseFailure)
    assert parser.stats.fallback == "syntax error"
    fixed = broken.replace("            x = (\n", "            x = ()\n")
    check(parser, fixed)
    assert parser.stats.fallback is None

    # back to the start: every block is still cached
    check(parser, original)
    assert (parser.stats.parsed, parser.stats.reused) == (0, blocks)


def test_edits_at_block_boundaries() -> None:
    text = "import torch\n\n\ndef f():\n    return 1\n\n\ndef g():\n    return 2\n"
    parser = IncrementalParser()
    check(parser, text)
    for edited in [
        text.replace("def g", "@torch.no_grad()\ndef g"),  # a decorator joins g's block
        text.replace("\n\n\ndef g", "\nelse_ = 1\ndef g"),
        text.replace("    return 1\n", "    return 1\nelse:\n    pass\n"),  # a syntax error
        text.replace("    return 1\n", "    return (1,\n"),  # brackets open into g
        text.replace("    return 1\n", '    return """\n'),  # a string open into g
        text.replace("    return 1\n", "    return 1\n# comment\n  # odd comment\n"),
        text.replace("def g():\n    return 2\n", "def g():\n    return 2"),
        text + "\n\n# trailing\n",
    ]:
        check(parser, edited)
        check(parser, text)


def test_a_syntax_error_is_found_without_parsing_the_whole_text(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    text = (ROOT / "examples" / "trainer_class.py").read_text(encoding="utf-8")
    parser = IncrementalParser()
    parser.parse(text)
    broken = _insert_after(text, ".backward()", "            x = (\n")
    expected = parse_source(broken)
    assert isinstance(expected, ParseFailure)

    def whole_file_parse(text: str) -> ParsedSource | ParseFailure:
        raise AssertionError("parsed the whole text")

    monkeypatch.setattr(incremental, "parse_source", whole_file_parse)
    assert parser.parse(broken) == expected
    assert (parser.stats.parsed, parser.stats.fallback) == (1, "syntax error")


def _long_script(corpus: list[Path], lines: int = 2000) -> str:
    parts: list[str] = []
    total = 0
    for path in corpus:
        part = path.read_text(encoding="utf-8")
        parts.append(part)
        total += part.count("\n")
        if total >= lines:
            break
    assert total >= lines
    return "\n\n".join(parts)


def test_one_edit_in_a_long_file_reparses_one_block(corpus: list[Path]) -> None:
    text = _long_script(corpus)
    parser = IncrementalParser()
    parser.parse(text)
    blocks = parser.stats.blocks
    assert blocks > 150
    # one line inside one function, half-way down the file
    middle = text.index("\ndef ", len(text) // 2)
    line = text.index("\n    ", middle + 1) + 1
    edited = text[:line] + "    step_count = 0\n" + text[line:]
    result = parser.parse(edited)
    assert (parser.stats.blocks, parser.stats.parsed, parser.stats.reused) == (
        blocks,
        1,
        blocks - 1,
    )
    assert parser.stats.fallback is None
    assert isinstance(result, ParsedSource)
    assert result.module.code == edited
    expected = parse_source(edited)
    assert isinstance(expected, ParsedSource)
    assert result.module.deep_equals(expected.module)
    mine = analyze_source(edited, "f.py", ALL, parse=parser.parse)
    assert mine.diagnostics == analyze_source(edited, "f.py", ALL).diagnostics


def test_the_cache_keeps_current_blocks_and_a_few_recent_ones() -> None:
    parser = IncrementalParser(recent=2)
    text = "".join(f"x{i} = {i}\n" for i in range(10))
    parser.parse(text)
    for value in range(5):
        parser.parse(text.replace("x0 = 0", f"x0 = {value + 100}"))
    assert len(parser._cache) == 10 + 2
    parser.parse(text.replace("x0 = 0", "x0 = 104"))
    assert parser.stats.parsed == 0
    parser.parse(text.replace("x0 = 0", "x0 = 100"))
    assert parser.stats.parsed == 1  # fell out of the cache


# --- random edits ------------------------------------------------------------------------------

_EXAMPLE = (
    (ROOT / "examples" / "grad_accumulation.py")
    .read_text(encoding="utf-8")
    .splitlines(keepends=True)
)
_LINES = [
    *sorted(set(_EXAMPLE)),
    "def g():\n",
    "    x = 1\n",
    '"""\n',
    "'''\n",
    "x = (\n",
    ")\n",
    "else:\n",
    "@decorator\n",
    "# comment\n",
    "        # indented comment\n",
    "\n",
    "\\\n",
    "\t\tpass\n",
    "if True:\n",
    "s = 'unterminated\n",
]
_EDITS = st.lists(
    st.tuples(st.booleans(), st.integers(0, 10_000), st.sampled_from(_LINES)),
    min_size=1,
    max_size=6,
)


@settings(max_examples=30, deadline=None)
@given(_EDITS)
def test_random_line_edits_keep_the_parse_exact(edits: list[tuple[bool, int, str]]) -> None:
    lines = list(_EXAMPLE)
    parser = IncrementalParser()
    parser.parse("".join(lines))
    for insert, where, line in edits:
        if insert:
            lines.insert(where % (len(lines) + 1), line)
        elif lines:
            del lines[where % len(lines)]
        text = "".join(lines)
        result = parser.parse(text)
        expected = parse_source(text)
        if isinstance(expected, ParseFailure):
            assert result == expected
        else:
            assert isinstance(result, ParsedSource)
            assert result.module.deep_equals(expected.module)
            if parser.stats.fallback is None:  # libcst alone loses a backslash on line 1
                assert result.module.code == text


_SNIPPETS = [
    '"', "'", '"""', "'''", "#", "\\", "\\\n", "(", ")", "[", "]", "{", "}", "\n", "\n\n",
    "@decorator\n", "else:\n", "    ", "\t", "x", "def f():\n    pass\n", "\n# comment\n",
    "\r\n", "f'", "'''\n", "\nclass A:\n", "  # comment\n", "\n    # comment\n", "elif",
]  # fmt: skip
_SOURCES = [
    (ROOT / "examples" / "grad_accumulation.py").read_text(encoding="utf-8"),
    (ROOT / "tests/cases/TL113/aliased_spellings.py").read_text(encoding="utf-8"),
    "".join(sorted(set(_LINES))),
]
_CHARACTER_EDITS = st.lists(
    st.tuples(st.integers(0, 2), st.integers(0, 100_000), st.sampled_from(_SNIPPETS)),
    min_size=1,
    max_size=12,
)


def _fresh_split(text: str) -> tuple[list[int], int, bool, list[int]]:
    split = block_split._scan(text)
    return split.starts, split.first_indented, split.complete, split.code_lines


@settings(max_examples=60, deadline=None)
@given(st.integers(0, len(_SOURCES) - 1), _CHARACTER_EDITS)
def test_splitting_after_an_edit_finds_the_blocks_a_fresh_scan_finds(
    source: int, edits: list[tuple[int, int, str]]
) -> None:
    """The language server splits each new text from the last one's split, scanning only the
    lines around the edit (`_split_after`): with brackets, quotes, decorators and comments
    typed or deleted anywhere, and lines moved, it must agree with a whole scan."""
    text = _SOURCES[source]
    previous = (text, block_split._scan(text))
    for kind, where, snippet in edits:
        at = where % (len(text) + 1)
        if kind == 0:
            text = text[:at] + snippet + text[at:]
        elif kind == 1:
            text = text[:at] + text[at + len(snippet) :]
        else:  # a line moved elsewhere
            lines = text.splitlines(keepends=True) or [""]
            line = lines.pop(at % len(lines))
            lines.insert(where % (len(lines) + 1), line)
            text = "".join(lines)
        if previous[1].complete:
            found = block_split._split_after(text, *previous)
            assert (found.starts, found.first_indented, found.complete, found.code_lines) == (
                _fresh_split(text)
            )
        previous = (text, block_split._scan(text))


def test_an_edit_in_a_long_text_is_split_from_the_last_split() -> None:
    """One line typed in the middle of a long text: the blocks before and after it are the
    old ones, shifted, and the split is the one a whole scan finds."""
    functions = [f"def f{i}(x):\n    return (x +\n        {i})\n\n" for i in range(200)]
    old = "".join(functions)
    previous = (old, block_split._scan(old))
    middle = len("".join(functions[:100]))
    new = old[:middle] + "y = [1,\n     2]\n" + old[middle:]
    found = block_split._split_after(new, *previous)
    assert (found.starts, found.first_indented, found.complete, found.code_lines) == (
        _fresh_split(new)
    )
    assert len(found.starts) == 201
    assert found.starts[101] == middle + len("y = [1,\n     2]\n")


def test_splits_are_remembered_for_the_texts_asked_about_again() -> None:
    """The language server asks for the blocks of the text it just parsed (to blank out one
    that does not parse): the split is not scanned again, whoever asks."""
    text = _SOURCES[0] + "\n# remembered\n"
    parser = IncrementalParser()
    parser.parse(_SOURCES[0])
    parser.parse(text)
    assert block_split._split(text) is block_split._split(text, None)
    assert block_split.block_starts(text) == block_split._split(text).starts


# --- trusting libcst's code generation ----------------------------------------------------------
# `generates_itself` lets the parser skip generating a fresh block's code to compare it with the
# text. It must never vouch for a text that libcst does not give back.

_LINES = st.sampled_from(
    [
        "x = 1",
        "def f(a,\tb):",
        "class C:",
        "if x:  # why",
        "else:",
        "for i in y:",
        "return (1,",
        "  2)",
        "pass",
        "s = '''",
        "  # inside'''",
        "# a comment",
        "#",
        "",
        "    ",
        "\t",
        "@decorator",
        "y = f'{x}' ; z = [",
        "]",
        "t = 'ü 🔥'",
    ]
)
_INDENTS = st.sampled_from(["", "", "    ", "\t", "  "])


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(_INDENTS, _LINES), max_size=12), st.booleans())
def test_a_text_trusted_to_round_trip_does(lines: list[tuple[str, str]], final: bool) -> None:
    text = "\n".join(indent + line for indent, line in lines) + ("\n" if final else "")
    try:
        module = cst.parse_module(text)
    except Exception:
        return
    if incremental.generates_itself(text):
        assert module.code == text


@pytest.mark.parametrize(
    "text",
    [
        "import os\n\\\nx = 1\n",  # a line holding only a backslash
        "\fy = 2\n",  # a form feed before code
        "x = 1  # c \\\n",
        "return\n\n  # c\n",  # an indented comment after the last statement
        "def f():\n    pass\n\n    \n",  # an indented blank line after it
        "x\n\n\t",
    ],
)
def test_texts_libcst_may_not_give_back_are_generated_and_compared(text: str) -> None:
    assert not incremental.generates_itself(text)


def test_every_block_of_this_repository_trusted_to_round_trip_does() -> None:
    trusted = 0
    for path in sorted((ROOT / "torchlint").rglob("*.py")) + _project_files():
        text = path.read_text(encoding="utf-8")
        starts = [*block_split.block_starts(text), len(text)]
        for start, end in itertools.pairwise(starts):
            piece = text[start:end]
            if incremental.generates_itself(piece):
                trusted += 1
                assert cst.parse_module(piece).code == piece, (path, start)
    assert trusted > 1000


def test_a_keystroke_in_a_plain_function_generates_no_code() -> None:
    parser = IncrementalParser()
    text = "import torch\n\n\ndef f(x):\n    y = x + 1\n    return y\n\n\nz = f(1)\n"
    parser.parse(text)
    assert parser.stats.generated == 0
    typed = text.replace("    return y", "    w = y\n    return y")
    result = parser.parse(typed)
    assert (parser.stats.parsed, parser.stats.generated) == (1, 0)
    assert isinstance(result, ParsedSource) and result.module.code == typed
    # a new line holding only the indentation, the block's last: generated and compared
    trailing = text.replace("    return y\n", "    return y\n    \n")
    result = parser.parse(trailing)
    assert (parser.stats.parsed, parser.stats.generated) == (1, 1)
    assert isinstance(result, ParsedSource) and result.module.code == trailing
