"""`--output-format json`: a JSON array of diagnostics with Ruff's field names, nothing else."""

from __future__ import annotations

import json
from typing import TextIO

from torchlint.report import Report


def render_json(report: Report, stream: TextIO) -> None:
    stream.write(json.dumps([d.to_json() for d in report.diagnostics], indent=2))
    stream.write("\n")
    stream.flush()
