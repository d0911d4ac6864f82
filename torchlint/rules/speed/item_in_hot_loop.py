"""TL301: a device-to-host synchronisation on every training step."""

from __future__ import annotations

from torchlint.analysis.loops import IterEvent, runs_every_iteration
from torchlint.analysis.model import Kind
from torchlint.diagnostics import Severity
from torchlint.rules.base import Rule, RuleContext

_DESCRIPTIONS = {
    "item": "copies a value to the host",
    "tolist": "copies a tensor to the host",
    "cpu": "copies a tensor to the host",
    "numpy": "copies a tensor to the host",
    "float": "converts a tensor to a Python number",
    "int": "converts a tensor to a Python number",
    "bool": "converts a tensor to a Python bool",
    "print": "formats a tensor for printing",
}


class ItemInHotLoop(Rule):
    code = "TL301"
    name = "item-in-hot-loop"
    family = "speed"
    severity = Severity.WARNING
    summary = (
        "Every iteration of a training loop forces a device-to-host sync "
        "(`.item()`, `.cpu()`, `float(t)`, `print(t)`, ...)."
    )

    def check(self, ctx: RuleContext) -> None:
        for model in ctx.loops.training:
            if not model.is_step_loop:
                continue  # an epoch loop: its own syncs run once per epoch
            for e in model.events:
                if e.kind is Kind.HOST_SYNC and self._fires(e):
                    ctx.report(
                        e.event.node,
                        f"`{ctx.text(e.event.node)}`{ctx.where(e)} "
                        f"{_DESCRIPTIONS.get(e.event.method or '', 'syncs with the device')} "
                        f"and waits for the GPU on every iteration of the {model.loop.label}; "
                        "accumulate on the device and sync every N steps "
                        "(`if step % log_every == 0:`) or after the loop.",
                    )

    def _fires(self, e: IterEvent) -> bool:
        if not runs_every_iteration(e):
            return False
        if e.event.method == "item":
            return not e.event.subject_on_host  # `y.sum().item()` on a CPU batch is no sync
        return e.subject_is_tensor is True
