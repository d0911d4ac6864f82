"""TL201: a GradScaler is in use but the loss is backpropagated without scaling."""

from __future__ import annotations

import libcst as cst

from torchlint.analysis.loops import IterEvent, LoopModel
from torchlint.analysis.model import Kind
from torchlint.analysis.training import uses_autocast
from torchlint.diagnostics import Fix, Severity
from torchlint.rules.base import Rule, RuleContext

_SCALER_EVENTS = (Kind.SCALER_UPDATE, Kind.SCALER_UNSCALE)


def _scale_fix(ctx: RuleContext, e: IterEvent, scaler: str) -> Fix | None:
    """`loss.backward()` -> `scaler.scale(loss).backward()`."""
    call = e.event.node
    if e.via_call is not None or not isinstance(call, cst.Call):
        return None  # the scaler's name belongs to the loop's scope, not the helper's
    if not isinstance(call.func, cst.Attribute):
        return None
    loss = call.func.value
    return ctx.fix(
        "unsafe",
        f"Scale the loss with `{scaler}`",
        ctx.replace(loss, f"{scaler}.scale({ctx.text(loss)})"),
    )


def _uses_scaler(e: IterEvent) -> bool:
    return e.kind in _SCALER_EVENTS or (e.kind is Kind.STEP and e.event.via == "scaler")


class UnscaledBackward(Rule):
    code = "TL201"
    name = "unscaled-backward"
    family = "amp"
    severity = Severity.ERROR
    fixable = True
    summary = (
        "A GradScaler is in use and the loop calls `loss.backward()` instead of "
        "`scaler.scale(loss).backward()`."
    )

    def check(self, ctx: RuleContext) -> None:
        for model in ctx.loops.training:
            events = model.events
            for e in events:
                if e.kind is not Kind.BACKWARD or e.event.via != "tensor":
                    continue
                related = [other for other in events if other.related(e)]
                if any(o.kind is Kind.BACKWARD and o.event.via == "scaled" for o in related):
                    continue  # scaled in another branch: this is the non-AMP path
                scaler = next(
                    (o.event.scaler for o in related if o.event.scaler and _uses_scaler(o)), None
                )
                if scaler is None and uses_autocast(model):
                    # A scaler the loop never touches counts only where the loop runs
                    # autocast: an fp32 loop beside an AMP one in the same file needs none.
                    scaler = self._scaler_in_scope(ctx, model)
                if scaler is None:
                    continue
                ctx.report(
                    e.event.node,
                    f"`{ctx.text(e.event.node)}`{ctx.where(e)} backpropagates an unscaled loss "
                    f"although the GradScaler `{scaler}` is in use, so small float16 gradients "
                    f"underflow to zero; call `{scaler}.scale({e.event.subject or 'loss'})"
                    ".backward()`.",
                    fix=_scale_fix(ctx, e, scaler),
                )

    def _scaler_in_scope(self, ctx: RuleContext, model: LoopModel) -> str | None:
        """A GradScaler built (and not disabled) where the loop can see it: before the loop in
        its own function or at module level, or in its class (`self.scaler`)."""
        scope = model.loop.scope
        for obj in ctx.facts.constructed:
            if obj.role != "scaler" or obj.enabled is False:
                continue
            if obj.scope is scope or obj.scope.is_module:
                if obj.order < model.loop.order:
                    return obj.target
                continue
            if (
                obj.target.startswith("self.")
                and scope.class_name is not None
                and obj.scope.class_name == scope.class_name
            ):
                return obj.target
        return None
