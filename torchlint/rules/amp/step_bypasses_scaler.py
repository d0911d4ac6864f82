"""TL202: after a scaled backward, the optimizer steps on its own, or the scale never updates."""

from __future__ import annotations

from torchlint.analysis.model import Kind
from torchlint.diagnostics import Severity
from torchlint.rules.base import Rule, RuleContext


class StepBypassesScaler(Rule):
    code = "TL202"
    name = "step-bypasses-scaler"
    family = "amp"
    severity = Severity.ERROR
    summary = (
        "After `scaler.scale(loss).backward()`, the loop calls `optimizer.step()` directly "
        "or never calls `scaler.update()`."
    )

    def check(self, ctx: RuleContext) -> None:
        for model in ctx.loops.training:
            events = model.events
            scaled = [e for e in events if e.kind is Kind.BACKWARD and e.event.via == "scaled"]
            if not scaled:
                continue
            scaler = scaled[0].event.scaler or scaled[0].receiver or "scaler"
            for step in events:
                if step.kind is not Kind.STEP or step.event.via != "optimizer":
                    continue
                if not any(
                    b.index < step.index and b.related(step) and not b.exclusive_with(step)
                    for b in scaled
                ):
                    continue
                optimizer = step.receiver or "optimizer"
                ctx.report(
                    step.event.node,
                    f"`{ctx.text(step.event.node)}`{ctx.where(step)} applies gradients that "
                    f"`{scaler}` scaled up, without unscaling them or skipping steps with "
                    f"inf/NaN; call `{scaler}.step({optimizer})` and then `{scaler}.update()`.",
                )
            scaler_steps = [e for e in events if e.kind is Kind.STEP and e.event.via == "scaler"]
            for step in scaler_steps:
                if any(e.kind is Kind.SCALER_UPDATE and e.related(step) for e in events):
                    continue
                name = step.event.scaler or scaler
                ctx.report(
                    step.event.node,
                    f"`{name}.update()` is never called in the {model.loop.label}, so the loss "
                    f"scale never adapts (and stays reduced after an overflow); call "
                    f"`{name}.update()` after `{ctx.text(step.event.node)}`.",
                )
                break
