"""TL302: `torch.cuda.synchronize()` / `torch.cuda.empty_cache()` on every training step."""

from __future__ import annotations

import re

from torchlint.analysis.loops import runs_every_iteration
from torchlint.analysis.model import Kind, WithFrame, WithKind
from torchlint.analysis.training import context
from torchlint.diagnostics import Severity
from torchlint.rules.base import Rule, RuleContext

_WHY = {
    "synchronize": (
        "blocks Python until the GPU has finished all queued work, so the host can no longer "
        "run ahead and the GPU idles between steps"
    ),
    "empty_cache": (
        "hands the caching allocator's free blocks back to the driver, so the next step pays "
        "for slow `cudaMalloc` calls (and a synchronisation) again"
    ),
}


# `for batch in metric_logger.log_every(loader, 10)`: the iterable itself times each step.
_TIMED_ITERABLE = re.compile(r"log_every|timer|timing|profil|benchmark", re.IGNORECASE)


class SyncInHotLoop(Rule):
    code = "TL302"
    confirmed_by = ("TLR603",)  # a run measures it at the same line
    name = "sync-in-hot-loop"
    family = "speed"
    severity = Severity.WARNING
    summary = (
        "`torch.cuda.synchronize()` / `torch.cuda.empty_cache()` on every iteration of a "
        "training loop."
    )

    def check(self, ctx: RuleContext) -> None:
        for model in ctx.step_loops:
            timed = any(e.kind is Kind.TIMING for e in model.events) or bool(
                _TIMED_ITERABLE.search(model.loop.iter_text)
            )
            for e in model.events:
                if e.kind is not Kind.DEVICE_SYNC or not runs_every_iteration(e):
                    continue
                method = e.event.method or "synchronize"
                if any(
                    isinstance(f, WithFrame) and f.kind is WithKind.PROFILE
                    for f in context(model, e)
                ):
                    continue  # inside an explicit profiling block
                if method == "synchronize" and timed:
                    continue  # timing the step: the sync makes the clock honest
                ctx.report(
                    e.event.node,
                    f"`{ctx.text(e.event.node)}`{ctx.where(e)} runs on every iteration of the "
                    f"{model.loop.label}: it {_WHY.get(method, _WHY['synchronize'])}; remove it, "
                    "or run it every N steps or only while profiling.",
                )
