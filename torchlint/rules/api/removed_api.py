"""TL501: a call of a PyTorch function that has been removed (`torch.solve`, `torch.symeig`)."""

from __future__ import annotations

from torchlint.analysis.deprecations import BY_QUALNAME, format_version
from torchlint.diagnostics import Severity
from torchlint.rules.api.calls import before_target, named, used_as_function
from torchlint.rules.base import Rule, RuleContext


class RemovedApi(Rule):
    code = "TL501"
    name = "removed-api"
    family = "api"
    severity = Severity.ERROR
    summary = (
        "A call of a function removed from PyTorch (`torch.solve`, `torch.symeig`, `torch.eig`, "
        "`torch.lstsq`, `torch.matrix_rank`): it raises at run time."
    )

    def check(self, ctx: RuleContext) -> None:
        for use in ctx.facts.api_uses:
            change = BY_QUALNAME[use.qualname]
            if change.status != "removed" or use.compat or not used_as_function(ctx, use):
                continue
            if before_target(ctx, change.replacement_since):
                continue  # the project's oldest PyTorch has no replacement to move to
            when = ""
            if change.removed_in is not None:
                when = f" in {format_version(change.removed_in)}"
            elif change.deprecated_in is not None:
                when = f" (deprecated since {format_version(change.deprecated_in)})"
            ctx.report(
                use.node,
                f"{named(ctx, use)} was removed from PyTorch{when}: it only raises a "
                f"RuntimeError now. Use `{change.replacement}`; {change.note}.",
            )
