"""Source ranges for the few nodes we report, computed lazily and cheaply.

libcst nodes carry no positions; its PositionProvider copies the tree and tracks line and column
on every token of the file (about three parses' worth of work). We do much less:

1. The collector remembers, for each expression it walks, its *anchor*: the small statement
   (`loss.backward()`) or compound-statement header expression (a `for` iterable, an `if` test,
   a `with` item, a decorator) that contains it, and the block indentation there.
2. Only when a position is asked for, CPython's `ast` (a fraction of libcst's parse cost) gives
   the exact start of every statement and header; we align the two trees statement by statement.
   `ast` parses only the top-level block asked about (the language server's scanner finds where
   the blocks start), and the whole module when the scan and libcst disagree on the blocks.
3. We generate code for the anchor alone, counting characters, and check that the generated text
   is really at that place in the source before trusting it. A compound statement (a loop, a
   function whose text a rule reads) is an anchor too: `ast` gives its keyword's row, and the
   block's indentation its column.

Any doubt (an alignment mismatch, a syntax `ast` cannot parse) falls back to one counting pass of
code generation over the whole module, which is always correct.
"""

from __future__ import annotations

import ast
import warnings
from bisect import bisect_right
from collections.abc import Sequence
from contextlib import suppress
from dataclasses import dataclass
from functools import lru_cache

import libcst as cst
from libcst._nodes.internal import CodegenState

from torchlint.analysis.block_split import complete_block_starts
from torchlint.analysis.record import record
from torchlint.analysis.source import ParsedSource
from torchlint.diagnostics import Location


@dataclass(frozen=True)
class Span:
    start: Location
    end: Location


@record(slots=True)
class Anchor:
    node: cst.CSTNode
    indents: tuple[str, ...]
    top: int = -1  # the index in the module's body of the top-level statement containing it


class _OffsetCodegenState(CodegenState):
    """Code generation that remembers the character offsets of every node's syntactic range."""

    def __init__(self, module: cst.Module, indents: Sequence[str] = ()) -> None:
        super().__init__(
            default_indent=module.default_indent, default_newline=module.default_newline
        )
        self.indent_tokens = list(indents)
        self.offset = 0
        self.ranges: dict[int, tuple[int, int]] = {}
        self._open: list[int] = []

    def add_indent_tokens(self) -> None:
        for token in self.indent_tokens:
            self.offset += len(token)
        self.tokens.extend(self.indent_tokens)

    def add_token(self, value: str) -> None:
        self.offset += len(value)
        self.tokens.append(value)

    def before_codegen(self, node: cst.CSTNode) -> None:
        self._open.append(self.offset)

    def after_codegen(self, node: cst.CSTNode) -> None:
        start = self._open.pop()
        self.ranges.setdefault(id(node), (start, self.offset))

    def record_syntactic_position(  # type: ignore[override]
        self,
        node: cst.CSTNode,
        *,
        start_node: cst.CSTNode | None = None,
        end_node: cst.CSTNode | None = None,
    ) -> _Recording:
        return _Recording(self, node, start_node, end_node)


class _Recording:
    """`with state.record_syntactic_position(node):` as a plain object: libcst opens one for
    most nodes it generates, and a generator-based context manager costs several times more."""

    __slots__ = ("end_node", "node", "start", "start_node", "state")

    def __init__(
        self,
        state: _OffsetCodegenState,
        node: cst.CSTNode,
        start_node: cst.CSTNode | None,
        end_node: cst.CSTNode | None,
    ) -> None:
        self.state, self.node, self.start_node, self.end_node = state, node, start_node, end_node
        self.start = state.offset

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        state = self.state
        start, end = self.start, state.offset
        ranges = state.ranges
        if self.start_node is not None and id(self.start_node) in ranges:
            start = ranges[id(self.start_node)][0]
        if self.end_node is not None and id(self.end_node) in ranges:
            end = ranges[id(self.end_node)][1]
        ranges[id(self.node)] = (start, end)


class PositionIndex:
    """Answers `span(node)` for nodes of a parsed module."""

    def __init__(self, parsed: ParsedSource, anchors: dict[int, Anchor] | None = None) -> None:
        self._parsed = parsed
        self._module = parsed.module  # keeps node ids stable while we hold them
        self._anchors = anchors or {}
        self._ranges: dict[int, tuple[int, int]] = {}
        self._done: set[int] = set()
        self._aligner: _Aligner | None = None  # `ast` positions, aligned on demand
        self._whole_module = False
        self.full_passes = 0  # for tests and benchmarks: how often we fell back

    def offsets(self, node: cst.CSTNode) -> tuple[int, int]:
        key = id(node)
        if key not in self._ranges:
            anchor = self._anchors.get(key)
            if anchor is None or not self._generate_anchor(anchor):
                self._generate_module()
        return self._ranges[key]

    def span(self, node: cst.CSTNode) -> Span:
        start, end = self.offsets(node)
        lines = self._parsed.lines
        return Span(lines.location(start), lines.location(end))

    def text(self, node: cst.CSTNode) -> str:
        start, end = self.offsets(node)
        return self._parsed.text[start:end]

    def row(self, node: cst.CSTNode) -> int:
        """The row a node starts on; for compound statements (`for`, `def`, ...) the row of
        their keyword, read from `ast` without generating any code."""
        anchor = self._anchors.get(id(node))
        if anchor is not None:
            aligner = self._align(anchor.top)
            known = aligner.rows.get(id(node)) if aligner is not None else None
            if known is not None:
                return known
        return self.span(node).start.row

    def _align(self, top: int) -> _Aligner | None:
        if self._aligner is None:
            self._aligner = _Aligner(self._parsed)
        return self._aligner if self._aligner.align(top) else None

    # --- the two ways of generating ranges -----------------------------------------------

    def _generate_module(self) -> None:
        if self._whole_module:
            return
        state = _OffsetCodegenState(self._module)
        self._module._codegen(state)
        self._ranges.update(state.ranges)
        self._whole_module = True
        self.full_passes += 1

    def _generate_anchor(self, anchor: Anchor) -> bool:
        key = id(anchor.node)
        if key in self._done:
            return False  # generated already, yet the node was not inside: fall back
        self._done.add(key)
        aligner = self._align(anchor.top)
        if aligner is None:
            return False
        known = aligner.starts.get(key)
        row = aligner.rows.get(key) if known is None else None
        if known is None and row is None:
            return False
        state = _OffsetCodegenState(self._module, anchor.indents)
        anchor.node._codegen(state)
        code = "".join(state.tokens)
        text = self._parsed.text
        if known is not None:
            start = known
            if not text.startswith(code, start):
                # `ast` places some nodes inside their parentheses, or after leading whitespace.
                start = text.find(code, max(0, start - 64), start + len(code) + 64)
                if start < 0:
                    return False
        else:
            # A compound statement: `ast` gives the row of its keyword, which stands at the
            # block's indentation; the code generated for it starts earlier, with the comment
            # lines and decorators above that keyword.
            keyword = self._parsed.lines.starts[(row or 1) - 1] + sum(map(len, anchor.indents))
            start = keyword - state.ranges[key][0]
            if start < 0 or not text.startswith(code, start):
                return False
        for node_id, (begin, end) in state.ranges.items():
            self._ranges.setdefault(node_id, (begin + start, end + start))
        return True


# Top-level blocks whose `ast` statements are remembered (a few hundred: one long file's).
BLOCK_CACHE_SIZE = 512

# --- aligning libcst with ast ---------------------------------------------------------------


class _Mismatch(Exception):
    pass


class _Aligner:
    """Pairs libcst statements with CPython `ast` statements, one top-level statement at a
    time, and reads off where each small statement, header expression and compound statement
    starts."""

    def __init__(self, parsed: ParsedSource) -> None:
        self.parsed = parsed
        self.starts: dict[int, int] = {}
        self.rows: dict[int, int] = {}
        self._tree: list[ast.stmt] | None = None  # the whole module's, when blocks did not do
        self._first_ast: list[int] = []  # ast index of each libcst top-level statement
        self._blocks: list[int] | None = None  # where each top-level statement's text starts
        self._aligned: dict[int, bool] = {}  # top-level index -> whether `ast` could help
        self._row_base = 0  # rows before the text `ast` parsed
        self._ascii = parsed.text.isascii()
        self._line_starts = parsed.lines.starts

    def align(self, top: int) -> bool:
        """Align the `top`-th statement of the module; False when `ast` cannot help."""
        body = self.parsed.module.body
        if not 0 <= top < len(body):
            return False
        if top not in self._aligned:
            stmt = body[top]
            count = len(stmt.body) if isinstance(stmt, cst.SimpleStatementLine) else 1
            nodes = self._block_statements(top, count)
            if nodes is None:
                nodes = self._module_statements(top, count)
            self._aligned[top] = nodes is not None
            if nodes is not None:
                with suppress(_Mismatch):  # keep what aligned before a mismatch
                    self.body([stmt], nodes)
            self._row_base = 0
        return self._aligned[top]

    def _block_statements(self, top: int, count: int) -> list[ast.stmt] | None:
        """The `ast` statements of the `top`-th top-level statement, from its text alone; None
        when the scanner's blocks are not libcst's statements, or that text gives no `count`
        statements. Sets the row base for `at`."""
        if self._blocks is None:
            known = self.parsed.block_starts  # the incremental parser's split, when it made one
            starts = list(known) if known is not None else complete_block_starts(self.parsed.text)
            self._blocks = starts if starts is not None else []
            if len(self._blocks) != len(self.parsed.module.body):
                self._blocks = []  # the scanner and libcst disagree: ask `ast` for the module
        if not self._blocks:
            return None
        start = self._blocks[top]
        end = self._blocks[top + 1] if top + 1 < len(self._blocks) else len(self.parsed.text)
        block = self.parsed.text[start:end]
        # An edited document's blocks come back keystroke after keystroke: their trees are
        # remembered. A file read once (the CLI) has nothing to gain from that, and the trees
        # kept would only lengthen the cyclic collector's passes over what lives on.
        incremental = self.parsed.block_starts is not None
        nodes = _remembered_block(block) if incremental else _block(block)
        if nodes is None or len(nodes) != count:
            return None
        self._row_base = bisect_right(self._line_starts, start) - 1
        if self._line_starts[self._row_base] != start:
            return None  # a block starts at the start of a line
        return list(nodes)

    def _module_statements(self, top: int, count: int) -> list[ast.stmt] | None:
        """The `ast` statements of the `top`-th top-level statement, from the whole module."""
        if self._tree is None:
            self._tree = _parse(self.parsed.text) or []
            index = 0
            for stmt in self.parsed.module.body:
                self._first_ast.append(index)
                index += len(stmt.body) if isinstance(stmt, cst.SimpleStatementLine) else 1
            if index != len(self._tree):
                self._tree = []  # the two parsers disagree: trust neither
        if not self._tree:
            return None
        first = self._first_ast[top]
        return self._tree[first : first + count]

    def at(self, node: cst.CSTNode, a: ast.AST) -> None:
        row = getattr(a, "lineno", None)
        col = getattr(a, "col_offset", None)
        if row is None or col is None:
            return
        row += self._row_base
        if row > len(self._line_starts):
            return
        if not self._ascii:  # ast counts UTF-8 bytes
            line = self.parsed.lines.line(row)
            if not line.isascii():
                col = len(line.encode("utf-8")[:col].decode("utf-8", errors="ignore"))
        self.starts[id(node)] = self._line_starts[row - 1] + col

    def body(self, statements: Sequence[cst.CSTNode], nodes: list[ast.stmt]) -> None:
        flat: list[cst.CSTNode] = []
        for stmt in statements:
            if isinstance(stmt, cst.SimpleStatementLine):
                flat.extend(stmt.body)
            else:
                flat.append(stmt)
        if len(flat) != len(nodes):
            raise _Mismatch
        for node, a in zip(flat, nodes, strict=True):
            self.statement(node, a)

    def suite(self, suite: cst.BaseSuite, nodes: list[ast.stmt]) -> None:
        if isinstance(suite, (cst.IndentedBlock, cst.SimpleStatementSuite)):
            self.body(suite.body, nodes)

    def statement(self, node: cst.CSTNode, a: ast.AST) -> None:
        if not isinstance(node, cst.BaseSmallStatement):
            self.rows[id(node)] = getattr(a, "lineno", 0) + self._row_base
        if isinstance(node, cst.BaseSmallStatement):
            self.at(node, a)
        elif isinstance(node, cst.If) and isinstance(a, ast.If):
            self.at(node.test, a.test)
            self.suite(node.body, a.body)
            if isinstance(node.orelse, cst.If):
                if len(a.orelse) != 1:
                    raise _Mismatch
                self.statement(node.orelse, a.orelse[0])
            elif node.orelse is not None:
                self.suite(node.orelse.body, a.orelse)
        elif isinstance(node, cst.For) and isinstance(a, ast.For | ast.AsyncFor):
            self.at(node.iter, a.iter)
            self.at(node.target, a.target)
            self.suite(node.body, a.body)
            if node.orelse is not None:
                self.suite(node.orelse.body, a.orelse)
        elif isinstance(node, cst.While) and isinstance(a, ast.While):
            self.at(node.test, a.test)
            self.suite(node.body, a.body)
            if node.orelse is not None:
                self.suite(node.orelse.body, a.orelse)
        elif isinstance(node, cst.With) and isinstance(a, ast.With | ast.AsyncWith):
            if len(node.items) != len(a.items):
                raise _Mismatch
            for item, a_item in zip(node.items, a.items, strict=True):
                self.at(item.item, a_item.context_expr)
            self.suite(node.body, a.body)
        elif isinstance(node, cst.FunctionDef | cst.ClassDef) and isinstance(
            a, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
        ):
            if isinstance(node, cst.ClassDef) != isinstance(a, ast.ClassDef):
                raise _Mismatch
            self.decorators(node.decorators, a.decorator_list)
            self.suite(node.body, a.body)
        elif isinstance(node, cst.Try | cst.TryStar) and isinstance(a, ast.Try | ast.TryStar):
            self.suite(node.body, a.body)
            if len(node.handlers) != len(a.handlers):
                raise _Mismatch
            handlers: Sequence[cst.ExceptHandler | cst.ExceptStarHandler] = node.handlers
            for handler, a_handler in zip(handlers, a.handlers, strict=True):
                self.suite(handler.body, a_handler.body)
            if node.orelse is not None:
                self.suite(node.orelse.body, a.orelse)
            if node.finalbody is not None:
                self.suite(node.finalbody.body, a.finalbody)
        elif isinstance(node, cst.Match) and isinstance(a, ast.Match):
            self.at(node.subject, a.subject)
            if len(node.cases) != len(a.cases):
                raise _Mismatch
            for case, a_case in zip(node.cases, a.cases, strict=True):
                self.suite(case.body, a_case.body)
        else:
            raise _Mismatch

    def decorators(self, decorators: Sequence[cst.Decorator], nodes: list[ast.expr]) -> None:
        if len(decorators) != len(nodes):
            raise _Mismatch
        for decorator, a in zip(decorators, nodes, strict=True):
            self.at(decorator.decorator, a)


def _block(text: str) -> tuple[ast.stmt, ...] | None:
    """`_parse` of one top-level block."""
    nodes = _parse(text)
    return tuple(nodes) if nodes is not None else None


# `_block`, remembered: while someone types, every block but one is the text it was a keystroke
# ago (the trees are only read, never changed).
_remembered_block = lru_cache(maxsize=BLOCK_CACHE_SIZE)(_block)


def _parse(text: str) -> list[ast.stmt] | None:
    """CPython's statements for `text`; None when it cannot parse it."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarnings about the user's code
            return ast.parse(text).body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
