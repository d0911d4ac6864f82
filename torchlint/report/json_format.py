"""`--output-format json`: a JSON array of diagnostics with Ruff's field names, nothing else;
`--output-format json-lines`: the same objects, one per line (no array around them)."""

from __future__ import annotations

import json
from typing import TextIO

from torchlint.report.common import Report


def render_json(report: Report, stream: TextIO) -> None:
    stream.write(json.dumps([d.to_json() for d in report.diagnostics], indent=2))
    stream.write("\n")
    stream.flush()


def render_json_lines(report: Report, stream: TextIO) -> None:
    # `ensure_ascii` keeps each object on its line whatever the message holds (a U+2028 line
    # separator, say, which some readers split on).
    for diagnostic in report.diagnostics:
        stream.write(json.dumps(diagnostic.to_json(), ensure_ascii=True))
        stream.write("\n")
    stream.flush()
