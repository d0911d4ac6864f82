"""`--output-format sarif`: a SARIF 2.1.0 log, the format GitHub code scanning uploads
(`github/codeql-action/upload-sarif`) and many editors and dashboards read.

One run, whose `tool.driver.rules` lists every rule torchlint has (enabled or not, so that a
result's `ruleIndex` never depends on the selection), each with its summary, the "What it does"
section of its documentation and the link to the rest. Each result points at its file through
a URI relative to the current directory under the base id `%SRCROOT%` (declared in
`originalUriBaseIds`; a file outside the current directory gets an absolute `file://` URI),
with 1-based lines and columns counted in Unicode code points (`columnKind`). A finding whose
fix `--fix` would apply carries that fix as a SARIF `fix`: the replaced regions and the new
text, with the file's own line endings.

In a notebook, regions count lines within the cell, and the result's `properties` hold the
cell's number (`{"cell": 3}`, 1-based among all cells).

The tests validate the output against the official JSON schema of SARIF 2.1.0.
"""

from __future__ import annotations

import json
import os
import re
from functools import cache
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import quote

from torchlint import __version__
from torchlint.diagnostics import DOCS_URL, Diagnostic, Location, Severity, rule_url
from torchlint.report.common import Report
from torchlint.rules import ALL_RULES, Rule

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)
SRCROOT = "%SRCROOT%"
INFORMATION_URI = DOCS_URL.split("/blob/", 1)[0]

LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}

_RULE_INDEX = {rule.code: index for index, rule in enumerate(ALL_RULES)}
_MARKUP = re.compile(r"`|\*\*")


# --- the rules -----------------------------------------------------------------------------


def plain_text(markdown: str) -> str:
    """A Markdown section as plain text: soft-wrapped lines joined, list items kept one a line,
    backticks and bold markers dropped."""
    paragraphs: list[str] = []
    for block in re.split(r"\n\s*\n", markdown.strip()):
        lines: list[str] = []
        for raw in block.splitlines():
            line = raw.strip()
            if not line:
                continue
            if line.startswith(("- ", "* ")) or not lines:
                lines.append(line)
            else:
                lines[-1] = f"{lines[-1]} {line}"
        paragraphs.append("\n".join(lines))
    return _MARKUP.sub("", "\n\n".join(paragraphs))


def _what_it_does(rule: type[Rule]) -> str | None:
    """The "What it does" section of the rule's documentation (None when the documentation is
    not available, say in a trimmed install)."""
    try:
        from torchlint.docs import rule_doc, rule_sections
    except ImportError:  # pragma: no cover - the docs module is part of the package
        return None
    doc = rule_doc(rule.code)
    if doc is None:
        return None
    section = rule_sections(doc).get("What it does")
    return section.strip() if section and section.strip() else None


def rule_descriptor(rule: type[Rule]) -> dict[str, Any]:
    """The SARIF `reportingDescriptor` of a rule."""
    url = rule_url(rule.code, rule.name)
    described = _what_it_does(rule)
    if described is None:
        full = {"text": rule.summary}
        help_ = {
            "text": f"{rule.summary}\n\nSee {url}",
            "markdown": f"{rule.summary}\n\n[Full documentation of {rule.code}]({url})",
        }
    else:
        full = {"text": plain_text(described), "markdown": described}
        help_ = {
            "text": f"{plain_text(described)}\n\nSee {url}",
            "markdown": f"{described}\n\n[Full documentation of {rule.code}]({url})",
        }
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": full,
        "help": help_,
        "helpUri": url,
        "defaultConfiguration": {
            "enabled": rule.default_enabled,
            "level": LEVELS.get(rule.severity, "warning"),
        },
        "properties": {
            "family": rule.family,
            "severity": rule.severity.value,
            "fixable": rule.fixable,
            "tags": ["pytorch", rule.family],
        },
    }


@cache
def _rule_descriptors() -> tuple[str, ...]:
    # Serialised once per process (the docs are read from disk); parsed again by the caller so
    # each log gets its own objects.
    return tuple(json.dumps(rule_descriptor(rule)) for rule in ALL_RULES)


def rule_descriptors() -> list[dict[str, Any]]:
    return [json.loads(text) for text in _rule_descriptors()]


# --- locations -----------------------------------------------------------------------------


def _base(report: Report) -> str:
    return os.path.abspath(report.cwd if report.cwd is not None else os.getcwd())


def directory_uri(folder: str) -> str:
    """A folder as a `file://` URI that ends in `/` (as `originalUriBaseIds` requires)."""
    uri = Path(folder).as_uri()
    return uri if uri.endswith("/") else uri + "/"


def artifact_location(filename: str, base: str) -> dict[str, Any]:
    """A file's `artifactLocation`: relative to `base` under `%SRCROOT%` when it lies below it,
    an absolute `file://` URI otherwise."""
    absolute = os.path.abspath(filename)
    try:
        relative = os.path.relpath(absolute, base)
    except ValueError:  # another drive
        relative = None
    if relative is None or relative == os.pardir or relative.startswith(os.pardir + os.sep):
        return {"uri": Path(absolute).as_uri()}
    return {"uri": quote(relative.replace(os.sep, "/"), safe="/"), "uriBaseId": SRCROOT}


def _point(location: Location) -> tuple[int, int]:
    return max(location.row, 1), max(location.column, 1)


def region(start: Location, end: Location) -> dict[str, int]:
    start_line, start_column = _point(start)
    end_line, end_column = _point(end)
    if (end_line, end_column) < (start_line, start_column):
        end_line, end_column = start_line, start_column
    return {
        "startLine": start_line,
        "startColumn": start_column,
        "endLine": end_line,
        "endColumn": end_column,
    }


# --- results -------------------------------------------------------------------------------


def _newline_of(text: str | None) -> str:
    if not text:
        return "\n"
    from torchlint.fixer import dominant_newline

    return dominant_newline(text)


def _fixes(
    report: Report, diagnostic: Diagnostic, location: dict[str, Any]
) -> list[dict[str, Any]]:
    fix = diagnostic.fix
    if fix is None or not fix.edits or not report.marked_fixable(diagnostic):
        return []
    newline = _newline_of(report.sources.get(diagnostic.filename))
    replacements = []
    for edit in fix.edits:
        content = edit.content
        if newline != "\n" and "\n" in content:
            content = content.replace("\r\n", "\n").replace("\n", newline)
        replacements.append(
            {
                "deletedRegion": region(edit.location, edit.end_location),
                "insertedContent": {"text": content},
            }
        )
    return [
        {
            "description": {"text": fix.message},
            "artifactChanges": [{"artifactLocation": location, "replacements": replacements}],
            "properties": {"applicability": fix.applicability},
        }
    ]


def sarif_result(report: Report, diagnostic: Diagnostic, base: str) -> dict[str, Any]:
    location = artifact_location(diagnostic.filename, base)
    result: dict[str, Any] = {"ruleId": diagnostic.code}
    index = _RULE_INDEX.get(diagnostic.code)
    if index is not None:
        result["ruleIndex"] = index
    result["level"] = LEVELS.get(diagnostic.severity, "warning")
    result["message"] = {"text": diagnostic.message}
    result["locations"] = [
        {
            "physicalLocation": {
                "artifactLocation": location,
                "region": region(diagnostic.location, diagnostic.end_location),
            }
        }
    ]
    if diagnostic.related:
        result["relatedLocations"] = [
            {
                "id": number,
                "message": {"text": note},
                "physicalLocation": {
                    "artifactLocation": location,
                    "region": region(where, where),
                },
            }
            for number, (note, where) in enumerate(diagnostic.related, start=1)
        ]
    fixes = _fixes(report, diagnostic, location)
    if fixes:
        result["fixes"] = fixes
    if diagnostic.cell is not None:
        result["properties"] = {"cell": diagnostic.cell}
    return result


def sarif_log(report: Report) -> dict[str, Any]:
    base = _base(report)
    return {
        "$schema": SARIF_SCHEMA,
        "version": SARIF_VERSION,
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "torchlint",
                        "informationUri": INFORMATION_URI,
                        "version": __version__,
                        "semanticVersion": __version__,
                        "rules": rule_descriptors(),
                    }
                },
                "invocations": [{"executionSuccessful": not report.had_errors}],
                "originalUriBaseIds": {SRCROOT: {"uri": directory_uri(base)}},
                "columnKind": "unicodeCodePoints",
                "results": [sarif_result(report, d, base) for d in report.diagnostics],
            }
        ],
    }


def render_sarif(report: Report, stream: TextIO) -> None:
    stream.write(json.dumps(sarif_log(report), indent=2))
    stream.write("\n")
    stream.flush()
