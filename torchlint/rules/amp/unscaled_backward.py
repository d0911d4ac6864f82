"""TL201: a GradScaler is in use but the loss is backpropagated without scaling."""

from __future__ import annotations

import libcst as cst

from torchlint.analysis.loops import IterEvent
from torchlint.analysis.model import Kind
from torchlint.analysis.training import uses_autocast, visible_scaler
from torchlint.diagnostics import Fix, Severity
from torchlint.rules.base import Rule, RuleContext
from torchlint.rules.edits import insert_line_after, statement_of

_SCALER_EVENTS = (Kind.SCALER_UPDATE, Kind.SCALER_UNSCALE)


def _scale_fix(ctx: RuleContext, e: IterEvent, scaler: str, events: list[IterEvent]) -> Fix | None:
    """`loss.backward()` -> `scaler.scale(loss).backward()`, and the optimizer steps after it
    through the scaler (`scaler.step(optimizer)`, then one `scaler.update()`): a scaled loss
    stepped directly would apply gradients still multiplied by the scale (TL202)."""
    call = e.event.node
    if e.via_call is not None or not isinstance(call, cst.Call):
        return None  # the scaler's name belongs to the loop's scope, not the helper's
    if not isinstance(call.func, cst.Attribute):
        return None
    loss = call.func.value
    edits = [ctx.replace(loss, f"{scaler}.scale({ctx.text(loss)})")]
    steps = [
        o
        for o in events
        if o.kind is Kind.STEP and o.index > e.index and o.related(e) and not o.exclusive_with(e)
    ]
    direct = [o for o in steps if o.event.via == "optimizer"]
    for step in direct:
        node = step.event.node
        if step.via_call is not None or not isinstance(node, cst.Call) or node.args:
            return None
        if not isinstance(node.func, cst.Attribute):
            return None
        edits.append(ctx.replace(node, f"{scaler}.step({ctx.text(node.func.value)})"))
    updated = any(o.kind is Kind.SCALER_UPDATE and o.related(e) for o in events)
    if direct and not updated:
        statement = statement_of(ctx, steps[-1].event.node)
        insert = insert_line_after(ctx, statement, f"{scaler}.update()") if statement else None
        if insert is None:
            return None
        edits.append(insert)
    return ctx.fix("unsafe", f"Scale the loss with `{scaler}`", *edits)


def _uses_scaler(e: IterEvent) -> bool:
    return e.kind in _SCALER_EVENTS or (e.kind is Kind.STEP and e.event.via == "scaler")


class UnscaledBackward(Rule):
    code = "TL201"
    confirmed_by = ("TLR306",)  # a run measures it at the same line
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
                    scaler = visible_scaler(ctx.facts, model)
                if scaler is None:
                    continue
                ctx.report(
                    e.event.node,
                    f"`{ctx.text(e.event.node)}`{ctx.where(e)} backpropagates an unscaled loss "
                    f"although the GradScaler `{scaler}` is in use, so small float16 gradients "
                    f"underflow to zero; call `{scaler}.scale({e.event.subject or 'loss'})"
                    ".backward()`.",
                    fix=_scale_fix(ctx, e, scaler, events),
                )
