"""Findings through syntax errors: while someone types, the block they are in often does not
parse (`if batch_idx > `); the rest of the file still does, and its findings should stay.

`mask_broken_blocks` blanks out the top-level block that holds the syntax error (its lines are
kept, emptied, so every other line keeps its number) and parses again, until the rest parses,
at most `MAX_BROKEN_BLOCKS` times. Blocks are the incremental parser's (`block_starts`): whole
top-level statements, with the comment lines before them. An unclosed bracket or string makes
that block run on to the end of the file, so the blanked part stops at the first line after the
error's that starts a new top-level statement (a name, a keyword or a decorator at column 0,
not an `else`-like continuation): a well-formed block has no such line inside it, and whether
the rest then parses is checked, never assumed.

What is left is analysed as the file (`analysis_of`): findings in the other blocks stay where
they are, and every blanked block gets one TL001 at its error, saying which lines wait for it.
Nothing is reported inside a blanked block but that TL001.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass, field

from torchlint.analysis.block_split import block_starts
from torchlint.analysis.source import ParsedSource, ParseFailure, line_starts
from torchlint.diagnostics import Diagnostic, Location
from torchlint.engine import Parser
from torchlint.rules.syntax_error import SyntaxErrorRule
from torchlint.selection import RuleSelection
from torchlint.suppression import Suppressions

MAX_BROKEN_BLOCKS = 8

_NEWLINE = re.compile(r"\r\n|\r|\n")
_LINE_CONTENT = re.compile(r"[^\r\n]+")
# A line of code at column 0 that can begin a statement of its own.
_STATEMENT_START = re.compile(r"[A-Za-z_@]")
_CONTINUATION = re.compile(r"(?:else|elif|except|finally|case)\b")


@dataclass(frozen=True)
class BrokenBlock:
    first_row: int  # 1-based, inclusive: the lines left out
    last_row: int
    failure: ParseFailure  # the syntax error that made it broken


@dataclass
class Masked:
    text: str  # the document with every broken block's lines emptied
    parsed: ParsedSource
    broken: list[BrokenBlock] = field(default_factory=list)

    def parse(self, text: str) -> ParsedSource | ParseFailure:
        """A parser that knows the masked text (the analysis parses it again otherwise)."""
        if text is not self.text and text != self.text:
            raise ValueError("not the masked text")
        return self.parsed


def _statement_after(text: str, starts: list[int], line: int, end: int) -> int | None:
    """The offset of the first line after 0-based `line` (and before offset `end`) that starts
    a top-level statement."""
    for index in range(line + 1, len(starts)):
        offset = starts[index]
        if offset >= end:
            return None
        if _STATEMENT_START.match(text, offset) and not _CONTINUATION.match(text, offset):
            return offset
    return None


def broken_span(text: str, row: int) -> tuple[int, int]:
    """The offsets of the part of `text` to blank out for a syntax error on 1-based `row`."""
    lines = line_starts(text)
    line = min(max(row - 1, 0), len(lines) - 1)
    offset = lines[line]
    blocks = block_starts(text)
    index = bisect_right(blocks, offset) - 1
    start = blocks[max(index, 0)]
    end = blocks[index + 1] if index + 1 < len(blocks) else len(text)
    cut = _statement_after(text, lines, line, end)
    return start, cut if cut is not None else end


def mask_broken_blocks(
    text: str, parse: Parser, failure: ParseFailure | None = None
) -> Masked | None:
    """`text` with the blocks that do not parse blanked out, until the rest parses; None when it
    does not after `MAX_BROKEN_BLOCKS` of them (or parses already). `failure`: what `parse`
    said about `text` already."""
    current = text
    broken: list[BrokenBlock] = []
    for attempt in range(MAX_BROKEN_BLOCKS + 1):
        result = failure if attempt == 0 and failure is not None else parse(current)
        if isinstance(result, ParsedSource):
            return Masked(current, result, broken) if broken else None
        if len(broken) == MAX_BROKEN_BLOCKS:
            return None
        start, end = broken_span(current, result.location.row)
        segment = current[start:end]
        blanked = _LINE_CONTENT.sub("", segment)
        if blanked == segment:
            return None  # nothing left to blank: the error is not in a block of its own
        first = len(_NEWLINE.findall(current, 0, start)) + 1
        ends_line = segment.endswith(("\n", "\r"))
        last = max(first, first + len(blanked) - blanked.count("\r\n") - int(ends_line))
        current = current[:start] + blanked + current[end:]
        broken.append(BrokenBlock(first, last, result))
    return None


def syntax_diagnostics(
    masked: Masked, text: str, filename: str, selection: RuleSelection
) -> list[Diagnostic]:
    """One TL001 per broken block, at its syntax error (unless TL001 is off or suppressed)."""
    if not selection.enabled(SyntaxErrorRule):
        return []
    suppressions = Suppressions(text)
    result = []
    for block in masked.broken:
        where = block.failure.location
        if suppressions.suppressed(SyntaxErrorRule.code, (where.row,)):
            continue
        lines = (
            f"line {block.first_row}"
            if block.first_row == block.last_row
            else f"lines {block.first_row}-{block.last_row}"
        )
        result.append(
            Diagnostic(
                code=SyntaxErrorRule.code,
                name=SyntaxErrorRule.name,
                message=(
                    f"Syntax error: {block.failure.message}; {lines} wait for it to be "
                    "fixed, the rest of the file is checked."
                ),
                severity=SyntaxErrorRule.severity,
                filename=filename,
                location=where,
                end_location=Location(where.row, where.column + 1),
            )
        )
    return result
