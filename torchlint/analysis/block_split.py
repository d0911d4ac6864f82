"""Where the top-level blocks of a text start: the line scanner, and its rescan after an edit."""

from __future__ import annotations

import re
import threading
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass, field

_QUOTES_COMMENT_BACKSLASH = re.compile(r"[\"'#\\]")
_NON_BLANK = re.compile(r"[^ \t\f]")
# Top-level lines that continue the statement before (or are odd enough to keep with it).
_CONTINUATION_KEYWORD = re.compile(r"(?:else|elif|except|finally|case)\b|\\")
# The rest of a string after its opening quotes: a backslash escapes any character (also in raw
# strings, as far as finding the end goes); one-quote strings end at a newline not escaped.
_STRING_REST = {
    '"""': re.compile(r'(?:[^"\\]|\\[\s\S]|"(?!""))*"""'),
    "'''": re.compile(r"(?:[^'\\]|\\[\s\S]|'(?!''))*'''"),
    '"': re.compile(r'(?:[^"\\\r\n]|\\(?:\r\n|[\s\S]))*"'),
    "'": re.compile(r"(?:[^'\\\r\n]|\\(?:\r\n|[\s\S]))*'"),
}


@dataclass(frozen=True)
class _Split:
    starts: list[int]  # offset of each block's first character; the first is 0 (read only:
    # a split is remembered for the next caller with the same text)
    first_indented: int  # offset of the first indented line of code, -1 when there is none
    complete: bool = True  # False: a string is never closed, the scan stopped there
    # where the line of code that starts each block but the first begins (read only)
    code_lines: list[int] = field(default_factory=list)


# The last few texts split: the language server asks again about the text it just parsed
# (to blank out a block with a syntax error, `torchlint.lsp.partial`), and positions ask too.
_RECENT_SPLITS = 4
_recent: dict[str, _Split] = {}
_recent_lock = threading.Lock()


def _split(text: str, previous: tuple[str, _Split] | None = None) -> _Split:
    """Where the top-level blocks of `text` start.

    Blank and comment lines before a block go with it, except those up to the last one indented
    like the body of the statement above: libcst gives those to that body (its `footer`), in a
    whole-file parse and when parsing them with the block above alike.

    With `previous` (an earlier text and its split, as the language server has after an edit),
    only the lines around the edit are scanned: see `_split_after`. The answer is the same."""
    with _recent_lock:
        known = _recent.get(text)
    if known is not None:
        return known
    if previous is not None and previous[1].complete:
        split = _split_after(text, *previous)
    else:
        split = _scan(text)
    with _recent_lock:
        _recent[text] = split
        while len(_recent) > _RECENT_SPLITS:
            del _recent[next(iter(_recent))]
    return split


def forget_recent_splits() -> None:
    """Forget the splits remembered for the last few texts (benchmarks time a first split)."""
    with _recent_lock:
        _recent.clear()


def _split_after(text: str, old_text: str, old: _Split) -> _Split:
    """`_scan(text)`, from the split of `old_text`: the scan starts at the last block whose
    first line of code lies before the first changed character, and stops at the first block
    it meets past the last changed one that the old text had too (the old split, shifted, is
    the rest). Exact because the scanner carries no state across a line that starts a block
    (depth 0, no continuation, nothing pending but where the block started), so from such a
    line on it does the same on the same text."""
    prefix = _common_prefix(text, old_text)
    limit = min(len(text), len(old_text)) - prefix
    suffix = _common_suffix(text, old_text, limit)
    # the last block starting with a whole line of code before the change (block 0 has none)
    index = bisect_right(old.code_lines, prefix) - 1
    while index >= 0 and _line_end(old_text, old.code_lines[index]) > prefix:
        index -= 1
    sync = _Sync(old, len(text) - len(old_text), len(text) - suffix)
    if index < 0:
        return _scan(text, sync)
    block = index + 1  # code_lines[i] is the line of code that starts block i + 1
    at = old.code_lines[index]
    first_indented = old.first_indented if 0 <= old.first_indented < at else -1
    begins = old.starts[block]
    return _scan(
        text,
        sync,
        position=at,
        starts=old.starts[:block],
        code_lines=old.code_lines[:index],
        first_indented=first_indented,
        lines_from=begins if begins < at else -1,
    )


@dataclass(frozen=True)
class _Sync:
    """Where a scan may take the rest of an earlier text's split (see `_split_after`)."""

    old: _Split
    delta: int  # len(text) - len(old text)
    after: int  # the text from here on is the old text's end


def _common_prefix(a: str, b: str) -> int:
    return _agreeing(min(len(a), len(b)), lambda i, j: a[i:j] == b[i:j])


def _common_suffix(a: str, b: str, limit: int) -> int:
    """How many characters `a` and `b` end with alike, at most `limit`."""
    end_a, end_b = len(a), len(b)
    return _agreeing(limit, lambda i, j: a[end_a - j : end_a - i] == b[end_b - j : end_b - i])


def _agreeing(limit: int, same: Callable[[int, int], bool]) -> int:
    """The largest `n <= limit` such that the first `n` characters agree, by bisection;
    `same(i, j)` says whether characters `i` to `j` do (each range is compared once)."""
    if same(0, limit):
        return limit
    low, high = 0, limit - 1  # the first `low` agree; not the first `high + 1`
    while low < high:
        middle = (low + high + 1) // 2
        if same(low, middle):
            low = middle
        else:
            high = middle - 1
    return low


def _line_end(text: str, position: int) -> int:
    return text.find("\n", position) + 1 or len(text)


def _scan(
    text: str,
    sync: _Sync | None = None,
    *,
    position: int = 0,
    starts: list[int] | None = None,
    code_lines: list[int] | None = None,
    first_indented: int = -1,
    lines_from: int = -1,
) -> _Split:
    """The line scanner: the whole text, or from `position` on, a line of code that starts a
    block (`starts` and `code_lines` hold the blocks before it, `lines_from` where its blank
    and comment lines start, or -1), with `first_indented` as found before it."""
    starts = [0] if starts is None else starts
    code_lines = [] if code_lines is None else code_lines
    size = len(text)
    depth = 0  # open brackets
    continued = False  # the previous line ended with a backslash
    after_decorator = False  # the last top-level line of code was a decorator
    # the first block has a top-level line of code (the others start with one); a scan from
    # a later block's line of code starts after the first block
    code_seen = position > 0
    # lines_from: where the blank and comment lines before this line start
    body_indent = ""  # the indentation of the body of the last top-level statement
    find = text.find
    special = _QUOTES_COMMENT_BACKSLASH.search
    nonblank = _NON_BLANK.search
    while position < size:
        end = find("\n", position) + 1 or size
        if depth == 0 and not continued:
            found = nonblank(text, position, end)
            first = found.start() if found is not None else end
            char = text[first] if found is not None else "\n"
            if char in "\r\n#":  # a blank or comment line
                if body_indent and text.startswith(body_indent, position):
                    lines_from = end
                elif lines_from < 0:
                    lines_from = position
            elif first > position:  # an indented line of code
                lines_from = -1
                if not body_indent:
                    body_indent = text[position:first]
                if first_indented < 0:
                    first_indented = position
            else:  # a top-level line of code
                body_indent = ""
                if (
                    code_seen
                    and not after_decorator
                    and not _CONTINUATION_KEYWORD.match(text, position)
                ):
                    begins = position if lines_from < 0 else lines_from
                    if sync is not None and position >= sync.after:
                        rest = _synced(sync, position, begins, starts, code_lines, first_indented)
                        if rest is not None:
                            return rest
                    starts.append(begins)
                    code_lines.append(position)
                lines_from = -1
                code_seen = True
                after_decorator = char == "@"
        else:
            lines_from = -1
        continued = False
        index = position
        while True:
            found = special(text, index, end)
            if found is None:
                depth = max(depth + _bracket_balance(text[index:end]), 0)
                break
            at = found.start()
            depth = max(depth + _bracket_balance(text[index:at]), 0)
            char = text[at]
            if char == "#":
                # libcst takes a block ending in a comment that ends in a backslash for one
                # without a final newline: keep the next line in the block
                continued = text.endswith(("\\\n", "\\\r\n"), at, end)
                break
            if char == "\\":
                if text.startswith(("\n", "\r\n"), at + 1):
                    continued = True
                    break
                index = at + 2
                continue
            quotes = char * 3 if text.startswith(char * 3, at) else char
            rest_match = _STRING_REST[quotes].match(text, at + len(quotes))
            if rest_match is None:  # never closed: the rest of the text is the last block
                return _Split(starts, first_indented, complete=False, code_lines=code_lines)
            index = rest_match.end()
            if index >= end:  # the string went on past this line: go on after it
                end = find("\n", index) + 1 or size
        position = end
    return _Split(starts, first_indented, code_lines=code_lines)


def _synced(
    sync: _Sync,
    position: int,
    begins: int,
    starts: list[int],
    code_lines: list[int],
    first_indented: int,
) -> _Split | None:
    """The split, when the line of code at `position` started a block of the old text too
    (shifted by the edit): the block starts at `begins`, as our scan found, and the blocks
    after it are the old ones."""
    old = sync.old
    at = position - sync.delta
    index = bisect_right(old.code_lines, at) - 1
    if index < 0 or old.code_lines[index] != at:
        return None
    if first_indented < 0 and 0 <= old.first_indented < at:
        return None  # the old text's first indented line is gone: the scan must find ours
    delta = sync.delta
    if first_indented < 0 and old.first_indented >= at:
        first_indented = old.first_indented + delta
    return _Split(
        [*starts, begins, *(s + delta for s in old.starts[index + 2 :])],
        first_indented,
        old.complete,
        [*code_lines, *(q + delta for q in old.code_lines[index:])],
    )


def block_starts(text: str) -> list[int]:
    """Where the top-level blocks of `text` start, as offsets (the first is 0), split the way
    `IncrementalParser` splits them (the language server blanks out a block that does not
    parse, to check the others)."""
    return list(_split(text).starts)


def complete_block_starts(text: str) -> list[int] | None:
    """`block_starts`, or None when the scan stopped at a string it saw never closed (the
    blocks it found are then not the text's)."""
    split = _split(text)
    return list(split.starts) if split.complete else None


def _bracket_balance(segment: str) -> int:
    return (
        segment.count("(")
        + segment.count("[")
        + segment.count("{")
        - segment.count(")")
        - segment.count("]")
        - segment.count("}")
    )
