"""The one currency of torchlint: a `Diagnostic`, produced by the analyzer and the runtime
companion and consumed by every reporter, the language server and the fixer."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, Literal

Applicability = Literal["safe", "unsafe"]

DOCS_URL = "https://github.com/torchlint/torchlint/blob/main/rules/{code}-{name}.md"


class Severity(enum.Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


@dataclass(frozen=True, order=True)
class Location:
    """A 1-based line and 1-based column (counted in Unicode code points)."""

    row: int
    column: int

    def to_json(self) -> dict[str, int]:
        return {"row": self.row, "column": self.column}


@dataclass(frozen=True)
class Edit:
    """Replace the text between `location` and `end_location` with `content`."""

    content: str
    location: Location
    end_location: Location

    def to_json(self) -> dict[str, Any]:
        return {
            "content": self.content,
            "location": self.location.to_json(),
            "end_location": self.end_location.to_json(),
        }


@dataclass(frozen=True)
class Fix:
    applicability: Applicability
    message: str
    edits: tuple[Edit, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "applicability": self.applicability,
            "message": self.message,
            "edits": [edit.to_json() for edit in self.edits],
        }


@dataclass(frozen=True)
class Diagnostic:
    code: str
    name: str
    message: str
    severity: Severity
    filename: str
    location: Location
    end_location: Location
    fix: Fix | None = None
    source: str = "static"
    # Extra facts a consumer may show (e.g. where the other half of a finding lives).
    related: tuple[tuple[str, Location], ...] = field(default=())
    # In a notebook: the cell (1-based, among all its cells); the rows are lines in that cell.
    cell: int | None = None

    @property
    def url(self) -> str:
        return rule_url(self.code, self.name)

    @property
    def sort_key(self) -> tuple[str, int, int, int, str]:
        cell = self.cell or 0
        return (self.filename, cell, self.location.row, self.location.column, self.code)

    @property
    def where(self) -> str:
        """`row:col`, or `cell N:row:col` in a notebook, as the text outputs show it."""
        prefix = f"cell {self.cell}:" if self.cell is not None else ""
        return f"{prefix}{self.location.row}:{self.location.column}"

    def to_json(self) -> dict[str, Any]:
        result = self._json()
        if self.cell is not None:  # only notebooks: the output of `.py` files is unchanged
            location = list(result).index("location")
            items = list(result.items())
            items.insert(location, ("cell", self.cell))
            result = dict(items)
        return result

    def _json(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "name": self.name,
            "message": self.message,
            "severity": self.severity.value,
            "url": self.url,
            "filename": self.filename,
            "location": self.location.to_json(),
            "end_location": self.end_location.to_json(),
            "fix": self.fix.to_json() if self.fix else None,
        }


def rule_url(code: str, name: str) -> str:
    return DOCS_URL.format(code=code, name=name)
