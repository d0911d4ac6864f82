"""Parsing a document again after an edit, re-parsing only the top-level blocks it touched.

The language server analyses a document on every keystroke, and a whole-file libcst parse is
most of that work. `IncrementalParser.parse` returns exactly what `parse_source` returns, but
builds the module out of one libcst parse per top-level *block*, cached by the block's text:

1. **Split.** A line scanner that knows brackets, strings (any prefix, triple or single quotes,
   backslash continuations) and comments finds the lines that begin a new top-level statement:
   no leading whitespace, not inside brackets or a string, not after a backslash, not an
   `else` / `elif` / `except` / `finally` / `case` continuing a compound statement, not the
   `def` / `class` after a decorator. The blank and comment lines before such a line go with
   it, except those up to the last one indented like the body of the statement above: libcst
   gives those to that body (`IndentedBlock.footer`), so they stay with the block above.
   After an edit only the lines around it are scanned: from the last block whose first line
   of code is before the edit, to the first block after it that the last text had too (the
   scanner carries nothing across a line that starts a block, so the rest is the last split,
   shifted by the edit). The splitting is `block_split.py`.
2. **Parse.** Each block is parsed on its own with `source.parse_module` (libcst's, without
   its node checks), unless the cache holds a module for the same text (the current blocks and
   a few recent ones). Two blocks with the same text get two modules: a node never appears
   twice in one tree (the analysis keys its tables by node identity).
3. **Combine.** One `libcst.Module` holds every block's statements; each block's header (and
   whatever lines libcst left in the footer of the block before) goes into its first
   statement's `leading_lines`, where a whole-file parse puts them; the first block's header
   and the last block's footer are the module's. The module takes the whole text's default
   indentation (its first indented line's) and newline (its first newline); a block whose own
   defaults differ (a function indented with tabs in a file indented with spaces) has its
   `IndentedBlock.indent` and `Newline.value` fields rewritten to what a whole-file parse
   would have. Every block is checked, when it is parsed (or when the document's defaults
   change), to generate exactly its own text under the document's defaults (generating its code
   and comparing, unless libcst's tree is its own and `generates_itself` vouches for the text);
   code generation of the module is the concatenation of its blocks', so the module's `code` is
   the text, without generating all of it again on every keystroke.

Why a wrong split cannot go unnoticed: a block that libcst parses on its own ends outside any
string, bracket or continuation, so the whole text's tokens at the next block's first line are
those of that block alone; and a line starting with `else` and the like is never split off. So
when every block parses, the whole text parses to the same statements; and when a block does
not, although every block before it did, the whole text parses if and only if the text from
that block on does. That decides a syntax error cheaply (libcst fails at the first error, but
only after parsing everything before it); the `ParseFailure` is then CPython's, as in
`parse_source`. Whenever the answer is not certain that way (the text from the failing block
on parses after all, or libcst fails in a way `parse_source` words differently), the whole text
goes through `parse_source`.

It does as well when brackets nest deeper than `parse_source` allows, when the text uses lone
carriage returns as newlines, when a string the scanner saw open to the end of the text parses
after all (a PEP 701 f-string across lines), and when a block does not generate its own text
(libcst does not round-trip a few odd texts on their own, such as a line holding only a
backslash). `stats` tells what the last call did.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

import libcst as cst

from torchlint.analysis.block_split import _Split, _split
from torchlint.analysis.source import (
    LineIndex,
    ParsedSource,
    ParseFailure,
    _python_syntax_error,
    _too_deeply_nested,
    parse_module,
    parse_source,
)

# Blocks no longer in the document that each parser keeps (an undo brings them back).
DEFAULT_RECENT_BLOCKS = 16

_NEWLINE = re.compile(r"\r\n?|\n")  # what libcst takes for the first newline
_FALLBACK_INDENT = "    "  # libcst's default indentation when nothing is indented
# Characters libcst's tokenizer may read past without keeping them in the tree.
_LOSSY_CHARACTERS = re.compile(r"[\\\f\v\r\x00]")


@dataclass(frozen=True)
class ParseStats:
    """What the last `IncrementalParser.parse` call did."""

    blocks: int = 0  # top-level blocks the text was split into (0 when not split)
    parsed: int = 0  # blocks parsed by libcst in the call
    reused: int = 0  # blocks whose module came from the cache
    fallback: str | None = None  # why the whole text went through `parse_source`, if it did
    generated: int = 0  # blocks whose code was generated to check it (see `generates_itself`)


@dataclass
class _Block:
    raw: cst.Module  # the block's text parsed on its own
    # `raw`, or a copy with the document's defaults, checked to generate the block's text
    # under the defaults in `defaults`
    module: cst.Module | None = None
    defaults: tuple[str, str] | None = None


class IncrementalParser:
    """Parses successive versions of one document. Not thread-safe: one per document."""

    def __init__(self, recent: int = DEFAULT_RECENT_BLOCKS) -> None:
        self._recent = recent
        # block text -> a module per occurrence of that text in the document (usually one);
        # in order of last use, current blocks last
        self._cache: dict[str, list[_Block]] = {}
        self._failed: str | None = None  # the text of the last block libcst could not parse
        self._previous: tuple[str, _Split] | None = None  # the last text split, and its split
        self.stats = ParseStats()

    def parse(self, text: str) -> ParsedSource | ParseFailure:
        """What `parse_source(text)` returns, re-using the blocks parsed for earlier texts."""
        if _too_deeply_nested(text):
            return self._fall_back(text, "nesting")
        if "\r" in text and text.count("\r") != text.count("\r\n"):
            return self._fall_back(text, "carriage return")
        split = _split(text, self._previous)
        self._previous = (text, split)
        bounds = [*split.starts, len(text)]
        pieces = [text[bounds[i] : bounds[i + 1]] for i in range(len(split.starts))]
        # What the cache holds first, so that a block failing to parse makes us forget none of
        # the others; the k-th block with a given text gets the k-th module cached for it.
        current: dict[str, list[_Block]] = {}
        found: list[_Block | None] = []
        for piece in pieces:
            known = self._cache.get(piece, ())
            occurrences = current.setdefault(piece, [])
            if len(occurrences) < len(known):
                occurrences.append(known[len(occurrences)])
                found.append(occurrences[-1])
            else:
                found.append(None)
        blocks: list[_Block] = []
        parsed = 0
        for index, (piece, block) in enumerate(zip(pieces, found, strict=True)):
            if block is None:
                if piece != self._failed:
                    parsed += 1
                    try:
                        block = _Block(parse_module(piece))
                    except Exception:  # ParserSyntaxError, RecursionError, native errors
                        self._failed = piece
                if block is None:
                    self._remember(current)
                    self.stats = ParseStats(len(pieces), parsed, 0, "syntax error")
                    return _syntax_error(text, split.starts[index])
                current[piece].append(block)
            blocks.append(block)
        self._remember(current)
        if not split.complete:  # a string the scanner saw open to the end parsed after all
            return self._fall_back(text, "unterminated string", len(pieces), parsed)

        defaults = (_default_indent(split, blocks), _default_newline(text))
        generated = 0
        for piece, block in zip(pieces, blocks, strict=True):
            if block.defaults == defaults:
                continue
            checked = _adapt(block, piece, defaults)
            if checked is None:
                return self._fall_back(text, "code generation", len(pieces), parsed)
            generated += checked
        module = _combine([block.module for block in blocks if block.module is not None])
        if module is None:
            return self._fall_back(text, "empty block", len(pieces), parsed)
        self.stats = ParseStats(len(blocks), parsed, len(blocks) - parsed, generated=generated)
        return ParsedSource(text, module, LineIndex(text), tuple(split.starts))

    def _fall_back(
        self, text: str, reason: str, blocks: int = 0, parsed: int = 0
    ) -> ParsedSource | ParseFailure:
        self.stats = ParseStats(blocks, parsed, 0, reason)
        return parse_source(text)

    def _remember(self, current: dict[str, list[_Block]]) -> None:
        """Keep the current blocks, and the most recently used of the others."""
        stale = [key for key in self._cache if key not in current]
        kept = stale[len(stale) - self._recent :] if self._recent > 0 else []
        cache = {key: self._cache[key] for key in kept}
        cache.update(current)
        self._cache = cache


def _syntax_error(text: str, start: int) -> ParsedSource | ParseFailure:
    """What `parse_source(text)` returns when the block at `start` did not parse on its own,
    but every block before it did.

    Those blocks end where the whole text's tokens are back at the start of a statement, and
    the failed block starts with no `else` or the like; so the whole text parses if and only if
    the text from `start` on does. That is cheaper to find out: libcst fails at the first error,
    but only after parsing everything before it. When it does fail, `parse_source` would return
    CPython's message; when it does not (the split was wrong), the whole text is parsed."""
    try:
        parse_module(text[start:])
    except RecursionError:  # `parse_source` has a message of its own for this one
        pass
    except Exception:
        failure = _python_syntax_error(text, start)
        if failure is not None:
            return failure
    return parse_source(text)


# --- combining --------------------------------------------------------------------------------


def _default_indent(split: _Split, blocks: Sequence[_Block]) -> str:
    """libcst's default indentation for the whole text: its first INDENT token, found in the
    block that holds the first indented line of code."""
    if split.first_indented < 0:
        return _FALLBACK_INDENT
    index = bisect_right(split.starts, split.first_indented) - 1
    return blocks[index].raw.default_indent


def _default_newline(text: str) -> str:
    found = _NEWLINE.search(text)
    return found.group(0) if found is not None else "\n"


def _adapt(block: _Block, piece: str, defaults: tuple[str, str]) -> bool | None:
    """Give the block's module the document's defaults; None when it would not generate the
    block's text under them, else whether its code was generated to check that (a module left
    as libcst parsed it is trusted where `generates_itself` says so)."""
    indent, newline = defaults
    raw = block.raw
    module = raw
    if raw.default_indent != indent or (raw.default_newline != newline and "\n" in piece):
        module = raw.visit(_Rebase(raw.default_indent, indent, raw.default_newline, newline))
    if not isinstance(module, cst.Module):
        return None
    if (module.default_indent, module.default_newline) != defaults:
        module = module.with_changes(default_indent=indent, default_newline=newline)
    generate = module is not raw or not generates_itself(piece)
    if generate and module.code != piece:
        return None
    block.module = module
    block.defaults = defaults
    return generate


def generates_itself(piece: str) -> bool:
    """Whether libcst's tree of `piece`, parsed alone, is known to generate `piece` again, so
    that `_adapt` need not generate it to check (code generation of a block costs about a
    third of its parse, on every keystroke).

    libcst (1.9) loses characters of a module in two places that we know of, by generating
    texts and trying real files: whitespace its tokenizer reads past (a line holding only a
    backslash, a form feed before code; we also count `\\v`, `\\r` and NUL bytes in) and the
    lines after the module's last statement, where it drops blank lines before an indented
    comment or whitespace-only line, and sometimes the indented comment itself
    (`"return\\n\\n  # c\\n"` comes back without its blank line). A block is parsed as a
    module of its own, so its trailing lines are such lines. A block with none of those
    characters, whose lines after its last line of code all start at column 0, is taken to
    round-trip; any other is generated and compared. `tests/test_incremental.py` holds libcst to
    this on generated texts and on every block of this repository's files, so a libcst that
    loses more fails there, not in an editor."""
    if _LOSSY_CHARACTERS.search(piece) is not None:
        return False
    end = len(piece) - piece.endswith("\n")
    while True:  # the lines from the last one up
        start = piece.rfind("\n", 0, end) + 1
        line = piece[start:end]
        content = line.lstrip(" \t")
        if content and not content.startswith("#"):
            return True  # the last line of code: every line after it starts at column 0
        if len(content) != len(line):
            return False  # an indented comment or whitespace-only line after it
        if start == 0:
            return True
        end = start - 1


class _Rebase(cst.CSTTransformer):
    """Rewrites the indentation and newline fields that mean "the module's default" (None) for
    other defaults: what a block parsed alone left to its own defaults, made explicit, and what
    it spelled out that the document's defaults already say, made None."""

    def __init__(self, old_indent: str, indent: str, old_newline: str, newline: str) -> None:
        super().__init__()
        self._old_indent = old_indent
        self._indent = indent
        self._old_newline = old_newline
        self._newline = newline

    def leave_IndentedBlock(
        self, original_node: cst.IndentedBlock, updated_node: cst.IndentedBlock
    ) -> cst.IndentedBlock:
        actual = self._old_indent if updated_node.indent is None else updated_node.indent
        wanted = None if actual == self._indent else actual
        if wanted == updated_node.indent:
            return updated_node
        return updated_node.with_changes(indent=wanted)

    def leave_Newline(self, original_node: cst.Newline, updated_node: cst.Newline) -> cst.Newline:
        actual = self._old_newline if updated_node.value is None else updated_node.value
        wanted = None if actual == self._newline else actual
        if wanted == updated_node.value:
            return updated_node
        return updated_node.with_changes(value=wanted)


def _combine(modules: Sequence[cst.Module]) -> cst.Module | None:
    """One module with every block's statements; None when a block other than the last has no
    statement (its lines would need a home the whole-file parse may not give them)."""
    if len(modules) == 1:
        return modules[0]
    first = modules[0]
    body: list[cst.SimpleStatementLine | cst.BaseCompoundStatement] = []
    pending: Sequence[cst.EmptyLine] = ()  # lines after the last statement so far
    for index, module in enumerate(modules):
        statements = module.body
        if not statements:
            return None
        lines = [*pending, *module.header] if index else []
        if lines:
            head = statements[0]
            body.append(head.with_changes(leading_lines=[*lines, *head.leading_lines]))
            body.extend(statements[1:])
        else:
            body.extend(statements)
        pending = module.footer
    return cst.Module(
        body=body,
        header=first.header,
        footer=pending,
        encoding=first.encoding,
        default_indent=first.default_indent,
        default_newline=first.default_newline,
        has_trailing_newline=modules[-1].has_trailing_newline,
    )
