"""TL301: a device-to-host synchronisation on every training step."""

from __future__ import annotations

import re

from torchlint.analysis.loops import IterEvent, LoopModel, runs_every_iteration
from torchlint.analysis.model import Kind
from torchlint.analysis.names import last_segment
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


# Calls that only record a synced value (logging, metrics, accumulation): there the sync can be
# deferred. Handed to anything else (`env.step(action.item())`, `range(n.item())`), the value is
# needed on the host right away and the advice would not apply.
_SINKS = {
    "append", "extend", "update", "add", "insert", "put", "push", "record", "write",
    "add_scalar", "add_scalars", "set_postfix", "set_description", "info", "debug", "warning",
    "print", "format", "round", "float", "str", "sum", "max", "min", "abs",
}  # fmt: skip


_ENVIRONMENT = re.compile(r"(^|_)envs?($|_)|environment", re.IGNORECASE)


def _steps_an_environment(model: LoopModel) -> bool:
    return any(
        e.event.method == "step" and e.receiver and _ENVIRONMENT.search(last_segment(e.receiver))
        for e in model.events
    )


def _advice(model: LoopModel) -> str:
    if model.loop.runner == "Lightning":
        return (
            "hand the tensor itself to `self.log(...)`, which Lightning reads on the host only "
            "when it writes the log, or sync every N steps (`if batch_idx % log_every == 0:`)."
        )
    if model.loop.runner:
        return (
            "keep the value a tensor (detached) and read it every N steps "
            "(`if self.state.global_step % log_every == 0:`)."
        )
    return (
        "accumulate on the device and sync every N steps (`if step % log_every == 0:`) or after "
        "the loop."
    )


def _is_sink(consumer: str) -> bool:
    name = last_segment(consumer)
    return name in _SINKS or name.startswith("log")


class ItemInHotLoop(Rule):
    code = "TL301"
    confirmed_by = ("TLR603",)  # a run measures it at the same line
    name = "item-in-hot-loop"
    family = "speed"
    severity = Severity.WARNING
    summary = (
        "Every iteration of a training loop forces a device-to-host sync "
        "(`.item()`, `.cpu()`, `float(t)`, `print(t)`, ...)."
    )

    def check(self, ctx: RuleContext) -> None:
        for model in ctx.step_loops:  # an epoch loop: its own syncs run once per epoch
            if _steps_an_environment(model):
                continue  # RL: acting in the environment needs host values on every step
            for e in model.events:
                if e.kind is Kind.HOST_SYNC and self._fires(e):
                    ctx.report(
                        e.event.node,
                        f"`{ctx.text(e.event.node)}`{ctx.where(e)} "
                        f"{_DESCRIPTIONS.get(e.event.method or '', 'syncs with the device')} "
                        f"and waits for the GPU on every iteration of the {model.loop.label}; "
                        f"{_advice(model)}",
                    )

    def _fires(self, e: IterEvent) -> bool:
        if not runs_every_iteration(e):
            return False
        consumer = e.event.consumer
        if consumer is not None and not _is_sink(consumer):
            return False  # `env.step(action.item())`: the host needs the value now
        if e.on_host:
            return False  # `batch["mask"].sum().item()` in a helper, before it moves `batch`
        if e.event.subject_received:
            return False  # `shape.tolist()` of what `dist.irecv(shape, src)` received
        if e.event.method == "item":
            return not e.event.subject_on_host  # `y.sum().item()` on a CPU batch is no sync
        return e.subject_is_tensor is True
