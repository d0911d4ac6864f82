"""TL503: `torch.load` without `weights_only`: on PyTorch before 2.6 it unpickles anything."""

from __future__ import annotations

import libcst as cst

from torchlint.analysis.facts import ApiUse
from torchlint.diagnostics import Severity
from torchlint.rules.api.calls import add_keyword, is_literal, keyword, named, positional, starred
from torchlint.rules.base import Rule, RuleContext

_LOADS = {"torch.load", "torch.serialization.load"}
# From PyTorch 2.6 `weights_only` defaults to True (unless a `pickle_module` is passed).
_SAFE_DEFAULT = (2, 6)


class UnsafeTorchLoad(Rule):
    code = "TL503"
    name = "unsafe-torch-load"
    family = "api"
    severity = Severity.WARNING
    summary = (
        "`torch.load(...)` without `weights_only=`: before PyTorch 2.6 it unpickles arbitrary "
        "objects, so a crafted checkpoint runs code when loaded."
    )
    fixable = True
    min_torch = (1, 13)  # `weights_only` exists from PyTorch 1.13
    watches = frozenset(_LOADS)

    def check(self, ctx: RuleContext) -> None:
        if ctx.torch_floor is not None and ctx.torch_floor >= _SAFE_DEFAULT:
            return  # every supported PyTorch defaults to `weights_only=True`
        for use in ctx.facts.watched_calls:
            if use.qualname in _LOADS and not use.compat:
                self._check(ctx, use)

    def _check(self, ctx: RuleContext, use: ApiUse) -> None:
        call = use.node
        assert isinstance(call, cst.Call)
        if keyword(call, "weights_only") is not None or starred(call, "**"):
            return  # an explicit choice (or maybe one, inside `**kwargs`)
        pickle_module = keyword(call, "pickle_module")
        args = positional(call)
        value = pickle_module.value if pickle_module is not None else None
        if value is None and len(args) >= 3 and not args[2].star:
            value = args[2].value
        name = named(ctx, use)
        if value is not None and not is_literal(value, "None"):
            ctx.report(
                call,
                f"{name} with a custom `pickle_module` and no `weights_only` runs the full "
                "unpickler on every PyTorch release, so a crafted checkpoint runs code when "
                "loaded; `weights_only=True` cannot be combined with a `pickle_module`: drop it "
                "and pass `weights_only=True`, or pass `weights_only=False` for a file you trust.",
            )
            return
        fix = None
        if not starred(call, "*"):  # `*args` may hold a pickle_module
            edit = add_keyword(ctx, call, "weights_only=True")
            if edit is not None:
                fix = ctx.fix("safe", "Add `weights_only=True`", edit)
        ctx.report(
            call,
            f"{name} without `weights_only` unpickles arbitrary objects on PyTorch before 2.6, "
            "so a crafted checkpoint runs code when loaded; pass `weights_only=True` (or "
            "`weights_only=False` for a file you trust that holds more than tensors).",
            fix=fix,
        )
