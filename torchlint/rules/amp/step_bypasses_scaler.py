"""TL202: after a scaled backward, the optimizer steps on its own, or the scale never updates."""

from __future__ import annotations

import libcst as cst

from torchlint.analysis.loops import IterEvent
from torchlint.analysis.model import Kind
from torchlint.diagnostics import Fix, Severity
from torchlint.rules.base import Rule, RuleContext
from torchlint.rules.edits import insert_line_after, statement_of


class StepBypassesScaler(Rule):
    code = "TL202"
    confirmed_by = ("TLR307",)  # a run measures it at the same line
    name = "step-bypasses-scaler"
    family = "amp"
    severity = Severity.ERROR
    fixable = True
    summary = (
        "After `scaler.scale(loss).backward()`, the loop calls `optimizer.step()` directly "
        "or never calls `scaler.update()`."
    )

    def check(self, ctx: RuleContext) -> None:
        for model in ctx.loops.training:
            events = model.events
            scaled = [
                e
                for e in events
                if e.kind is Kind.BACKWARD
                and e.event.via == "scaled"
                and not _owned_by_another_object(_scaler_of(e))
            ]
            if not scaled:
                continue
            scaler = _scaler_of(scaled[0])
            for step in events:
                if step.kind is not Kind.STEP or step.event.via != "optimizer":
                    continue
                if not any(
                    b.index < step.index and b.related(step) and not b.exclusive_with(step)
                    for b in scaled
                ):
                    continue
                optimizer = step.receiver or "optimizer"
                # One `scaler.update()` per iteration, after the last step (two optimizers share
                # one scale): add it only at the last step when the iteration has none.
                later_steps = any(
                    e.kind is Kind.STEP and e.index > step.index and e.related(step) for e in events
                )
                updated = later_steps or any(
                    e.kind is Kind.SCALER_UPDATE and e.related(step) for e in events
                )
                ctx.report(
                    step.event.node,
                    f"`{ctx.text(step.event.node)}`{ctx.where(step)} applies gradients that "
                    f"`{scaler}` scaled up, without unscaling them or skipping steps with "
                    f"inf/NaN; call `{scaler}.step({optimizer})` and then `{scaler}.update()`.",
                    fix=self._step_fix(ctx, step, scaler, updated),
                )
            scaler_steps = [e for e in events if e.kind is Kind.STEP and e.event.via == "scaler"]
            for step in reversed(scaler_steps):  # the last one: update once, after all steps
                if any(e.kind is Kind.SCALER_UPDATE and e.related(step) for e in events):
                    continue
                name = step.event.scaler or scaler
                ctx.report(
                    step.event.node,
                    f"`{name}.update()` is never called in the {model.loop.label}, so the loss "
                    f"scale never adapts (and stays reduced after an overflow); call "
                    f"`{name}.update()` after `{ctx.text(step.event.node)}`.",
                    fix=self._update_fix(ctx, step, name),
                )
                break

    def _step_fix(
        self, ctx: RuleContext, step: IterEvent, scaler: str, updated: bool
    ) -> Fix | None:
        """`optimizer.step()` -> `scaler.step(optimizer)`, plus `scaler.update()` if missing."""
        call = step.event.node
        if step.via_call is not None or not isinstance(call, cst.Call) or call.args:
            return None
        if not isinstance(call.func, cst.Attribute):
            return None
        optimizer = ctx.text(call.func.value)
        edits = [ctx.replace(call, f"{scaler}.step({optimizer})")]
        if not updated:
            statement = statement_of(ctx, call)
            insert = insert_line_after(ctx, statement, f"{scaler}.update()") if statement else None
            if insert is None:
                return None
            edits.append(insert)
        return ctx.fix("unsafe", f"Step through `{scaler}`", *edits)

    def _update_fix(self, ctx: RuleContext, step: IterEvent, scaler: str) -> Fix | None:
        if step.via_call is not None:
            return None
        statement = statement_of(ctx, step.event.node)
        insert = insert_line_after(ctx, statement, f"{scaler}.update()") if statement else None
        if insert is None:
            return None
        return ctx.fix("unsafe", f"Call `{scaler}.update()` after the step", insert)


def _scaler_of(backward: IterEvent) -> str:
    """The scaler of a scaled backward, in the loop's terms: `accelerator.scaler` for
    `self.scaler.scale(loss).backward()` inside `accelerator.backward(loss)`."""
    receiver = backward.receiver or ""
    if ".scale(" in receiver:
        return receiver.split(".scale(", 1)[0]
    return backward.event.scaler or receiver or "scaler"


def _owned_by_another_object(scaler: str) -> bool:
    """`accelerator.scaler`: the scaler of an object the loop hands its backward to (a
    framework's accelerator or engine), which then also wraps the optimizer it prepared, so
    a plain-looking `optimizer.step()` goes through the scaler."""
    head, dot, _ = scaler.partition(".")
    return bool(dot) and head != "self"
