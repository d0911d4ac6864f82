"""What the runtime checks found, as the editor shows it beside the static findings.

- *One per code and line.* Each run's findings are kept per document (`RuntimeDiagnostics`);
  when two checks report the same code on the same line (the overfit run and the gradient
  scan both see gradients that are never cleared), the latest run's finding is the one shown.
- *Statement-wide.* A finding covers the statement on its line, from its first character to
  its end (a statement over several lines included), not the line's indentation.
- *Documented.* Each carries a link to its code in `docs/runtime.md` and a hover that says
  what the run saw (`runtime_hover`).
- *Agreement.* Where a run confirms a static rule (`CONFIRMS`: TLR107 gradients not cleared
  and TL102, ...), the editor shows one finding, the static one, saying both: "seen in the code
  and confirmed by a run", with the run's location as related information (`merge`).
- *Fixes.* A cause with a fix gets it as a quick fix (TL102 / TLR107: insert
  `optimizer.zero_grad()` before the backward), once as is and once as "fix and run again",
  which also starts the check that found it (`zero_grad_actions`).
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lsprotocol import types

from torchlint.lsp.actions import workspace_edit
from torchlint.lsp.convert import SOURCE, PositionMap, code_units, range_json

RUNTIME_SOURCE = "torchlint-runtime"
RUNTIME_DOCS = "https://github.com/torchlint/torchlint/blob/main/docs/"
# The page (and section) whose table documents a runtime code, by its hundreds digit.
_DOCS_PAGES = {
    "4": "runtime-fit.md#diagnostics",
    "5": "runtime-lr-find.md#diagnostics",
    "6": "runtime-profile.md#hints",
}

#: runtime code -> the static rule it confirms
CONFIRMS: dict[str, str] = {
    "TLR107": "TL102",  # gradients never cleared
    "TLR303": "TL109",  # probabilities into a loss that wants logits
    "TLR304": "TL105",  # training in eval mode
    "TLR305": "TL106",  # validation without no_grad
}
CONFIRMED = "Seen in the code and confirmed by a run"

SEVERITIES: dict[str, types.DiagnosticSeverity] = {
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "info": types.DiagnosticSeverity.Information,
}

#: (script key, check): the run a runtime diagnostic came from
Origin = tuple[str, str]

_ZERO_GRAD_ADVICE = re.compile(r"call `(?P<optimizer>[\w.]+)\.zero_grad\(\)`")
_STEP_CALL = re.compile(r"(?P<receiver>[\w.]+)\.step\(\s*(?P<argument>[\w.]*)\s*\)")


def path_key(path: str | os.PathLike[str]) -> str:
    """A file's identity: its real, case-normalised absolute path."""
    return os.path.normcase(os.path.realpath(os.fspath(path)))


@dataclass(frozen=True)
class Finding:
    """One diagnostic of an envelope, placed: a file (path key) and a 0-based line."""

    key: str
    line: int
    item: dict[str, Any]


def findings_of(result: dict[str, Any], script: Path, fallback_line: int | None) -> list[Finding]:
    """Where each of the envelope's diagnostics goes: its own file and line; the script when it
    names no file; the lens's line (else the first) when it names no line."""
    found: list[Finding] = []
    for item in result.get("diagnostics") or []:
        if not isinstance(item, dict):
            continue
        filename = item.get("filename")
        line = item.get("line")
        key = path_key(filename) if isinstance(filename, str) and filename else path_key(script)
        if isinstance(line, int) and not isinstance(line, bool) and line >= 1:
            row = line - 1
        else:
            row = fallback_line if fallback_line is not None else 0
        found.append(Finding(key, row, item))
    return found


def docs_url(code: str) -> str:
    """Where a runtime code is documented: the codes table of its check's page."""
    digit = code[3:4] if code.startswith("TLR") else ""
    return RUNTIME_DOCS + _DOCS_PAGES.get(digit, "runtime.md#runtime-diagnostics")


# --- where a finding goes ---------------------------------------------------------------------


def statement_range(text: str, line: int, encoding: str) -> types.Range:
    """The range of the statement that starts on 0-based `line` of `text` (the innermost one,
    over all its lines), or of the line's code without its indentation when the text does not
    parse or no statement starts there."""
    positions = PositionMap(text, encoding)
    line = min(max(line, 0), max(positions.line_count - 1, 0))
    found = _statement_at(text, line + 1)
    if found is not None:
        start_row, start_byte, end_row, end_byte = found
        return types.Range(
            start=_byte_position(positions, start_row - 1, start_byte, encoding),
            end=_byte_position(positions, end_row - 1, end_byte, encoding),
        )
    content = positions.line(line)
    start = len(content) - len(content.lstrip())
    end = len(content.rstrip())
    return types.Range(
        start=types.Position(line=line, character=code_units(content[:start], encoding)),
        end=types.Position(line=line, character=code_units(content[:end], encoding)),
    )


def _statement_at(text: str, row: int) -> tuple[int, int, int, int] | None:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return None
    best: ast.stmt | None = None
    for node in ast.walk(tree):
        # The innermost statement starting on the row (a compound statement's header line holds
        # only its own first line, not its body).
        if (
            isinstance(node, ast.stmt)
            and node.lineno == row
            and (best is None or node.col_offset >= best.col_offset)
        ):
            best = node
    if best is None or best.end_lineno is None or best.end_col_offset is None:
        return None
    if isinstance(best, ast.If | ast.For | ast.While | ast.With | ast.Try | ast.FunctionDef):
        return best.lineno, best.col_offset, best.lineno, -1  # the header line only
    return best.lineno, best.col_offset, best.end_lineno, best.end_col_offset


def _byte_position(positions: PositionMap, line: int, byte: int, encoding: str) -> types.Position:
    """A position from `ast`'s UTF-8 byte column (-1: the end of the line's code)."""
    content = positions.line(line)
    if byte < 0:
        prefix = content.rstrip()
    else:
        prefix = content.encode("utf-8")[:byte].decode("utf-8", "ignore")
    return types.Position(line=line, character=code_units(prefix, encoding))


def to_lsp_diagnostic(
    finding: Finding,
    text: str,
    encoding: str,
    check: str,
    extra: dict[str, Any] | None = None,
) -> types.Diagnostic:
    """A runtime finding as an LSP diagnostic over the statement on its line of `text` (a line
    past the end lands on the last one)."""
    item = finding.item
    line = finding.line
    severity = SEVERITIES.get(str(item.get("severity")), types.DiagnosticSeverity.Warning)
    code = str(item.get("code") or "") or None
    return types.Diagnostic(
        range=statement_range(text, line, encoding),
        message=str(item.get("message") or item.get("name") or code or "runtime finding"),
        severity=severity,
        code=code,
        code_description=types.CodeDescription(href=docs_url(code)) if code else None,
        source=RUNTIME_SOURCE,
        data={
            "check": check,
            "name": item.get("name"),
            "evidence": item.get("evidence"),
            **(extra or {}),
        },
    )


class RuntimeDiagnostics:
    """The runtime diagnostics of each document (by URI), with the run each came from; the
    latest run's finding for a code and line hides the older ones."""

    def __init__(self) -> None:
        # uri -> origin -> diagnostics, origins in the order they last ran
        self._by_uri: dict[str, dict[Origin, list[types.Diagnostic]]] = {}

    def for_uri(self, uri: str) -> list[types.Diagnostic]:
        latest: dict[tuple[str, int], types.Diagnostic] = {}
        for group in self._by_uri.get(uri, {}).values():
            for diagnostic in group:
                latest[(str(diagnostic.code), diagnostic.range.start.line)] = diagnostic
        return sorted(latest.values(), key=lambda d: (d.range.start.line, d.range.start.character))

    def put(self, uri: str, origin: Origin, diagnostics: list[types.Diagnostic]) -> None:
        self.drop(uri, origin)
        if diagnostics:
            self._by_uri.setdefault(uri, {})[origin] = list(diagnostics)

    def drop(self, uri: str, origin: Origin) -> bool:
        groups = self._by_uri.get(uri)
        if not groups or origin not in groups:
            return False
        del groups[origin]
        if not groups:
            del self._by_uri[uri]
        return True

    def drop_origin(self, origin: Origin) -> list[str]:
        """Forget what one run (a check of a script) found; the URIs that had some."""
        return [uri for uri in list(self._by_uri) if self.drop(uri, origin)]

    def drop_uri(self, uri: str) -> bool:
        return self._by_uri.pop(uri, None) is not None


# --- static and runtime together --------------------------------------------------------------


def merge(
    static: Sequence[types.Diagnostic], runtime: Sequence[types.Diagnostic], uri: str
) -> list[types.Diagnostic]:
    """The static diagnostics of a document with its runtime ones: a runtime finding that
    confirms a static one (`CONFIRMS`, the nearest of that code in the document) is folded into
    it; the others are added."""
    result = list(static)
    added: list[types.Diagnostic] = []
    for finding in runtime:
        rule = CONFIRMS.get(str(finding.code))
        candidates = [
            index
            for index, diagnostic in enumerate(result)
            if rule is not None and diagnostic.code == rule and diagnostic.source == SOURCE
        ]
        if not candidates:
            added.append(finding)
            continue
        index = min(
            candidates, key=lambda i: abs(result[i].range.start.line - finding.range.start.line)
        )
        result[index] = confirmed(result[index], finding, uri)
    return result + added


def confirmed(static: types.Diagnostic, finding: types.Diagnostic, uri: str) -> types.Diagnostic:
    """The static diagnostic, saying that a run confirmed it."""
    data = dict(static.data) if isinstance(static.data, dict) else {}
    runtime = finding.data if isinstance(finding.data, dict) else {}
    data["confirmed"] = {
        "code": finding.code,
        "check": runtime.get("check"),
        "range": range_json(finding.range),
        "message": finding.message,
        "backward_line": runtime.get("backward_line"),
    }
    check = runtime.get("check") or "runtime"
    related = list(static.related_information or [])
    related.append(
        types.DiagnosticRelatedInformation(
            location=types.Location(uri=uri, range=finding.range),
            message=f"{finding.code} ({check} run): {finding.message}",
        )
    )
    severities = [s for s in (static.severity, finding.severity) if s is not None]
    return types.Diagnostic(
        range=static.range,
        message=f"{CONFIRMED} ({finding.code}, {check} run): {static.message}",
        severity=min(severities) if severities else static.severity,
        code=static.code,
        code_description=static.code_description,
        source=static.source,
        tags=static.tags,
        related_information=related,
        data=data,
    )


def is_confirmed(diagnostic: types.Diagnostic) -> bool:
    return isinstance(diagnostic.data, dict) and isinstance(diagnostic.data.get("confirmed"), dict)


# --- the fix for gradients that are never cleared ---------------------------------------------


@dataclass(frozen=True)
class ZeroGradFix:
    line: int  # 0-based: the backward statement's line, where the call goes before
    optimizer: str
    check: str | None  # the check that found it, to run again after the fix


def zero_grad_fix(diagnostic: types.Diagnostic, text: str) -> ZeroGradFix | None:
    """Where `X.zero_grad()` goes for a TL102 (static, or confirmed by a run) or a TLR107."""
    data = diagnostic.data if isinstance(diagnostic.data, dict) else {}
    lines = PositionMap(text).line
    if diagnostic.code == "TL102" and diagnostic.source == SOURCE:
        advice = _ZERO_GRAD_ADVICE.search(diagnostic.message)
        if advice is None:
            return None
        run = data.get("confirmed")
        check = run.get("check") if isinstance(run, dict) else None
        return ZeroGradFix(diagnostic.range.start.line, advice.group("optimizer"), check)
    if diagnostic.code == "TLR107" and diagnostic.source == RUNTIME_SOURCE:
        backward = data.get("backward_line")
        step = _STEP_CALL.search(lines(diagnostic.range.start.line))
        if not isinstance(backward, int) or step is None:
            return None
        optimizer = step.group("argument") or step.group("receiver")
        return ZeroGradFix(backward, optimizer, data.get("check"))
    return None


def zero_grad_actions(
    uri: str,
    diagnostics: Iterable[types.Diagnostic],
    text: str,
    version: int | None,
    versioned: bool,
    command_of: dict[str, str],
) -> list[types.CodeAction]:
    """The quick fixes that insert the missing `zero_grad()`, and "fix and run again" (the check
    that found it, from `command_of`: check -> server command) when a run found it."""
    result: list[types.CodeAction] = []
    seen: set[int] = set()
    for diagnostic in diagnostics:
        fix = zero_grad_fix(diagnostic, text)
        if fix is None or fix.line in seen:
            continue
        seen.add(fix.line)
        line = PositionMap(text).line(fix.line)
        start = _statement_at(text, fix.line + 1)
        if start is None:
            continue
        indent = line[: len(line) - len(line.lstrip())]
        at = types.Position(line=fix.line, character=0)
        edit = workspace_edit(
            uri,
            version,
            [
                types.TextEdit(
                    range=types.Range(start=at, end=at),
                    new_text=f"{indent}{fix.optimizer}.zero_grad()\n",
                )
            ],
            versioned,
        )
        title = f"{diagnostic.code}: insert `{fix.optimizer}.zero_grad()` before the backward"
        result.append(
            types.CodeAction(
                title=title,
                kind=types.CodeActionKind.QuickFix,
                diagnostics=[diagnostic],
                is_preferred=True,
                edit=edit,
            )
        )
        command = command_of.get(fix.check or "")
        if command is not None:
            result.append(
                types.CodeAction(
                    title=f"{title}, and run the {fix.check} check again",
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=[diagnostic],
                    edit=edit,
                    command=types.Command(
                        title=f"Run the {fix.check} check again",
                        command=command,
                        arguments=[uri, fix.line + 1],
                    ),
                )
            )
    return result


# --- hover ------------------------------------------------------------------------------------


def runtime_markdown(diagnostic: types.Diagnostic) -> str:
    """The hover of a runtime finding: its code and name, what the run saw, and the link."""
    data = diagnostic.data if isinstance(diagnostic.data, dict) else {}
    code = str(diagnostic.code)
    name = data.get("name")
    check = data.get("check")
    title = f"### {code} · `{name}`" if name else f"### {code}"
    found_by = f"Found by the **{check}** run of this file." if check else ""
    parts = [title, found_by, diagnostic.message]
    evidence = data.get("evidence")
    if isinstance(evidence, dict) and evidence:
        rows = [f"- `{key}`: {_short(value)}" for key, value in list(evidence.items())[:8]]
        parts.append("What the run measured:\n\n" + "\n".join(rows))
    parts.append(f"[Documentation of {code}]({docs_url(code)})")
    return "\n\n".join(part for part in parts if part)


def _short(value: Any) -> str:
    shown = repr(value) if not isinstance(value, str) else value
    return shown if len(shown) <= 120 else shown[:119] + "…"
