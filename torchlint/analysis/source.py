"""Decoding and parsing a file, once, into something every later stage shares."""

from __future__ import annotations

import codecs
import io
import re
import threading
import tokenize
import warnings
from bisect import bisect_right
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import accumulate

import libcst as cst

from torchlint.analysis import node_init
from torchlint.diagnostics import Location

_NEWLINE = re.compile(r"\r\n|\r|\n")


class SourceDecodeError(Exception):
    """The bytes of a file cannot be decoded as Python source."""

    def __init__(self, message: str, row: int = 1) -> None:
        super().__init__(message)
        self.row = row


def decode_source(data: bytes) -> str:
    """Decode bytes the way Python does: BOM, then a PEP 263 coding cookie, then UTF-8."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:  # undecodable first lines, or an unknown / conflicting cookie
        if data.startswith(codecs.BOM_UTF8):  # a BOM with another declared encoding
            raise SourceDecodeError(
                "the file starts with a UTF-8 BOM but declares another encoding"
            ) from None
        if "encoding" in str(exc) and "unknown" not in str(exc):
            encoding = "utf-8"
        elif "unknown" in str(exc) and _is_utf8(data):
            # A codec some package registers at run time (`# coding: future_fstrings`) over
            # bytes that are UTF-8: what the file says reads the same either way.
            encoding = "utf-8"
        else:
            raise SourceDecodeError(str(exc)) from None
    try:
        text = data.decode(encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        if isinstance(exc, UnicodeDecodeError):
            row = data.count(b"\n", 0, exc.start) + 1
            raise SourceDecodeError(
                f"the file is not valid {encoding} (byte 0x{data[exc.start]:02x} on line {row})"
                " and declares no other encoding",
                row,
            ) from None
        raise SourceDecodeError(f"unknown encoding {encoding}") from None
    if text.startswith("\ufeff"):
        text = text[1:]
    return text


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def line_starts(text: str) -> list[int]:
    """The offset at which each line of `text` begins, lines ending at `\\r\\n`, `\\r` or
    `\\n` (the first is 0). Without a `\\r` in the text, from `str.split` (a third of the
    time of a regular expression's matches: this runs on every keystroke in an editor)."""
    if "\r" in text:
        return [0, *(match.end() for match in _NEWLINE.finditer(text))]
    with_newline = map((1).__add__, map(len, text.split("\n")))  # each line's length + 1
    starts = list(accumulate(with_newline, initial=0))
    starts.pop()  # where a line after the last would start
    return starts


@dataclass
class LineIndex:
    """Maps character offsets in a text to 1-based (row, column) locations."""

    text: str
    _starts: list[int] = field(init=False)

    def __post_init__(self) -> None:
        self._starts = line_starts(self.text)

    @property
    def starts(self) -> list[int]:
        """The offset at which each row begins (row 1 at index 0)."""
        return self._starts

    def location(self, offset: int) -> Location:
        row = bisect_right(self._starts, offset) - 1
        return Location(row + 1, offset - self._starts[row] + 1)

    def offset(self, location: Location) -> int:
        row = min(max(location.row, 1), len(self._starts)) - 1
        return self._starts[row] + location.column - 1

    def line(self, row: int) -> str:
        """The text of a 1-based row, without its line ending."""
        if not 1 <= row <= len(self._starts):
            return ""
        start = self._starts[row - 1]
        end = self._starts[row] if row < len(self._starts) else len(self.text)
        return self.text[start:end].rstrip("\r\n")

    @property
    def line_count(self) -> int:
        return len(self._starts)


@dataclass
class ParsedSource:
    text: str
    module: cst.Module
    lines: LineIndex
    # Where the text's top-level blocks start (offsets, the first 0), when the parser split it
    # (`IncrementalParser`, whose scanner `PositionIndex` would otherwise run again); None when
    # not known.
    block_starts: tuple[int, ...] | None = None


@dataclass(frozen=True)
class ParseFailure:
    message: str
    location: Location


def parse_source(text: str) -> ParsedSource | ParseFailure:
    """Parse `text` with libcst; a failure becomes a located message, never an exception."""
    if _too_deeply_nested(text):
        # libcst's native parser overflows its stack (killing the process) somewhere past a
        # thousand nested brackets; CPython refuses more than 200 with a clear message.
        return _python_syntax_error(text) or ParseFailure(
            "too many nested parentheses", Location(1, 1)
        )
    try:
        module = parse_module(text)
    except cst.ParserSyntaxError as exc:
        fallback = ParseFailure(
            _first_line(exc.message) or "invalid syntax",
            Location(max(exc.raw_line, 1), exc.raw_column + 1),
        )
        return _python_syntax_error(text) or fallback
    except RecursionError:
        return ParseFailure("the file is nested too deeply to parse", Location(1, 1))
    except Exception as exc:  # libcst's native parser can raise other errors on odd input
        return _python_syntax_error(text) or ParseFailure(f"cannot parse: {exc}", Location(1, 1))
    return ParsedSource(text, module, LineIndex(text))


def parse_module(text: str) -> cst.Module:
    """`libcst.parse_module`, without libcst's checks of every node it builds.

    Each libcst node checks its fields when it is constructed (`CSTNode.__post_init__` calls
    `_validate`: balanced parentheses, required whitespace, ...). That guards trees built by
    hand; a tree the native parser built from text is valid by construction, and the checks
    cost about a fifth of a parse. So they are switched off while the parser builds, and back
    on for everything else (the nodes a fix builds are still checked). Once the process has
    parsed enough, the nodes are built with a faster `__init__` (`node_init`). Raises what
    `libcst.parse_module` raises."""
    node_init.parsing(text)
    with _unchecked_nodes():
        return cst.parse_module(text)


_CHECK_NODE = cst.CSTNode.__post_init__
_unchecked_lock = threading.Lock()
_unchecked_parses = 0  # parses under way, in any thread


def _skip_node_check(self: cst.CSTNode) -> None:
    pass


@contextmanager
def _unchecked_nodes() -> Iterator[None]:
    """Node checks off while at least one thread parses (the language server lints on a
    pool); always restored to libcst's own method, even when a parse raises."""
    global _unchecked_parses
    with _unchecked_lock:
        _unchecked_parses += 1
        cst.CSTNode.__post_init__ = _skip_node_check  # type: ignore[method-assign]
        node_init.set_checks(False)
    try:
        yield
    finally:
        with _unchecked_lock:
            _unchecked_parses -= 1
            if _unchecked_parses == 0:
                cst.CSTNode.__post_init__ = _CHECK_NODE  # type: ignore[method-assign]
                node_init.set_checks(True)


_MAX_BRACKET_DEPTH = 200
_LINE_NUMBER = re.compile(r"\bline (\d+)\b")  # in CPython's messages
_BRACKETS = re.compile(r"[\[\](){}]")


def _too_deeply_nested(text: str) -> bool:
    """Whether brackets nest deeper than CPython accepts (cheap: most files have too few)."""
    opening = text.count("(") + text.count("[") + text.count("{")
    if opening <= _MAX_BRACKET_DEPTH:
        return False
    depth = 0
    for bracket in _BRACKETS.findall(text):
        if bracket in "([{":
            depth += 1
            if depth > _MAX_BRACKET_DEPTH:
                return True
        else:
            depth = max(depth - 1, 0)
    return False


def _first_line(message: str) -> str:
    lines = message.strip().splitlines()
    return lines[0] if lines else ""


def _python_syntax_error(text: str, start: int = 0) -> ParseFailure | None:
    """CPython's own parser words syntax errors best and places them exactly; we ask it only
    after libcst has failed, so the cost is paid on broken files alone.

    `start`: the offset of a line where a top-level statement begins, every statement before
    which is known to be valid; only the text from there on is compiled (CPython parses up to
    its error, so an error near the end of a long file costs the whole file otherwise), and the
    error is placed in the whole text."""
    if start and "\0" in text:
        start = 0  # CPython rejects the whole text for a NUL byte anywhere
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # `1()` and the like: the user's business, not ours
            compile(text[start:], "<torchlint>", "exec", dont_inherit=True, flags=0x400)
    except SyntaxError as exc:
        if start and exc.lineno is None:
            return _python_syntax_error(text)
        shift = text.count("\n", 0, start) if start else 0
        row = (exc.lineno or 1) + shift
        column = exc.offset or 1
        message = exc.msg
        if shift:  # "(detected at line 3)", "... on line 2": lines of the whole text
            message = _LINE_NUMBER.sub(lambda found: f"line {int(found[1]) + shift}", message)
        return ParseFailure(message, Location(max(row, 1), max(column, 1)))
    except (ValueError, RecursionError, MemoryError) as exc:  # NUL bytes, deep nesting
        if start:
            return _python_syntax_error(text)
        return ParseFailure(str(exc) or type(exc).__name__, Location(1, 1))
    return None
