"""TL122: an evaluation loop switches the model to train mode before its forward."""

from __future__ import annotations

import re

import libcst as cst

from torchlint.analysis.loops import IterEvent, LoopModel, same_object
from torchlint.analysis.model import MODE_SWITCHES, Event, GuardFrame, Kind, Scope
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
        loops = [model for model in ctx.loops.all if _evaluation_loop(ctx, model)]
        for model in loops:
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
        self._left_in_train_mode(ctx, loops)

    def _left_in_train_mode(self, ctx: RuleContext, loops: list[LoopModel]) -> None:
        """An evaluation function that never sets its model's mode, called where the caller has
        just put that model in train mode (`net.train()`, the epoch's batches, `val(net, ...)`)."""
        reported: set[int] = set()
        for model in loops:
            function = model.loop.scope
            if function.is_module or any(e.kind in MODE_SWITCHES for e in function.events):
                continue  # the function sets a mode itself
            target = _evaluated_parameter(model, function)
            if target is None or _on_purpose(ctx, model):
                continue
            if isinstance(function.node, cst.FunctionDef) and ctx.facts.sites.values_of(
                function.node, target
            ):
                continue  # `vae = AutoencoderKL.from_pretrained(...)`: maybe not the caller's
            for site in ctx.links.callers.get(id(function), []):
                switch = _mode_at_call(site, function, target)
                if switch is None or id(site.node) in reported:
                    continue
                reported.add(id(site.node))
                call = ctx.text(site.node)
                argument = _argument(site, function, target)
                ctx.report(
                    site.node,
                    f"`{call}` runs the evaluation loop of `{function.name}` (under no_grad, "
                    f"no backward) on `{argument}`, which `{ctx.text(switch.node)}` at line "
                    f"{ctx.line_of(switch.node)} left in train mode, and `{function.name}` "
                    "never switches it: dropout stays on (noisy metrics) and batch norm uses "
                    "and updates its running statistics with the evaluation batches; call "
                    f"`{target}.eval()` in `{function.name}` (and `train()` again after it).",
                )


def _evaluation_loop(ctx: RuleContext, model: LoopModel) -> bool:
    """A loop that evaluates (by its data or its function's name) and does no training."""
    if model.loop.runner or not _evaluates(model):
        return False
    return not any(e.kind in _TRAINING or opaque_training_step(e, ctx.roles) for e in model.events)


def _evaluated_parameter(model: LoopModel, function: Scope) -> str | None:
    """The parameter of `function` whose forward the loop runs without gradients."""
    for forward in model.events:
        if forward.kind is not Kind.CALL or forward.event.callee is not None:
            continue
        target = forward.callee_text
        in_params = target in function.params and target != "self"
        if in_params and grad_disabled(context(model, forward)):
            return target
    return None


def _argument(site: Event, function: Scope, param: str) -> str | None:
    """What the call passes for `param` of `function`, as written."""
    index = function.params.index(param)
    if function.class_name is not None and site.callee_ref[:1] != ("name",):
        index -= 1  # `self.validate(model)`: the arguments start after `self`
    if 0 <= index < len(site.arg_texts) and site.arg_texts[index]:
        return site.arg_texts[index]
    return dict(site.kwarg_texts).get(param) or None


def _mode_at_call(site: Event, function: Scope, param: str) -> Event | None:
    """The `train()` that is the last mode switch, before the call in the caller's code, of
    the object the call passes for `param` (not under a condition the call is not under)."""
    argument = _argument(site, function, param)
    if argument is None:
        return None
    events = site.scope.events
    position = next((i for i, e in enumerate(events) if e is site), None)
    if position is None:
        return None
    for earlier in reversed(events[:position]):
        if earlier.kind in MODE_SWITCHES and same_object(earlier.receiver, argument):
            if earlier.kind is not Kind.MODE_TRAIN:
                return None
            around = {id(f) for f in site.path}
            guarded = any(isinstance(f, GuardFrame) and id(f) not in around for f in earlier.path)
            return None if guarded else earlier
    return None


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
