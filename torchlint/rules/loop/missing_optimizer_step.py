"""TL101: a loop computes gradients but nothing ever applies them."""

from __future__ import annotations

from torchlint.analysis.model import Kind
from torchlint.analysis.training import may_step, mentions_optimizer, optimizer_name, scope_may_step
from torchlint.diagnostics import Severity
from torchlint.rules.base import Rule, RuleContext


class MissingOptimizerStep(Rule):
    code = "TL101"
    name = "missing-optimizer-step"
    family = "loop"
    severity = Severity.ERROR
    summary = "A loop calls backward but no optimizer step happens in it or in anything it calls."

    def check(self, ctx: RuleContext) -> None:
        if not mentions_optimizer(ctx.facts.parsed.text):
            return  # no optimizer anywhere: gradients for inspection, not training
        models = ctx.loops.all
        covered: set[int] = set()
        for model in models:
            if any(may_step(e, ctx.roles) for e in model.events):
                covered |= model.inner_loops
        for model in models:
            backward = next(
                (e for e in model.events if e.kind is Kind.BACKWARD and e.depth == 0), None
            )
            if backward is None or id(model.loop.node) in covered:
                continue
            if any(may_step(e, ctx.roles) for e in model.events):
                continue
            if scope_may_step(model.loop.scope, ctx.roles, outside=model.loop):
                continue  # e.g. micro-batch backward in a loop, step after it
            optimizer = optimizer_name(ctx.roles, model)
            ctx.report(
                backward.event.node,
                f"`{ctx.text(backward.event.node)}` computes gradients on every iteration of the "
                f"{model.loop.label}, but no optimizer step runs in the loop or in anything it "
                f"calls; call `{optimizer}.step()` after the backward pass.",
            )
