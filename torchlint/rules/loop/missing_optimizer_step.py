"""TL101: a loop computes gradients but nothing ever applies them."""

from __future__ import annotations

from torchlint.analysis.apis import ENGINE_NAME
from torchlint.analysis.lifecycle import Lifecycle, lifecycles, reaches
from torchlint.analysis.loops import LoopModel
from torchlint.analysis.model import Kind, Scope
from torchlint.analysis.training import (
    called_name,
    is_opaque_call,
    may_step,
    mentions_optimizer,
    optimizer_name,
    scope_may_step,
)
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
            if backward is None or id(model.loop.node) in covered or model.framework_steps:
                continue  # (the framework steps after the Trainer's `training_step`)
            if any(may_step(e, ctx.roles) for e in model.events):
                continue
            if scope_may_step(model.loop.scope, ctx.roles, outside=model.loop):
                continue  # e.g. micro-batch backward in a loop, step after it
            if _times_itself(model):
                continue  # a benchmark or profiler timing forward and backward passes
            framework = backward.event.via == "framework"  # its engine owns the optimizer
            if not framework and _schedule_of_a_caller(ctx, model.loop.scope):
                continue  # a micro-batch schedule: the function returns, its caller steps
            optimizer = optimizer_name(ctx.roles, model)
            engine = backward.receiver or ""
            if backward.event.via == "framework" and ENGINE_NAME.search(engine):
                optimizer = engine  # DeepSpeed: `model_engine.step()` steps its optimizer
            ctx.report(
                backward.event.node,
                f"`{ctx.text(backward.event.node)}` computes gradients on every iteration of the "
                f"{model.loop.label}, but no optimizer step runs in the loop or in anything it "
                f"calls; call `{optimizer}.step()` after the backward pass.",
            )
        for model in models:
            self._per_optimizer(ctx, model)

    def _per_optimizer(self, ctx: RuleContext, model: LoopModel) -> None:
        """A loop that steps one optimizer and only clears another whose module its loss
        reaches (a GAN whose discriminator never steps)."""
        lives = lifecycles(model, ctx.roles)
        if not any(s.depth == 0 for life in lives for s in life.steps):
            return
        for life in lives:
            if life.steps or not any(c.depth == 0 for c in life.clears):
                continue
            if self._may_step(ctx, model, life):
                continue
            backward = next(
                (
                    e
                    for e in model.events
                    if e.kind is Kind.BACKWARD and e.depth == 0 and reaches(e, life)
                ),
                None,
            )
            if backward is None:
                continue
            clear = ctx.text(life.clears[0].event.node)
            ctx.report(
                backward.event.node,
                f"`{ctx.text(backward.event.node)}` computes gradients for `{life.name}` (the "
                f"optimizer of `{life.owner}`), which the {model.loop.label} clears with "
                f"`{clear}`, but `{life.name}.step()` never runs in the loop or in anything it "
                "calls while the loop's other optimizer does, so that model never learns; call "
                f"`{life.name}.step()` after the backward pass.",
            )

    def _may_step(self, ctx: RuleContext, model: LoopModel, life: Lifecycle) -> bool:
        """Something we cannot see into may step this optimizer: an unclassified `.step()`, a
        manual update, a call handed the optimizer or named like a step, or a step of it in
        the loop's function after the loop."""
        for e in model.events:
            if e.kind in (Kind.MAYBE_STEP, Kind.GRAD_READ):
                return True
            if is_opaque_call(e.event):
                name = called_name(e.event)
                texts = [*e.event.arg_texts, *(t for _, t in e.event.kwarg_texts)]
                if "step" in name or "optim" in name or life.name in texts:
                    return True
        return scope_may_step(model.loop.scope, ctx.roles, outside=model.loop, named=life.name)


# Library bases that hold no optimizer of the class's own.
_PLAIN_BASES = {"object", "ABC", "abc.ABC", "Protocol", "Generic", "nn.Module", "Module"}
_PLAIN_BASES |= {"torch.nn.Module", "Enum", "NamedTuple"}


def _schedule_of_a_caller(ctx: RuleContext, scope: Scope) -> bool:
    """The loop is a schedule that runs the backward passes of one step and returns (a
    pipeline engine's all-forward-all-backward or 1F1B loop, an accumulation helper): either
    no optimizer is in its reach at all (its function, the enclosing functions, its class and
    the class's bases in this file never name one, and the module builds none), or a caller
    in this file steps after calling it."""
    if scope.is_module:
        return False
    for site in ctx.links.callers.get(id(scope), []):
        if site.scope is not scope and scope_may_step(site.scope, ctx.roles):
            return True
    outer = scope.outermost_function
    texts = [ctx.text(outer.node)]
    if outer.class_name is not None:
        pending, seen = [outer.class_name], set()
        while pending:
            name = pending.pop()
            if name in seen:
                continue
            seen.add(name)
            info = ctx.facts.classes.get(name)
            if info is None:
                if name not in _PLAIN_BASES:
                    return False  # a base of another file may hold `self.optimizer`
                continue
            texts.append(ctx.text(info.node))
            pending.extend(info.bases)
    if any(mentions_optimizer(text) for text in texts):
        return False
    return not any(obj.role == "optimizer" and obj.scope.is_module for obj in ctx.facts.constructed)


def _times_itself(model: LoopModel) -> bool:
    """The loop reads a clock around its work and never clears gradients: it measures how
    long backward takes (a layer profiler), it does not train."""
    kinds = {e.kind for e in model.events}
    return Kind.TIMING in kinds and Kind.ZERO_GRAD not in kinds
