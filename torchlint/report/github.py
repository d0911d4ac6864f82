"""`--output-format github`: one GitHub Actions workflow command per finding, which GitHub
shows as an annotation on the line of the pull request's diff:

    ::error title=torchlint (TL101),file=train.py,line=7,col=5,endLine=7,endColumn=20::TL101 ...

The command is `error`, `warning` or `notice` after the rule's severity. The message and the
property values are escaped as the workflow-command syntax requires (`%` `\\r` `\\n` everywhere,
and `:` `,` in property values), so a message can never end the command early or forge
another one. No summary line: every line of the output is a command.

In a notebook, `line` and `endLine` are lines within the cell and the message starts with
`cell N: ` (GitHub shows a notebook's diff as JSON, where no line number would fit better).
"""

from __future__ import annotations

import os
from typing import TextIO

from torchlint.diagnostics import Diagnostic, Severity
from torchlint.report.common import Report

COMMANDS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def escape_data(value: str) -> str:
    """Escape a command's message (the text after `::`)."""
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(value: str) -> str:
    """Escape a property value (`file=...`): the data escapes plus `:` and `,`."""
    return escape_data(value).replace(":", "%3A").replace(",", "%2C")


def workflow_command(report: Report, diagnostic: Diagnostic) -> str:
    path = report.path(diagnostic)
    if os.sep != "/":
        path = path.replace(os.sep, "/")
    start, end = diagnostic.location, diagnostic.end_location
    properties = (
        ("title", f"torchlint ({diagnostic.code})"),
        ("file", path),
        ("line", str(start.row)),
        ("col", str(start.column)),
        ("endLine", str(end.row)),
        ("endColumn", str(end.column)),
    )
    rendered = ",".join(f"{key}={escape_property(value)}" for key, value in properties)
    command = COMMANDS.get(diagnostic.severity, "error")
    cell = f"cell {diagnostic.cell}: " if diagnostic.cell is not None else ""
    message = escape_data(f"{cell}{diagnostic.code} {diagnostic.message}")
    return f"::{command} {rendered}::{message}"


def render_github(report: Report, stream: TextIO) -> None:
    for diagnostic in report.diagnostics:
        stream.write(workflow_command(report, diagnostic))
        stream.write("\n")
    stream.flush()
