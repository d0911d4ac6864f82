"""TL102: gradients accumulate across iterations because nothing clears them."""

from __future__ import annotations

from torchlint.analysis.lifecycle import Lifecycle, clears_module, lifecycles, reaches
from torchlint.analysis.loops import LoopModel
from torchlint.analysis.model import Kind
from torchlint.analysis.training import first, is_opaque_call, may_clear
from torchlint.diagnostics import Severity
from torchlint.rules.base import Rule, RuleContext


class MissingZeroGrad(Rule):
    code = "TL102"
    name = "missing-zero-grad"
    family = "loop"
    severity = Severity.ERROR
    summary = "A loop with backward and optimizer step never clears the gradients."

    def check(self, ctx: RuleContext) -> None:
        for model in ctx.loops.all:
            step = next((e for e in model.events if e.kind is Kind.STEP and e.depth == 0), None)
            backward = first(model.events, Kind.BACKWARD)
            if step is None or backward is None:
                continue
            if any(may_clear(e, ctx.roles) for e in model.events):
                self._per_optimizer(ctx, model)
                continue
            optimizer = step.receiver or "optimizer"
            ctx.report(
                backward.event.node,
                f"Gradients are never cleared in the {model.loop.label}, so each "
                f"`{ctx.text(step.event.node)}`{ctx.where(step)} applies the sum of all "
                "previous iterations' "
                f"gradients; call `{optimizer}.zero_grad()` before "
                f"`{ctx.text(backward.event.node)}`.",
            )

    def _per_optimizer(self, ctx: RuleContext, model: LoopModel) -> None:
        """The loop clears one optimizer's gradients and steps another, whose module its loss
        reaches, without ever clearing that one (a GAN's discriminator)."""
        lives = lifecycles(model, ctx.roles)
        for life in lives:
            step = next((s for s in life.steps if s.depth == 0), None)
            if step is None or life.clears or self._may_clear(model, life):
                continue
            cleared = next((other for other in lives if other.clears), None)
            backward = next(
                (e for e in model.events if e.kind is Kind.BACKWARD and reaches(e, life)), None
            )
            if cleared is None or backward is None:
                continue
            ctx.report(
                backward.event.node,
                f"The gradients of `{life.name}` (the optimizer of `{life.owner}`) are never "
                f"cleared in the {model.loop.label}: `{ctx.text(cleared.clears[0].event.node)}` "
                f"clears only its own, so each `{ctx.text(step.event.node)}`{ctx.where(step)} "
                "applies the sum of all previous iterations' gradients; call "
                f"`{life.name}.zero_grad()` before `{ctx.text(backward.event.node)}`.",
            )

    def _may_clear(self, model: LoopModel, life: Lifecycle) -> bool:
        """A clear of the optimizer's module (or of the whole model), or a call we cannot see
        into that may clear it (handed the optimizer, or named like a clear). A DeepSpeed
        engine's step clears its own gradients."""
        if any(s.event.via == "engine" for s in life.steps):
            return True
        for e in model.events:
            if clears_module(e, life):
                return True
            if is_opaque_call(e.event):
                name = (e.event.method or "").lower()
                texts = [*e.event.arg_texts, *(t for _, t in e.event.kwarg_texts)]
                if any(w in name for w in ("zero", "clear", "reset")) or life.name in texts:
                    return True
        return False
