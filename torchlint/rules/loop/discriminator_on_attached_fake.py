"""TL120: the discriminator's loss backpropagates into the generator through an attached fake."""

from __future__ import annotations

import libcst as cst

from torchlint.analysis.loops import IterEvent, LoopModel
from torchlint.analysis.model import Kind
from torchlint.analysis.names import dotted
from torchlint.diagnostics import Severity
from torchlint.rules.base import Rule, RuleContext


class DiscriminatorOnAttachedFake(Rule):
    code = "TL120"
    name = "discriminator-on-attached-fake"
    family = "loop"
    severity = Severity.WARNING
    summary = (
        "The discriminator's loss is computed on the generator's output without `.detach()`: "
        "its backward also runs through the generator and writes the generator's gradients."
    )

    def check(self, ctx: RuleContext) -> None:
        seen: set[int] = set()
        for model in ctx.loops.all:
            for backward in model.events:
                if backward.kind is not Kind.BACKWARD or id(backward.event) in seen:
                    continue
                found = _upstream_of_step(ctx, model, backward)
                if found is None:
                    continue
                step, owner, upstream, fake = found
                seen.add(id(backward.event))
                ctx.report(
                    backward.event.node,
                    f"`{ctx.text(backward.event.node)}` computes the "
                    f"gradients for `{ctx.text(step.event.node)}`, which trains `{owner}`, but "
                    f"its loss reads `{owner}({fake})` with `{fake}` made by `{upstream}` and "
                    "not detached: "
                    f"the backward also runs through `{upstream}` (a wasted pass) and adds this "
                    f"loss's gradients to `{upstream}`'s, which only a clear before its own "
                    f"backward throws away; pass `{fake}.detach()` to `{owner}`.",
                )


def _upstream_of_step(
    ctx: RuleContext, model: LoopModel, backward: IterEvent
) -> tuple[IterEvent, str, str, str] | None:
    """For a backward whose next step trains module D: a module G in the backward's reach that
    has an optimizer of its own, stepped in the loop, and whose output the function feeds to D
    attached. The step, D, G and the fed value as written; None otherwise."""
    step = _next_step(model, backward)
    if step is None:
        return None
    owner = ctx.roles.optimizer_owner(step.receiver)
    if owner is None or owner not in backward.reach:
        return None
    stepped = {e.receiver for e in model.events if e.kind is Kind.STEP}
    function = backward.event.scope.node
    for other in sorted(backward.reach - {owner}):
        trained = [o for o in stepped if o is not None and ctx.roles.optimizer_owner(o) == other]
        if not trained or any(_fed_by(model, backward, o) for o in trained):
            continue  # one loss trains both (an encoder and its head): the gradients are wanted
        fake = _fed_attached(ctx, function, owner, other, backward.event.node)
        if fake is not None:
            return step, owner, other, fake
    return None


def _next_step(model: LoopModel, backward: IterEvent) -> IterEvent | None:
    """The optimizer step that follows the backward, before any other backward."""
    for e in model.events[backward.index + 1 :]:
        if not e.related(backward) or e.exclusive_with(backward):
            continue
        if e.kind is Kind.BACKWARD:
            return None
        if e.kind is Kind.STEP:
            return e
    return None


def _fed_by(model: LoopModel, backward: IterEvent, optimizer: str) -> bool:
    """Whether a step of `optimizer` in the iteration uses this backward's gradients: the last
    backward before it is this one."""
    last: IterEvent | None = None
    for e in model.events:
        if e.kind is Kind.BACKWARD:
            last = e
        elif e.kind is Kind.STEP and e.receiver == optimizer and last is backward:
            return True
    return False


def _fed_attached(
    ctx: RuleContext, function: cst.CSTNode, consumer: str, producer: str, before: cst.CSTNode
) -> str | None:
    """A call `consumer(x)` in the function, before the backward `before`, where `x` is
    `producer(...)` itself or a name the function assigns from `producer(...)`: `x` as
    written; else None. This gives the direction
    (the producer feeds the consumer); whether the value is still attached where the loss
    reads it is the backward's reach."""
    where = function if isinstance(function, cst.FunctionDef) else None
    for site in ctx.facts.sites.calls:
        if site.call is before:
            break  # only what the loss can read: the calls before its backward
        if site.function is not where or site.callee != consumer:
            continue
        for arg in site.call.args:
            value = arg.value
            if type(value) is cst.Call and dotted(value.func) == producer:
                return ctx.text(value)
            if type(value) is cst.Name:
                assigned = ctx.facts.sites.values_of(where, value.value)
                if any(type(v) is cst.Call and dotted(v.func) == producer for v in assigned):
                    return value.value
    return None
