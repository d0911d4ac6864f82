"""Static diagnostics confirmed by a run: a TL301 on a line where the profile measured
synchronisations reads "... (confirmed by a run: 3 sync(s) per step, 2.10 ms)". The runtime
diagnostics of the document carry their code and evidence (`runtime_runs.to_lsp_diagnostic`);
which runtime code confirms which static rule is the rules' own table
(`torchlint.runtime.confirm`)."""

from __future__ import annotations

import copy
from typing import Any

from lsprotocol import types

from torchlint.runtime.confirm import confirmation, confirming


def with_confirmations(
    static: list[types.Diagnostic], runtime: list[types.Diagnostic]
) -> list[types.Diagnostic]:
    """`static`, each one that a runtime diagnostic at one of its lines confirms with the
    run's figures appended to its message (a new object; the list given is not changed)."""
    table = confirming()
    marks: list[tuple[int, tuple[str, ...], str]] = []
    for diagnostic in runtime:
        code = str(diagnostic.code or "")
        confirmed = table.get(code)
        if confirmed:
            data: Any = diagnostic.data if isinstance(diagnostic.data, dict) else {}
            evidence = data.get("evidence")
            text = confirmation(code, evidence if isinstance(evidence, dict) else None)
            marks.append((diagnostic.range.start.line, confirmed, text))
    if not marks:
        return static
    result: list[types.Diagnostic] = []
    for diagnostic in static:
        code = str(diagnostic.code or "")
        first, last = diagnostic.range.start.line, diagnostic.range.end.line
        found = next(
            (t for line, codes, t in marks if code in codes and first <= line <= last), None
        )
        if found is not None and found not in diagnostic.message:
            diagnostic = copy.copy(diagnostic)
            diagnostic.message = f"{diagnostic.message} ({found})"
        result.append(diagnostic)
    return result
