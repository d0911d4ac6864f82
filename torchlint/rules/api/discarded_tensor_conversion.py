"""TL508: `x.to(device)` as a statement: a tensor is not converted in place, so nothing moves."""

from __future__ import annotations

from torchlint.diagnostics import Severity
from torchlint.rules.base import Rule, RuleContext

_WHY = {
    "type-test": "tested to be a tensor just above",
    "built-as-tensor": "built as a tensor",
    "batch-item": "a tensor of the loader's batch",
}


class DiscardedTensorConversion(Rule):
    code = "TL508"
    name = "discarded-tensor-conversion"
    family = "api"
    severity = Severity.ERROR
    summary = (
        "`x.to(device)` / `x.cuda()` / `x.half()` as a statement on a tensor: tensors are not "
        "converted in place, so the result is thrown away and `x` stays as it was."
    )
    fixable = True

    def check(self, ctx: RuleContext) -> None:
        for found in ctx.facts.discarded_conversions:
            call = ctx.text(found.node)
            receiver = found.receiver
            fix = ctx.fix(
                "unsafe",
                f"Assign the result back to `{receiver}`",
                ctx.replace(found.node, f"{receiver} = {call}"),
            )
            ctx.report(
                found.node,
                f"`{call}` returns a converted copy and the statement throws it away: "
                f"`{receiver}` is {_WHY[found.evidence]} and tensors are not converted in "
                f"place (modules are), so `{receiver}` keeps its device and dtype; write "
                f"`{receiver} = {call}`.",
                fix=fix,
            )
