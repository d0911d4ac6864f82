"""TL201: a GradScaler is in use but the loss is backpropagated without scaling."""

from __future__ import annotations

from torchlint.analysis.model import Kind, Scope
from torchlint.analysis.training import uses_autocast
from torchlint.diagnostics import Severity
from torchlint.rules.base import Rule, RuleContext

_SCALER_EVENTS = (Kind.SCALER_UPDATE, Kind.SCALER_UNSCALE)


class UnscaledBackward(Rule):
    code = "TL201"
    name = "unscaled-backward"
    family = "amp"
    severity = Severity.ERROR
    summary = (
        "A GradScaler is in use and the loop calls `loss.backward()` instead of "
        "`scaler.scale(loss).backward()`."
    )

    def check(self, ctx: RuleContext) -> None:
        for model in ctx.loops.training:
            events = model.events
            if any(e.kind is Kind.BACKWARD and e.event.via == "scaled" for e in events):
                continue  # scaled somewhere: plain backward is the non-AMP branch
            plain = [e for e in events if e.kind is Kind.BACKWARD and e.event.via == "tensor"]
            if not plain:
                continue
            scaler = next(
                (
                    e.event.scaler
                    for e in events
                    if e.event.scaler
                    and (
                        e.kind in _SCALER_EVENTS
                        or (e.kind is Kind.STEP and e.event.via == "scaler")
                    )
                ),
                None,
            )
            if scaler is None and uses_autocast(model):
                # A scaler the loop never touches counts only where the loop runs autocast:
                # an fp32 loop beside an AMP one in the same file needs no scaling.
                scaler = self._scaler_in_scope(ctx, model.loop.scope)
            if scaler is None:
                continue
            for e in plain:
                ctx.report(
                    e.event.node,
                    f"`{ctx.text(e.event.node)}`{ctx.where(e)} backpropagates an unscaled loss "
                    f"although the GradScaler `{scaler}` is in use, so small float16 gradients "
                    f"underflow to zero; call `{scaler}.scale({e.event.subject or 'loss'})"
                    ".backward()`.",
                )

    def _scaler_in_scope(self, ctx: RuleContext, scope: Scope) -> str | None:
        """A GradScaler built (and not disabled) where the loop can see it: in the loop's own
        function, in its class (`self.scaler`), or at module level."""
        for obj in ctx.facts.constructed:
            if obj.role != "scaler" or obj.enabled is False:
                continue
            same_function = obj.scope is scope
            same_class = (
                obj.target.startswith("self.")
                and scope.class_name is not None
                and obj.scope.class_name == scope.class_name
            )
            if same_function or same_class or obj.scope.is_module:
                return obj.target
        return None
