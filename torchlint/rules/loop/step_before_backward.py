"""TL104: the optimizer steps before this iteration's backward has produced gradients."""

from __future__ import annotations

from torchlint.analysis.model import Kind
from torchlint.diagnostics import Severity
from torchlint.rules.base import Rule, RuleContext


class StepBeforeBackward(Rule):
    code = "TL104"
    name = "step-before-backward"
    family = "loop"
    severity = Severity.ERROR
    summary = "In one iteration, the optimizer steps before the first backward."

    def check(self, ctx: RuleContext) -> None:
        for model in ctx.loops.all:
            backwards = [e for e in model.events if e.kind is Kind.BACKWARD]
            if not backwards:
                continue
            for e in model.events:
                if e.kind is Kind.BACKWARD:
                    break
                if (
                    e.kind is Kind.STEP
                    and e.depth == 0
                    and e.is_unconditional
                    and not e.event.has_closure
                ):
                    ctx.report(
                        e.event.node,
                        f"`{ctx.text(e.event.node)}`{ctx.where(e)} runs before "
                        f"`{ctx.text(backwards[0].event.node)}` in each iteration of the "
                        f"{model.loop.label}, so it applies the previous iteration's gradients "
                        "(or none); call backward first, then step.",
                    )
                    break
