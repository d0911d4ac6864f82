"""TL115: gradients clipped after the optimizer step that used them, and cleared before the next."""

from __future__ import annotations

import libcst as cst

from torchlint.analysis.loops import IterEvent, LoopModel
from torchlint.analysis.model import Kind
from torchlint.diagnostics import Severity
from torchlint.rules.base import Rule, RuleContext
from torchlint.rules.edits import statement_of

_FRESH_GRADIENTS = (Kind.BACKWARD, Kind.GRAD_WRITE)
_BOUNDS = ("max_norm", "clip_value")


class ClipAfterStep(Rule):
    code = "TL115"
    name = "clip-after-step"
    family = "loop"
    severity = Severity.ERROR
    summary = (
        "`clip_grad_norm_` runs after `optimizer.step()` and before the gradients are cleared: "
        "the step already used the unclipped gradients, so the clipping does nothing."
    )

    def check(self, ctx: RuleContext) -> None:
        seen: set[int] = set()
        for model in ctx.loops.all:
            if not model.is_step_loop or not _clears_gradients(model):
                continue
            for clip in model.events:
                if clip.kind is not Kind.CLIP or id(clip.event) in seen:
                    continue
                step = _step_before(model, clip)
                if step is None or not _result_unused(ctx, clip) or _bounded_by_inf(ctx, clip):
                    continue
                seen.add(id(clip.event))
                ctx.report(
                    clip.event.node,
                    f"`{ctx.text(clip.event.node)}`{ctx.where(clip)} runs after "
                    f"`{ctx.text(step.event.node)}`, which has already applied the unclipped "
                    "gradients, and they are cleared before the next step uses them: the "
                    "clipping does nothing; clip between the backward pass and the step.",
                )


def _clears_gradients(model: LoopModel) -> bool:
    """The iteration clears the gradients (before its backward or after its step), so
    clipped gradients left after the step are thrown away."""
    return any(e.kind is Kind.ZERO_GRAD for e in model.events)


def _step_before(model: LoopModel, clip: IterEvent) -> IterEvent | None:
    """The optimizer step that ran just before `clip` in the same iteration, with no fresh
    gradients computed between them and no step after `clip` that could use the clipped
    ones; None otherwise."""
    events = model.events
    step = None
    for e in reversed(events[: clip.index]):
        if not e.related(clip) or e.exclusive_with(clip):
            continue
        if e.kind in _FRESH_GRADIENTS:
            return None  # clipping the gradients of a later backward (another model's)
        if e.kind is Kind.STEP:
            step = e
            break
    if step is None or step.depth != clip.depth:
        return None
    if not _gated_alike(step, clip):
        return None
    for e in events[clip.index + 1 :]:
        if not e.related(clip) or e.exclusive_with(clip):
            continue
        if e.kind in _FRESH_GRADIENTS or e.kind is Kind.ZERO_GRAD:
            break
        if e.kind is Kind.STEP:
            return None  # a second optimizer steps with the clipped gradients
    return step


def _gated_alike(step: IterEvent, clip: IterEvent) -> bool:
    """Every `if` that decides the step decides the clip too: whenever the clip runs, the
    step ran just before it (a clip outside an accumulation guard that gates the step
    clips the partial sums of the other micro-batches, which is another matter)."""
    clip_guards = {(id(g.node), g.branch) for g in clip.guards}
    return all((id(g.node), g.branch) in clip_guards for g in step.guards)


def _result_unused(ctx: RuleContext, clip: IterEvent) -> bool:
    """The clip is a statement of its own: a norm kept (`norm = clip_grad_norm_(...)`) may
    be what the code wants from it, for a log."""
    statement = statement_of(ctx, clip.event.node)
    return isinstance(statement, cst.Expr) and statement.value is clip.event.node


def _bounded_by_inf(ctx: RuleContext, clip: IterEvent) -> bool:
    """`clip_grad_norm_(params, float("inf"))`: measuring the norm, not clipping."""
    node = clip.event.node
    if not isinstance(node, cst.Call):
        return False
    positional = [a for a in node.args if a.keyword is None]
    bounds = positional[1:2] + [
        a for a in node.args if a.keyword is not None and a.keyword.value in _BOUNDS
    ]
    return any("inf" in ctx.text(arg.value) for arg in bounds)
