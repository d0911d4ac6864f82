"""TL504: activation checkpointing without an explicit `use_reentrant`."""

from __future__ import annotations

import libcst as cst

from torchlint.analysis.facts import ApiUse
from torchlint.diagnostics import Severity
from torchlint.rules.api.calls import (
    add_keyword,
    before_target,
    keyword,
    named,
    positional,
    starred,
)
from torchlint.rules.base import Rule, RuleContext

_CHECKPOINT = "torch.utils.checkpoint.checkpoint"
_SEQUENTIAL = "torch.utils.checkpoint.checkpoint_sequential"
# `checkpoint_sequential(functions, segments, input, use_reentrant)` takes it positionally too,
# and only from PyTorch 2.0 (`checkpoint` itself has it from 1.11).
_SEQUENTIAL_SINCE = (2, 0)


class CheckpointWithoutUseReentrant(Rule):
    code = "TL504"
    name = "checkpoint-without-use-reentrant"
    family = "api"
    severity = Severity.WARNING
    summary = (
        "`torch.utils.checkpoint.checkpoint` / `checkpoint_sequential` without an explicit "
        "`use_reentrant=`."
    )
    fixable = True
    min_torch = (1, 11)  # `checkpoint(..., use_reentrant=...)` exists from PyTorch 1.11
    watches = frozenset({_CHECKPOINT, _SEQUENTIAL})

    def check(self, ctx: RuleContext) -> None:
        for use in ctx.facts.watched_calls:
            if use.qualname in (_CHECKPOINT, _SEQUENTIAL) and not use.compat:
                self._check(ctx, use)

    def _check(self, ctx: RuleContext, use: ApiUse) -> None:
        call = use.node
        assert isinstance(call, cst.Call)
        if keyword(call, "use_reentrant") is not None or starred(call, "**"):
            return
        if use.qualname == _SEQUENTIAL:
            if before_target(ctx, _SEQUENTIAL_SINCE) or starred(call, "*"):
                return
            if len(positional(call)) >= 4:
                return  # passed positionally
        edit = add_keyword(ctx, call, "use_reentrant=False")
        fix = ctx.fix("unsafe", "Add `use_reentrant=False`", edit) if edit is not None else None
        ctx.report(
            call,
            f"{named(ctx, use)} without `use_reentrant` uses the reentrant variant, which PyTorch "
            "recommends against, and warns on every call (PyTorch means to make it an error); "
            "pass `use_reentrant=False`, or `use_reentrant=True` to keep the old behaviour.",
            fix=fix,
        )
