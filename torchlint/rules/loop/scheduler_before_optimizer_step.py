"""TL107: the learning-rate scheduler steps before the optimizer in an iteration."""

from __future__ import annotations

import re

from torchlint.analysis.loops import IterEvent, runs_every_iteration
from torchlint.analysis.model import GuardKind, Kind
from torchlint.diagnostics import Severity
from torchlint.rules.base import Rule, RuleContext

# `if epoch > 0:` / `if step != 0:` / `if i >= 1:`: skips the first iteration, so a step at the
# top of the loop is the previous iteration's step, in the right order.
_SKIPS_FIRST = re.compile(r"(>|!=)\s*0\b|>=\s*1\b")


class SchedulerBeforeOptimizerStep(Rule):
    code = "TL107"
    name = "scheduler-before-optimizer-step"
    family = "loop"
    severity = Severity.WARNING
    summary = "In one iteration, `scheduler.step()` runs before `optimizer.step()`."

    def check(self, ctx: RuleContext) -> None:
        for model in ctx.loops.all:
            events = model.events
            for sched in events:
                if sched.kind is not Kind.SCHEDULER_STEP or self._is_plateau(ctx, sched.receiver):
                    continue
                if sched.event.has_closure:
                    continue  # `scheduler.step(val_loss)`: a metric-driven schedule
                if any(_SKIPS_FIRST.search(g.condition) for g in sched.guards):
                    continue  # `if epoch > 0: scheduler.step()` ends the previous epoch
                related = [
                    e
                    for e in events
                    if e.kind is Kind.STEP and e.related(sched) and not e.exclusive_with(sched)
                ]
                before = [e for e in related if e.index < sched.index]
                after = [e for e in related if e.index > sched.index]
                if not runs_every_iteration(sched):
                    # Under an accumulation guard: only the optimizer steps under the same
                    # guard run at its rate, and their order still matters.
                    window = {id(g.node) for g in sched.own_guards}
                    before = [e for e in before if window <= {id(g.node) for g in e.own_guards}]
                    after = [e for e in after if window <= {id(g.node) for g in e.own_guards}]
                    if before or not after:
                        continue
                if any(_every_iteration(e) for e in before):
                    continue  # the optimizer has stepped by the time the scheduler does
                if after:
                    step = after[0]
                    ctx.report(
                        sched.event.node,
                        f"`{ctx.text(sched.event.node)}`{ctx.where(sched)} runs before "
                        f"`{ctx.text(step.event.node)}` in each iteration of the "
                        f"{model.loop.label}, so the schedule skips its first value (PyTorch "
                        "warns about this order); step the scheduler after the optimizer.",
                    )
                elif before:  # the optimizer steps only under a condition, the scheduler always
                    step = before[0]
                    ctx.report(
                        sched.event.node,
                        f"`{ctx.text(sched.event.node)}`{ctx.where(sched)} runs on every "
                        f"iteration of the {model.loop.label}, but `{ctx.text(step.event.node)}` "
                        "only under a condition (gradient accumulation?), so the schedule runs "
                        "ahead of the optimizer and starts before its first step; step the "
                        "scheduler next to the optimizer.",
                    )

    def _is_plateau(self, ctx: RuleContext, receiver: str | None) -> bool:
        return any(
            obj.target == receiver and obj.qualname.endswith("ReduceLROnPlateau")
            for obj in ctx.facts.constructed
        )


def _every_iteration(e: IterEvent) -> bool:
    return all(g.kind in (GuardKind.RANK, GuardKind.CONFIG) for g in e.own_guards)
