"""TL606: `self.log(..., sync_dist=True, on_step=True)` in a LightningModule's `training_step`:
an all-reduce of the logged value on every training step."""

from __future__ import annotations

import re

import libcst as cst

from torchlint.analysis.names import dotted
from torchlint.diagnostics import Severity
from torchlint.rules.base import Rule, RuleContext
from torchlint.rules.distributed.manual_step_in_training_step import is_lightning_module
from torchlint.rules.distributed.sites import mentions, sites_of

_RELEVANT = re.compile(r"sync_dist\s*=\s*True")
_LOGS = {"self.log", "self.log_dict"}


class SyncDistEveryStep(Rule):
    code = "TL606"
    name = "sync-dist-every-step"
    family = "dist"
    severity = Severity.WARNING
    summary = (
        "`self.log(..., sync_dist=True, on_step=True)` in `training_step`: every training step "
        "waits for an all-reduce of the logged value across processes."
    )

    def check(self, ctx: RuleContext) -> None:
        if not mentions(ctx, _RELEVANT) or "LightningModule" not in ctx.facts.parsed.text:
            return
        sites = sites_of(ctx)
        for name, node in sites.classes.items():
            if not is_lightning_module(ctx, node):
                continue
            step = sites.methods.get((name, "training_step"))
            if step is None:
                continue
            for site in sites.in_function(step):
                if site.callee not in _LOGS:
                    continue
                if _keyword_true(site.call, "sync_dist") and _keyword_true(site.call, "on_step"):
                    ctx.report(
                        site.call,
                        f"`{site.callee}(..., sync_dist=True, on_step=True)` in `training_step`: "
                        "Lightning all-reduces the value across processes each time it is "
                        "logged, so every training step stops to wait for the slowest process, "
                        "once per metric; log the per-process value "
                        "on step and sync only on epoch (`on_step=False, on_epoch=True, "
                        "sync_dist=True`), or drop `sync_dist` for per-step logs.",
                    )


def _keyword_true(call: cst.Call, keyword: str) -> bool:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == keyword:
            return type(arg.value) is cst.Name and dotted(arg.value) == "True"
    return False
