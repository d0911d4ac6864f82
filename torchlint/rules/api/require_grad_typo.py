"""TL505: `p.require_grad = False` sets an unused attribute instead of `requires_grad`."""

from __future__ import annotations

from torchlint.analysis.names import expr_text
from torchlint.diagnostics import Severity
from torchlint.rules.base import Rule, RuleContext


class RequireGradTypo(Rule):
    code = "TL505"
    name = "require-grad-typo"
    family = "api"
    severity = Severity.ERROR
    summary = (
        "An assignment to `.require_grad` (missing `s`) on a parameter or tensor: it creates a "
        "new attribute and leaves `requires_grad` unchanged."
    )
    fixable = True

    def check(self, ctx: RuleContext) -> None:
        if ctx.facts.require_grad_reads:
            return  # the module reads `.require_grad`: an attribute of its own, on purpose
        for target in ctx.facts.require_grad_writes:
            receiver = expr_text(target.value)
            if receiver in ("self", "cls"):
                continue  # an object's own setting (`self.require_grad = flag`)
            ctx.positions.span(target)  # lays out the statement, the attribute name included
            fix = ctx.fix(
                "unsafe", "Assign `.requires_grad`", ctx.replace(target.attr, "requires_grad")
            )
            ctx.report(
                target,
                f"`{receiver}.require_grad` is not a PyTorch attribute: this assignment adds a "
                f"new one and leaves `{receiver}.requires_grad` as it was, so a layer meant to "
                "be frozen keeps training (or the other way round); did you mean "
                "`requires_grad`?",
                fix=fix,
            )
