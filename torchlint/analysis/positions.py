"""Source ranges for the few nodes we report, computed lazily in one cheap code-generation pass.

libcst's PositionProvider tracks line and column on every token and copies the tree first;
we only count characters (an integer add per token) and convert the handful of offsets we need
to rows and columns at the end, through the file's line index. Files without findings never pay.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import libcst as cst
from libcst._nodes.internal import CodegenState

from torchlint.analysis.source import ParsedSource
from torchlint.diagnostics import Location


@dataclass(frozen=True)
class Span:
    start: Location
    end: Location


class _OffsetCodegenState(CodegenState):
    """Code generation that remembers the character offsets of every node's syntactic range."""

    def __init__(self, module: cst.Module) -> None:
        super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
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

    @contextmanager
    def record_syntactic_position(
        self,
        node: cst.CSTNode,
        *,
        start_node: cst.CSTNode | None = None,
        end_node: cst.CSTNode | None = None,
    ) -> Iterator[None]:
        start = self.offset
        try:
            yield
        finally:
            end = self.offset
            if start_node is not None and id(start_node) in self.ranges:
                start = self.ranges[id(start_node)][0]
            if end_node is not None and id(end_node) in self.ranges:
                end = self.ranges[id(end_node)][1]
            self.ranges[id(node)] = (start, end)


class PositionIndex:
    """Answers `span(node)` for any node of a parsed module; the pass runs on the first question."""

    def __init__(self, parsed: ParsedSource) -> None:
        self._parsed = parsed
        self._ranges: dict[int, tuple[int, int]] | None = None
        # Keep the nodes alive so that their ids stay unique while we hold the ranges.
        self._module = parsed.module

    def _ensure(self) -> dict[int, tuple[int, int]]:
        if self._ranges is None:
            state = _OffsetCodegenState(self._module)
            self._module._codegen(state)
            self._ranges = state.ranges
        return self._ranges

    def offsets(self, node: cst.CSTNode) -> tuple[int, int]:
        return self._ensure()[id(node)]

    def span(self, node: cst.CSTNode) -> Span:
        start, end = self.offsets(node)
        lines = self._parsed.lines
        return Span(lines.location(start), lines.location(end))

    def text(self, node: cst.CSTNode) -> str:
        start, end = self.offsets(node)
        return self._parsed.text[start:end]
