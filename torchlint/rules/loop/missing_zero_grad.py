"""TL102: gradients accumulate across iterations because nothing clears them."""

from __future__ import annotations

from torchlint.analysis.model import Kind
from torchlint.analysis.training import first, may_clear
from torchlint.diagnostics import Severity
from torchlint.rules.base import Rule, RuleContext


class MissingZeroGrad(Rule):
    code = "TL102"
    name = "missing-zero-grad"
    family = "loop"
    severity = Severity.ERROR
    summary = "A loop with backward and optimizer step never clears the gradients."

    def check(self, ctx: RuleContext) -> None:
        for model in ctx.loops.all:
            step = next((e for e in model.events if e.kind is Kind.STEP and e.depth == 0), None)
            backward = first(model.events, Kind.BACKWARD)
            if step is None or backward is None:
                continue
            if any(may_clear(e, ctx.roles) for e in model.events):
                continue
            optimizer = step.receiver or "optimizer"
            ctx.report(
                backward.event.node,
                f"Gradients are never cleared in the {model.loop.label}, so each "
                f"`{ctx.text(step.event.node)}`{ctx.where(step)} applies the sum of all "
                "previous iterations' "
                f"gradients; call `{optimizer}.zero_grad()` before "
                f"`{ctx.text(backward.event.node)}`.",
            )
