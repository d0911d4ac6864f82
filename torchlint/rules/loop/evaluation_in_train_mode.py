"""TL122: an evaluation loop switches the model to train mode before its forward."""

from __future__ import annotations

import re

from torchlint.analysis.loops import IterEvent, LoopModel, same_object
from torchlint.analysis.model import MODE_SWITCHES, Kind
from torchlint.analysis.training import context, grad_disabled, opaque_training_step
from torchlint.diagnostics import Severity
from torchlint.rules.base import Rule, RuleContext

_TRAINING = (Kind.BACKWARD, Kind.STEP, Kind.MAYBE_STEP, Kind.GRAD_READ, Kind.GRAD_WRITE)

# What says the loop evaluates: the data it iterates or the function it sits in.
_EVALUATION = re.compile(r"val|test|eval|dev_|_dev\b|holdout", re.IGNORECASE)

# Loops that run a model in train mode without gradients on purpose: batch-norm statistics
# recomputed (SWA's `update_bn`), Monte Carlo dropout, test-time adaptation.
_ON_PURPOSE = re.compile(
    r"bn|batch_?norm|running_(mean|var)|momentum|calibrat|recalib|mc_|monte|"
    r"uncertaint|dropout|stochastic|adapt|tta",
    re.IGNORECASE,
)


class EvaluationInTrainMode(Rule):
    code = "TL122"
    name = "evaluation-in-train-mode"
    family = "loop"
    severity = Severity.WARNING
    summary = (
        "An evaluation loop (under `torch.no_grad()`, no backward) sets the model to train "
        "mode before its forward: dropout stays on and batch norm learns from the "
        "evaluation data."
    )

    def check(self, ctx: RuleContext) -> None:
        for model in ctx.loops.all:
            if model.loop.runner or not _evaluates(model):
                continue
            if any(e.kind in _TRAINING or opaque_training_step(e, ctx.roles) for e in model.events):
                continue
            for forward in model.events:
                if forward.kind is not Kind.CALL or forward.event.callee is not None:
                    continue
                target = forward.callee_text
                if target is None or not grad_disabled(context(model, forward)):
                    continue
                switch = _train_switch_before(model, forward)
                if switch is None or _on_purpose(ctx, model):
                    continue
                ctx.report(
                    switch.event.node,
                    f"`{ctx.text(switch.event.node)}`{ctx.where(switch)} puts `{target}` in "
                    f"train mode before its forward `{target}(...)` in each iteration "
                    f"of the {model.loop.label}, which evaluates without gradients: dropout "
                    "stays on (noisy metrics) and batch norm uses and updates its running "
                    "statistics with the evaluation batches; remove it, and call "
                    f"`{target}.eval()` before the loop.",
                )
                break


def _evaluates(model: LoopModel) -> bool:
    """The loop reads evaluation data or sits in an evaluation function."""
    loop = model.loop
    names = [loop.iter_text, *loop.sources]
    if not loop.scope.is_module:
        names.append(loop.scope.name)
    return any(_EVALUATION.search(name) for name in names)


def _on_purpose(ctx: RuleContext, model: LoopModel) -> bool:
    """Something around the loop says that train mode without gradients is meant (batch-norm
    recalibration, MC dropout). Asked last: the loop's text is generated for it."""
    function = model.loop.scope
    if not function.is_module and _ON_PURPOSE.search(function.name):
        return True
    return _ON_PURPOSE.search(ctx.text(model.loop.node)) is not None


def _train_switch_before(model: LoopModel, forward: IterEvent) -> IterEvent | None:
    """The `model.train()` that leaves the forward's module in train mode: the last mode
    switch of that module earlier in the iteration, when it is `train()` (a bare or `True`
    argument)."""
    target = forward.callee_text
    earlier = [
        e
        for e in model.events[: forward.index]
        if e.kind in MODE_SWITCHES and same_object(e.receiver, target)
    ]
    if earlier and earlier[-1].kind is Kind.MODE_TRAIN:
        return earlier[-1]
    return None
