"""TL305: a tensor is built on the host every step, then copied to the device."""

from __future__ import annotations

import libcst as cst

from torchlint.analysis.loops import IterEvent
from torchlint.analysis.model import Kind
from torchlint.diagnostics import Applicability, Fix, Severity
from torchlint.rules.base import Rule, RuleContext


class HostTensorThenMoved(Rule):
    code = "TL305"
    name = "host-tensor-then-moved"
    family = "speed"
    severity = Severity.WARNING
    summary = (
        "`torch.tensor/zeros/ones/rand*/arange/full(...)` followed by `.to(device)` / `.cuda()` "
        "inside a hot loop."
    )
    fixable = True

    def check(self, ctx: RuleContext) -> None:
        for model in ctx.step_loops:
            for e in model.events:
                if e.kind is not Kind.CREATE_MOVE:
                    continue
                call = e.event.node
                assert isinstance(call, cst.Call)
                ctx.report(
                    call,
                    f"`{ctx.text(call)}`{ctx.where(e)} builds the tensor in host memory and then "
                    f"copies it to the device on every iteration of the {model.loop.label}; "
                    "create it there directly with `device=`.",
                    fix=self._fix(ctx, e),
                )

    def _fix(self, ctx: RuleContext, e: IterEvent) -> Fix | None:
        move = e.event.node
        assert isinstance(move, cst.Call) and isinstance(move.func, cst.Attribute)
        created = move.func.value
        if not isinstance(created, cst.Call) or ctx.facts.imports.qualify(created.func) is None:
            return None  # `torch.arange(n).unsqueeze(0).to(device)`: device= goes further in
        if any(a.star or (a.keyword and a.keyword.value == "generator") for a in created.args):
            return None  # a CPU generator cannot drive a CUDA factory
        args = [a for a in move.args if not (a.keyword and a.keyword.value == "non_blocking")]
        if move.func.attr.value == "cuda":
            if args:
                return None  # `.cuda(1)`: keep the explicit choice visible
            device = '"cuda"'
        elif len(args) == 1 and (args[0].keyword is None or args[0].keyword.value == "device"):
            device = ctx.text(args[0].value)
        else:
            return None  # `.to(device, dtype)`: more than a move
        new_arg = cst.Arg(
            value=cst.parse_expression(device),
            keyword=cst.Name("device"),
            equal=cst.AssignEqual(
                whitespace_before=cst.SimpleWhitespace(""),
                whitespace_after=cst.SimpleWhitespace(""),
            ),
        )
        rebuilt = created.with_changes(args=[*created.args, new_arg])
        code = ctx.facts.parsed.module.code_for_node(rebuilt)
        factory = (ctx.facts.imports.qualify(created.func) or "").rsplit(".", 1)[-1]
        # Random factories draw from the device's generator instead of the CPU's: the values
        # (and seeded reproducibility) change, so that fix needs a look.
        applicability: Applicability = "unsafe" if factory.startswith("rand") else "safe"
        return ctx.fix(applicability, "Pass `device=` to the constructor", ctx.replace(move, code))
