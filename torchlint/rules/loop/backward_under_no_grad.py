"""TL110: backward on a value computed with gradients turned off."""

from __future__ import annotations

from torchlint.analysis.loops import IterEvent
from torchlint.analysis.model import Event, GuardFrame, Kind
from torchlint.analysis.training import called_only_without_grad, context, grad_disabled
from torchlint.diagnostics import Severity
from torchlint.rules.base import Rule, RuleContext


class BackwardUnderNoGrad(Rule):
    code = "TL110"
    name = "backward-under-no-grad"
    family = "loop"
    severity = Severity.ERROR
    summary = (
        "Backward on a value computed inside `torch.no_grad()` / `inference_mode()` or under a "
        "function decorated with them."
    )

    def check(self, ctx: RuleContext) -> None:
        for scope in ctx.facts.scopes:
            for event in scope.events:
                if event.kind is not Kind.BACKWARD or event.via == "framework":
                    continue
                if (
                    event.subject_no_grad
                    or grad_disabled(event.path)
                    or called_only_without_grad(scope, ctx.links.callers)
                ):
                    self._report(ctx, event)
        for model in ctx.loops.all:  # gradients turned off around the loop or by a caller
            for e in model.events:
                is_backward = e.kind is Kind.BACKWARD and e.event.via != "framework"
                if is_backward and grad_disabled(context(model, e)) and not _optional(e):
                    self._report(ctx, e.event)

    def _report(self, ctx: RuleContext, event: Event) -> None:
        shown = event.subject
        if event.via == "tensor" and event.receiver and "(" in event.receiver:
            shown = event.receiver  # `torch.sum(losses).backward()` runs on the sum, not `torch`
        subject = f"`{shown}`" if shown else "its input"
        ctx.report(
            event.node,
            f"`{ctx.text(event.node)}` runs on {subject}, computed with gradients turned off "
            "(`torch.no_grad()`, `inference_mode()` or a decorated function), so there is no "
            "graph to go back through and it raises at run time; compute the loss with "
            "gradients enabled.",
        )


def _optional(e: IterEvent) -> bool:
    """A backward that the functions the loop calls run only under a condition (`if self.opt
    is not None:` around it, or `if self._model.training:` around the call of the helper that
    holds it): code shared by training and evaluation, which the evaluation path calls under
    `no_grad` with the backward switched off."""
    if e.via_call is None:
        return False
    if any(isinstance(f, GuardFrame) for f in e.event.path):
        return True
    in_loop_scope = {id(f.node) for f in e.site.path if isinstance(f, GuardFrame)}
    return any(isinstance(f, GuardFrame) and id(f.node) not in in_loop_scope for f in e.frames)
