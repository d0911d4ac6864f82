"""TL121: a loop steps an optimizer while nothing in it computes gradients."""

from __future__ import annotations

import libcst as cst

from torchlint.analysis.loops import IterEvent, LoopModel
from torchlint.analysis.model import Kind, Scope
from torchlint.analysis.training import called_name, is_opaque_call, passes_optimizer
from torchlint.diagnostics import Severity
from torchlint.rules.base import Rule, RuleContext

# What, besides a backward, gives the step gradients: gradients written or read by hand (a
# parameter server, an evolution strategy, a manual update) and steps of unknown objects.
_GRADIENT_SOURCES = frozenset((Kind.BACKWARD, Kind.GRAD_WRITE, Kind.GRAD_READ, Kind.MAYBE_STEP))
# Calls we cannot see into that may run the backward themselves.
_SAID = ("backward", ".grad", "autograd")
_BACKWARD_WORDS = ("backward", "grad", "train", "step", "update", "fit", "optim")


class StepWithoutBackward(Rule):
    code = "TL121"
    name = "step-without-backward"
    family = "loop"
    severity = Severity.ERROR
    summary = (
        "A training loop clears the gradients and steps the optimizer, but nothing in it (nor "
        "anything it calls) runs a backward pass: the step applies no gradient."
    )

    def check(self, ctx: RuleContext) -> None:
        models = ctx.loops.all
        covered: set[int] = set()
        for model in models:
            if _gradients_come(ctx, model):
                covered |= model.inner_loops
        for model in models:
            if id(model.loop.node) in covered or model.framework_steps:
                continue
            step = _cleared_step(model)
            if step is None or _gradients_come(ctx, model):
                continue
            if _called_where_gradients_come(ctx, model.loop.scope):
                continue
            loss = _loss_name(ctx, model.loop.scope)
            hint = f"call `{loss}.backward()` before it" if loss else "run a backward pass first"
            ctx.report(
                step.event.node,
                f"`{ctx.text(step.event.node)}` steps on every iteration of the "
                f"{model.loop.label}, which clears the gradients but never computes them: no "
                f"backward pass runs in the loop or in anything it calls, so the step applies "
                f"zero gradients and nothing trains; {hint}.",
            )


def _cleared_step(model: LoopModel) -> IterEvent | None:
    """An unconditional step of an optimizer that the same iteration clears: the shape of a
    training step, whose backward is missing."""
    cleared = {e.receiver for e in model.events if e.kind is Kind.ZERO_GRAD}
    for e in model.events:
        if (
            e.kind is Kind.STEP
            and e.depth == 0
            and not e.event.has_closure
            and e.event.via != "engine"
            and e.receiver in cleared
        ):
            return e
    return None


def _gradients_come(ctx: RuleContext, model: LoopModel) -> bool:
    """Something in the iteration may produce gradients: a backward (a framework's too), a
    gradient set by hand, or a call we cannot see into that is handed the optimizer or is
    named like training."""
    text = ctx.text(model.loop.node)
    if any(word in text for word in _SAID):
        return True  # said in the loop itself: a call of a library we do not model
    for e in model.events:
        if e.kind in _GRADIENT_SOURCES or (e.kind is Kind.STEP and e.event.has_closure):
            return True
        if is_opaque_call(e.event):
            name = called_name(e.event)
            if any(w in name for w in _BACKWARD_WORDS) or passes_optimizer(e.event, ctx.roles):
                return True
    return False


def _called_where_gradients_come(ctx: RuleContext, scope: Scope) -> bool:
    """The loop's function is called by another that may compute gradients (a schedule that
    steps the optimizers of its caller's backward)."""
    for site in ctx.links.callers.get(id(scope), []):
        if site.scope is not scope and "backward" in ctx.text(site.scope.node):
            return True
    return False


def _loss_name(ctx: RuleContext, scope: Scope) -> str | None:
    """A name the loop's function assigns that is called a loss, for the message."""
    key = id(scope.node) if isinstance(scope.node, cst.FunctionDef) else 0
    names = sorted(n for k, n in ctx.facts.sites.assigned if k == key and "loss" in n.lower())
    return "loss" if "loss" in names else (names[0] if names else None)
