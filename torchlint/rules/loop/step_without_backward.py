"""TL121: a training loop steps its optimizer but nothing ever computes gradients."""

from __future__ import annotations

import re

from torchlint.analysis.loops import IterEvent, LoopModel
from torchlint.analysis.model import Kind, Scope
from torchlint.analysis.training import (
    called_name,
    is_opaque_call,
    iterates_steps,
    passes_optimizer,
)
from torchlint.diagnostics import Severity
from torchlint.rules.base import Rule, RuleContext

# Text that says gradients come from somewhere: a backward pass under any name, gradients
# read or set by hand, `torch.autograd.grad`, a closure handed to the step.
_GRADIENT_TEXT = re.compile(r"backward|backprop|\.grad\b|autograd|closure")

_COMMENT = re.compile(r"#[^\n]*")


def _speaks_of_gradients(text: str) -> bool:
    """Whether code (comments aside: `# backprop` over a forgotten backward says nothing)
    names a source of gradients."""
    return _GRADIENT_TEXT.search(_COMMENT.sub("", text)) is not None


# Calls we cannot see into that may run the backward pass themselves.
_TRAINING_WORDS = ("backward", "backprop", "train", "step", "update", "grad", "fit", "optim")

# Calls handed the optimizer that only set its learning rate or save it.
_BOOKKEEPING = re.compile(r"^(adjust|set|warm|decay|log|save|load)|lr|learning_rate|schedul")

# Events that produce or use gradients, or an update we cannot classify.
_GRADIENT_KINDS = frozenset(
    (Kind.BACKWARD, Kind.GRAD_READ, Kind.GRAD_WRITE, Kind.MAYBE_STEP, Kind.SCALER_UNSCALE)
)


class StepWithoutBackward(Rule):
    code = "TL121"
    name = "step-without-backward"
    family = "loop"
    severity = Severity.ERROR
    summary = (
        "A training loop steps its optimizer on every iteration, but no backward pass runs in "
        "it or in anything it calls: the step applies no gradients and the model never learns."
    )

    def check(self, ctx: RuleContext) -> None:
        file_silent: bool | None = None  # the whole file never speaks of gradients
        for model in ctx.loops.all:
            step = _unconditional_step(model)
            if step is None or not iterates_steps(model):
                continue
            if any(e.kind in _GRADIENT_KINDS for e in model.events):
                continue
            if any(_may_train(e, ctx) for e in model.events):
                continue
            if not _clears(model, step):
                if file_silent is None:
                    file_silent = not _speaks_of_gradients(ctx.facts.parsed.text)
                if not file_silent:
                    continue
            if _gradients_elsewhere(ctx, model.loop.scope, model):
                continue
            optimizer = step.receiver or "optimizer"
            ctx.report(
                step.event.node,
                f"`{ctx.text(step.event.node)}`{ctx.where(step)} runs on every iteration of "
                f"the {model.loop.label}, but nothing in the loop or in anything it calls runs "
                f"a backward pass, so `{optimizer}` has no gradients to apply and the model "
                "never learns; call `loss.backward()` before the step.",
            )


def _unconditional_step(model: LoopModel) -> IterEvent | None:
    for e in model.events:
        if (
            e.kind is Kind.STEP
            and e.depth == 0
            and e.is_unconditional
            and not e.event.has_closure
            and e.event.via in ("optimizer", "scaler")
        ):
            return e
    return None


def _may_train(e: IterEvent, ctx: RuleContext) -> bool:
    """A call we cannot see into that may compute gradients (`trainer.train_step(batch)`,
    `loss_scaler(loss, optimizer)`), or that is handed the optimizer."""
    if not is_opaque_call(e.event):
        return False
    name = called_name(e.event)
    if any(w in name for w in _TRAINING_WORDS):
        return True
    return passes_optimizer(e.event, ctx.roles) and _BOOKKEEPING.search(name) is None


def _clears(model: LoopModel, step: IterEvent) -> bool:
    """The iteration clears the stepped optimizer's gradients (without that, the loop counts
    as training only in a file that never speaks of gradients at all: a loss computed and
    logged, the backward line forgotten)."""
    return any(e.kind is Kind.ZERO_GRAD and e.receiver == step.receiver for e in model.events)


def _gradients_elsewhere(ctx: RuleContext, scope: Scope, model: LoopModel) -> bool:
    """The text around the loop (its outermost function, or the loop at module level) or a
    caller of its function speaks of gradients: the backward may be out of our sight (a hook,
    a method of the same class the loop's events do not reach)."""
    outer = scope.outermost_function
    node = model.loop.node if outer.is_module else outer.node
    if _speaks_of_gradients(ctx.text(node)):
        return True
    if outer.class_name is not None:
        info = ctx.facts.classes.get(outer.class_name)
        if info is not None and _speaks_of_gradients(ctx.text(info.node)):
            return True
    for site in ctx.links.callers.get(id(outer), []):
        if not site.scope.is_module and _speaks_of_gradients(ctx.text(site.scope.node)):
            return True
    return False
