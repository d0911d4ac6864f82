"""TL001: the file does not parse. The engine reports it; the class carries the metadata."""

from __future__ import annotations

from torchlint.diagnostics import Severity
from torchlint.rules.base import Rule, RuleContext


class SyntaxErrorRule(Rule):
    code = "TL001"
    name = "syntax-error"
    family = "syntax"
    severity = Severity.ERROR
    summary = "The file does not parse as Python, so nothing else in it was checked."

    def check(self, ctx: RuleContext) -> None:  # reported by the engine before any rule runs
        return None
