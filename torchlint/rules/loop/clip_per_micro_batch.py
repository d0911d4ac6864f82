"""TL116: gradients clipped after every micro-batch while the step runs once per window."""

from __future__ import annotations

import libcst as cst

from torchlint.analysis.accumulation import (
    accumulating_context,
    accumulation_guard,
    manual_steps,
    window_loop,
)
from torchlint.analysis.loops import IterEvent, LoopModel, runs_every_iteration
from torchlint.analysis.model import Kind
from torchlint.diagnostics import Severity
from torchlint.rules.base import Rule, RuleContext


class ClipPerMicroBatch(Rule):
    code = "TL116"
    name = "clip-per-micro-batch"
    family = "loop"
    severity = Severity.WARNING
    summary = (
        "`clip_grad_norm_` runs after every micro-batch's backward while the optimizer steps "
        "once per accumulation window, so it clips partial sums instead of the gradient the "
        "step applies."
    )

    def check(self, ctx: RuleContext) -> None:
        seen: set[int] = set()
        for model, step in manual_steps(ctx.loops.all):
            for clip, how in _clips_per_micro_batch(model, step):
                if id(clip.event) in seen:
                    continue
                seen.add(id(clip.event))
                clipped = _call_text(ctx, clip.event.node)
                # At the call through which the loop reaches the clip, unless the clip
                # sits in the function that also steps: then at the clip itself.
                if clip.via_call is None or clip.site is not step.site:
                    at, clip_where, step_where = (
                        clip.site.node,
                        ctx.where(clip),
                        ctx.where(step),
                    )
                else:
                    at, clip_where = clip.event.node, ""
                    step_where = f" (line {ctx.line_of(step.event.node)})"
                ctx.report(
                    at,
                    f"`{clipped}`{clip_where} clips the gradients after every "
                    f"micro-batch's backward, but `{ctx.text(step.event.node)}`"
                    f"{step_where} runs only {how}: each clip rescales a partial sum "
                    "of the accumulated gradients, so the step applies a mix of clipped "
                    "pieces, not the clipped total; clip once, just before the step.",
                )


def _clips_per_micro_batch(model: LoopModel, step: IterEvent) -> list[tuple[IterEvent, str]]:
    guard = accumulation_guard(step)
    window = accumulating_context(model, step)
    found = []
    for clip in model.events:
        if clip.kind is not Kind.CLIP or not clip.related(step) or clip.exclusive_with(step):
            continue
        if not runs_every_iteration(clip) or not _after_backward(model, clip):
            continue
        if window is not None:
            # The prepared optimizer steps when the window closes (`sync_gradients`); a clip
            # outside that guard rescales every micro-batch's partial sum.
            if accumulating_context(model, clip) is window:
                found.append((clip, f"when `{window.text}(...)` closes its window"))
            continue
        if guard is not None and clip.loop_chain == step.loop_chain:
            if guard not in clip.guards:
                found.append((clip, f"under `if {guard.condition or 'a condition'}:`"))
            continue
        inner = window_loop(model, clip, step)
        if inner is not None:
            found.append((clip, f"after the {inner.label} around them has finished"))
    return found


def _after_backward(model: LoopModel, clip: IterEvent) -> bool:
    """A backward pass runs before the clip in the same (innermost) iteration."""
    return any(
        e.kind is Kind.BACKWARD and e.loop_chain == clip.loop_chain and not e.exclusive_with(clip)
        for e in model.events[: clip.index]
    )


def _call_text(ctx: RuleContext, node: cst.CSTNode) -> str:
    """The call as written, or `callee(...)` when it spans several lines."""
    text = ctx.text(node)
    if "\n" in text and isinstance(node, cst.Call):
        return f"{ctx.text(node.func)}(...)"
    return text
