"""TL105: `model.eval()` in a loop leaves the model in eval mode for the next round of training."""

from __future__ import annotations

from torchlint.analysis.loops import IterEvent, LoopModel, same_object
from torchlint.analysis.model import MODE_SWITCHES, Kind
from torchlint.analysis.training import forwards, not_trained
from torchlint.diagnostics import Severity
from torchlint.rules.base import Rule, RuleContext


class EvalModeLeak(Rule):
    code = "TL105"
    name = "eval-mode-leak"
    family = "loop"
    severity = Severity.ERROR
    summary = (
        "`model.eval()` runs inside the training loop and the next iteration trains "
        "without calling `model.train()` first."
    )

    def check(self, ctx: RuleContext) -> None:
        # One finding per eval call, from the smallest loop that shows the leak.
        best: dict[int, tuple[int, LoopModel, IterEvent, IterEvent]] = {}
        for model in ctx.loops.training:
            for leak, backward in self._leaks(model):
                key = id(leak.event)
                if key not in best or len(model.events) < best[key][0]:
                    best[key] = (len(model.events), model, leak, backward)
        for _, model, leak, backward in best.values():
            receiver = leak.receiver or "model"
            node = leak.site.node
            ctx.report(
                node,
                f"`{ctx.text(leak.event.node)}`{ctx.where(leak)} leaves `{receiver}` in eval "
                f"mode when the next iteration of the {model.loop.label} trains it "
                f"(`{ctx.text(backward.event.node)}`); call `{receiver}.train()` at the start "
                "of the loop or of the training function.",
            )

    def _leaks(self, model: LoopModel) -> list[tuple[IterEvent, IterEvent]]:
        events = model.events
        backward = next((e for e in events if e.kind is Kind.BACKWARD), None)
        if backward is None:
            return []
        found = []
        evals = [e for e in events if e.kind is Kind.MODE_EVAL and e.receiver and not e.local]
        for ev in evals:
            receiver = ev.receiver
            assert receiver is not None
            if not_trained(receiver):
                continue  # an EMA copy, a teacher, a target network: updated without backward
            modes = [
                e
                for e in events
                if e.kind in MODE_SWITCHES and same_object(e.receiver, receiver) and not e.local
            ]
            if modes[-1] is not ev and any(
                e.kind is not Kind.MODE_EVAL for e in modes if e.index > ev.index
            ):
                continue  # switched back to training later in the iteration
            before = [e for e in modes if e.index < backward.index]
            if any(e.kind is not Kind.MODE_EVAL for e in before):
                continue  # set back to training before the backward
            if any(e.event.scope is backward.event.scope for e in before):
                continue  # the training code itself sets eval mode (a linear probe's frozen BN)
            if not forwards(model, receiver):
                continue
            found.append((ev, backward))
        return found
