"""`# noqa: TL301`, `# torchlint: ignore[TL301]` and `# torchlint: ignore-file[TL303]`."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from torchlint.rules import lookup

_LINE = re.compile(
    r"#\s*(?:noqa(?P<colon>:\s*(?P<noqa>[\w-]+(?:[\s,]+[\w-]+)*))?"
    r"|torchlint:\s*ignore(?!-file)(?:\[(?P<ignore>[^\]]*)\])?)",
    re.IGNORECASE,
)
_FILE = re.compile(r"#\s*torchlint:\s*ignore-file(?:\[(?P<codes>[^\]]*)\])?", re.IGNORECASE)
ALL = frozenset({"*"})
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def _codes(text: str) -> frozenset[str]:
    codes = set()
    for part in re.split(r"[\s,]+", text.strip()):
        rule = lookup(part) if part else None
        if rule is not None:
            codes.add(rule.code)
        elif part:
            codes.add(part.upper())  # another tool's code, or a typo: suppresses nothing of ours
    return frozenset(codes)


def _in_comment(line: str, index: int) -> bool:
    """Whether the `#` at `index` starts a comment (it is not inside a string literal)."""
    quote: str | None = None
    i = 0
    while i < index:
        ch = line[i]
        if ch == "\\" and quote:
            i += 2
            continue
        if quote is None and ch in "'\"":
            quote = ch
        elif ch == quote:
            quote = None
        i += 1
    return quote is None


def line_suppressions(line: str) -> frozenset[str] | None:
    """The codes a line's comment suppresses (`ALL` for a bare `# noqa`), or None."""
    if "#" not in line:
        return None
    result: set[str] = set()
    found = False
    for match in _LINE.finditer(line):
        if not _in_comment(line, match.start()):
            continue
        found = True
        codes = match.group("noqa") or match.group("ignore")
        if codes is None:
            if match.group("colon") is None:
                return ALL
            continue
        result |= _codes(codes)
    return frozenset(result) if found else None


@dataclass
class Suppressions:
    text: str
    file_codes: frozenset[str] = field(init=False)
    _lines: list[str] | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        codes: set[str] = set()
        if "ignore-file" in self.text:
            for match in _FILE.finditer(self.text):
                if match.group("codes") is None:
                    codes.add("*")
                else:
                    codes |= _codes(match.group("codes"))
        self.file_codes = frozenset(codes)

    def suppressed(self, code: str, rows: tuple[int, ...]) -> bool:
        if "*" in self.file_codes or code in self.file_codes:
            return True
        if "#" not in self.text:
            return False
        if self._lines is None:
            # The same line breaks as the parser's (not str.splitlines, which also breaks on
            # form feeds and Unicode separators and would shift every row after one).
            self._lines = _LINE_BREAK.split(self.text)
        for row in rows:
            if 1 <= row <= len(self._lines):
                codes = line_suppressions(self._lines[row - 1])
                if codes is not None and ("*" in codes or code in codes):
                    return True
        return False
