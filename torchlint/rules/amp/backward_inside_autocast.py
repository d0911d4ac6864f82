"""TL206: backward is called inside the autocast region."""

from __future__ import annotations

from torchlint.analysis.model import Event, Kind, WithFrame, WithKind
from torchlint.analysis.training import autocast_frame, context
from torchlint.diagnostics import Severity
from torchlint.rules.base import Rule, RuleContext


class BackwardInsideAutocast(Rule):
    code = "TL206"
    name = "backward-inside-autocast"
    family = "amp"
    severity = Severity.INFO
    summary = "Backward is called inside the autocast block."

    def check(self, ctx: RuleContext) -> None:
        for scope in ctx.facts.scopes:
            for event in scope.events:
                if event.kind is Kind.BACKWARD:
                    frame = autocast_frame(event.path)
                    if frame is not None:
                        self._report(ctx, event, frame)
        for model in ctx.loops.all:
            for e in model.events:
                if e.kind is Kind.BACKWARD:
                    frame = autocast_frame(context(model, e))
                    if frame is not None:
                        self._report(ctx, e.event, frame)

    def _report(self, ctx: RuleContext, event: Event, frame: WithFrame) -> None:
        assert frame.kind is WithKind.AUTOCAST
        ctx.report(
            event.node,
            f"`{ctx.text(event.node)}` runs inside `{frame.text}(...)`; backward ops already run "
            "in the precision autocast chose for their forward ops, and PyTorch advises against "
            "backward under autocast; leave the `with` block before calling backward.",
        )
