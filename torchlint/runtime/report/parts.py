"""What every part of the runtime report reads and draws with: defensive readers of the
envelope's fields, the glyphs for the console, headings and bullets. Runs in the parent
process, which may have no torch."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from rich.console import Console
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from torchlint.discovery import display_path

#: the loss chart: rows of characters, and the widest it gets (in characters)
CHART_ROWS = 8


CHART_MAX_WIDTH = 60


CHART_MIN_WIDTH = 16


#: the chart switches to a log scale when max/min of the (positive) losses exceeds this
LOG_SCALE_RANGE = 100.0


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def _num(value: object) -> float | None:
    """`value` as a finite float, else None (booleans are not numbers here)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def _count(value: object) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _fmt(value: object, spec: str = ".4g") -> str:
    number = _num(value)
    return "n/a" if number is None else format(number, spec)


def _curve(value: object) -> list[float | None]:
    return [_num(v) for v in _list(value)]


def _where(filename: object, line: object) -> str | None:
    """`file:line` with the file relative to the current directory when it lies below it."""
    name = _text(filename)
    if name is None:
        return None
    try:
        shown = display_path(name)
    except (OSError, ValueError):
        shown = name
    number = _count(line)
    return f"{shown}:{number}" if number is not None else shown


def _site(site: object) -> str | None:
    data = _dict(site)
    return _where(data.get("filename"), data.get("line"))


@dataclass(frozen=True)
class Glyphs:
    """Characters of the report: Unicode, or plain ASCII when the console cannot encode it."""

    unicode: bool

    @classmethod
    def for_console(cls, console: Console) -> Glyphs:
        return cls(console.encoding.lower().replace("_", "-").startswith("utf"))

    def pick(self, fancy: str, plain: str) -> str:
        return fancy if self.unicode else plain

    @property
    def ellipsis(self) -> str:
        return self.pick("…", "...")

    @property
    def bullet(self) -> str:
        return self.pick("•", "-")

    @property
    def arrow(self) -> str:
        return self.pick("→", "->")

    @property
    def gap(self) -> str:
        return self.pick("✕", "x")


def _heading(console: Console, title: str) -> None:
    console.print()
    console.print(Text(title, style="bold underline"))


def _bullet(glyphs: Glyphs, body: Text) -> Table:
    """One bullet point; wrapped lines hang under the text, not under the bullet."""
    grid = Table.grid(padding=(0, 1))
    grid.add_column(no_wrap=True)
    grid.add_column()
    grid.add_row(Text(f" {glyphs.bullet}"), body)
    return grid


def _indented(renderable: Text | Table) -> Padding:
    return Padding(renderable, (0, 0, 0, 2), expand=False)
