"""TL117: gradients accumulated over N micro-batches from a loss that is not divided by N."""

from __future__ import annotations

import re

import libcst as cst

from torchlint.analysis.accumulation import (
    accumulation_guard,
    framework_accumulates,
    manual_steps,
    window_loop,
)
from torchlint.analysis.loops import IterEvent, LoopModel, runs_every_iteration
from torchlint.analysis.model import Kind
from torchlint.analysis.names import dotted
from torchlint.diagnostics import Severity
from torchlint.rules.base import Rule, RuleContext

# The iterable of an inner loop over micro-batches: `range(gradient_accumulation_steps)`,
# `batch.split(micro_batch_size)`, `micro_batches`.
_MICRO_LOOP = re.compile(r"accum|micro|grad_acc|\.split\(|\.chunk\(|torch\.split|torch\.chunk")
# Gradients scaled by hand before the step (`p.grad /= n`, `p.grad.div_(n)`).
_SCALED_GRADS = re.compile(r"\.grad\b[^\n]*(/=|\.div_\(|\.mul_\()")


class AccumulatedLossNotScaled(Rule):
    code = "TL117"
    name = "accumulated-loss-not-scaled"
    family = "loop"
    severity = Severity.WARNING
    summary = (
        "Gradients are accumulated over N micro-batches, but the loss is not divided by N: "
        "the step applies N times the gradient of one batch."
    )

    def check(self, ctx: RuleContext) -> None:
        seen: set[int] = set()
        for model, step in manual_steps(ctx.loops.all):
            if framework_accumulates(model, step):
                continue  # `accelerator.backward` divides by the window itself
            for backward, how in _accumulating_backwards(model, step):
                if id(backward.event) in seen:
                    continue
                loss = _unscaled_loss(ctx, backward)
                if loss is None:
                    continue
                seen.add(id(backward.event))
                ctx.report(
                    backward.event.node,
                    f"`{ctx.text(backward.event.node)}` adds each micro-batch's gradients "
                    f"into `.grad` and `{ctx.text(step.event.node)}` runs only {how}, but "
                    f"`{loss}` is not divided by the number of micro-batches: the step "
                    "applies their sum, N times the mean gradient (N times the learning rate "
                    "under SGD, and a clipping threshold set for one batch's norm); divide "
                    "the loss by the accumulation steps before the backward.",
                )


def _accumulating_backwards(model: LoopModel, step: IterEvent) -> list[tuple[IterEvent, str]]:
    """The backward passes whose gradients add up across micro-batches before `step`, with how
    the step's window is written."""
    guard = accumulation_guard(step)
    if guard is not None and any(
        e.kind is Kind.BACKWARD and e.index < step.index and guard in e.guards for e in model.events
    ):
        # A backward inside the step's own block: the step applies that loss's gradients (a
        # generator or an actor updated every N iterations), while the backward on every
        # iteration feeds another optimizer (the critic's, the discriminator's).
        return []
    found = []
    for backward in model.events:
        if backward.kind is not Kind.BACKWARD or backward.index > step.index:
            continue
        if not backward.related(step) or backward.exclusive_with(step):
            continue
        if not runs_every_iteration(backward):
            continue
        if guard is not None and backward.loop_chain == step.loop_chain:
            if guard not in backward.guards:
                found.append((backward, f"under `if {guard.condition or 'a condition'}:`"))
            continue
        inner = window_loop(model, backward, step)
        if inner is not None and _MICRO_LOOP.search(inner.iter_text):
            found.append((backward, f"after the {inner.label} around them has finished"))
    return found


def _unscaled_loss(ctx: RuleContext, backward: IterEvent) -> str | None:
    """The loss's name when the function that runs `loss.backward()` (or
    `scaler.scale(loss).backward()`) is seen never to divide it (nor the gradients), and every
    value it is assigned comes from a forward or a loss, not from a helper that might divide."""
    if backward.via_call is not None or backward.event.via not in ("tensor", "scaled"):
        return None
    node = backward.event.node
    if type(node) is not cst.Call or type(node.func) is not cst.Attribute:
        return None
    if any(arg.keyword is None for arg in node.args):
        return None  # `optimizer.backward(loss)`: an fp16 optimizer's or engine's own backward
    subject = node.func.value
    if (
        type(subject) is cst.Call
        and subject.args
        and type(subject.func) is cst.Attribute
        and subject.func.attr.value == "scale"
    ):
        subject = subject.args[0].value  # `scaler.scale(loss)`
    if type(subject) is not cst.Name:
        return None  # `(loss / n).backward()`, `(a + b).backward()`
    name = subject.value
    function = backward.event.scope.node
    where = function if isinstance(function, cst.FunctionDef) else None
    values = ctx.facts.sites.values_of(where, name)
    if not values:
        return None
    text = ctx.text(function)
    if _divides(text, name) or _SCALED_GRADS.search(text):
        return None
    for value in values:
        if not _plain_loss(ctx, value):
            return None
    return name


def _divides(text: str, name: str) -> bool:
    """`loss /= n`, `loss *= 1 / n`, or an assignment of `loss` that divides."""
    word = re.escape(name)
    if re.search(rf"\b{word}\s*(/|\*)=", text):
        return True
    return re.search(rf"(^|[\s,(]){word}\s*=[^=\n][^\n]*(/|\.div\()", text, re.M) is not None


def _plain_loss(ctx: RuleContext, value: cst.BaseExpression) -> bool:
    """A value that is a forward's or a loss's result (`model(x, y)`, `criterion(out, y)`,
    `F.cross_entropy(...)`, their sums), not a call of a function of this module or a method
    of `self` whose body may divide, nor a call that is handed the window's size."""
    stack: list[cst.BaseExpression] = [value]
    while stack:
        current = stack.pop()
        if type(current) is cst.Call:
            callee = dotted(current.func) or ""
            if re.search(r"accum|micro", ctx.text(current), re.I):
                return False
            if callee in ctx.facts.sites.functions or (
                callee.startswith("self.") and "." not in callee[5:] and _own_method(callee)
            ):
                return False
        elif type(current) is cst.BinaryOperation:
            stack.extend((current.left, current.right))
        elif type(current) in (cst.Tuple, cst.List):
            stack.extend(e.value for e in current.elements)  # type: ignore[attr-defined]
    return True


def _own_method(callee: str) -> bool:
    """`self.compute_loss(...)`: a method that may scale; `self.model(...)` is a forward."""
    last = callee.rsplit(".", 1)[-1].lower()
    return not any(word in last for word in ("model", "net", "module", "encoder", "decoder"))
