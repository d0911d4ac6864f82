"""TL203: gradients are clipped while still multiplied by the loss scale."""

from __future__ import annotations

from torchlint.analysis.model import Kind
from torchlint.diagnostics import Severity
from torchlint.rules.base import Rule, RuleContext


class ClipWithoutUnscale(Rule):
    code = "TL203"
    confirmed_by = ("TLR308",)  # a run measures it at the same line
    name = "clip-without-unscale"
    family = "amp"
    severity = Severity.ERROR
    summary = (
        "`clip_grad_norm_` / `clip_grad_value_` on scaled gradients without "
        "`scaler.unscale_(optimizer)` before it."
    )

    def check(self, ctx: RuleContext) -> None:
        for model in ctx.loops.training:
            events = model.events
            for clip in events:
                if clip.kind is not Kind.CLIP:
                    continue
                scaled = [
                    b
                    for b in events[: clip.index]
                    if b.kind is Kind.BACKWARD
                    and b.event.via == "scaled"
                    and b.related(clip)
                    and not b.exclusive_with(clip)
                ]
                if not scaled:
                    continue
                backward = scaled[-1]
                # An unscale between the backward and the clip, in the clip's line of loops or
                # in a loop of its own that finished before the clip's (`for opt in optimizers:
                # scaler.unscale_(opt)`, then `for opt in optimizers: clip_grad_norm_(...)`):
                # sibling loops over the same objects run as one sequence per element.
                unscaled = any(
                    e.kind is Kind.SCALER_UNSCALE
                    and (e.related(clip) or e.related(backward))
                    and not e.exclusive_with(clip)
                    for e in events[backward.index : clip.index]
                )
                if unscaled:
                    continue
                scaler = backward.event.scaler or "scaler"
                ctx.report(
                    clip.event.node,
                    f"`{ctx.text(clip.event.node)}`{ctx.where(clip)} clips gradients that "
                    f"`{scaler}` has multiplied by the loss scale (often 65536), so the threshold "
                    f"is meaningless and clipping fires on every step; call "
                    f"`{scaler}.unscale_(optimizer)` before clipping.",
                )
