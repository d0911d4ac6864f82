"""TL502: a deprecated PyTorch API that has a replacement (`torch.qr`, `functorch.vmap`)."""

from __future__ import annotations

import libcst as cst

from torchlint.analysis.deprecations import BY_QUALNAME, ApiChange, format_version
from torchlint.analysis.facts import ApiUse
from torchlint.diagnostics import Edit, Fix, Severity
from torchlint.rules.api.calls import (
    before_target,
    is_literal,
    keyword,
    keywords,
    named,
    positional,
    used_as_function,
)
from torchlint.rules.base import Rule, RuleContext
from torchlint.rules.edits import torch_name

_FUNCTORCH = (2, 0)  # functorch moved into torch.func


class DeprecatedApi(Rule):
    code = "TL502"
    name = "deprecated-api"
    family = "api"
    severity = Severity.WARNING
    summary = (
        "A deprecated PyTorch API with a replacement: `torch.qr`, `torch.cholesky`, "
        "`torch.chain_matmul`, `torch.ger`, `torch.range`, `torch.norm`, `functorch.*`, ..."
    )
    fixable = True

    def check(self, ctx: RuleContext) -> None:
        for use in ctx.facts.functorch_imports:
            if not use.compat and not before_target(ctx, _FUNCTORCH):
                self._functorch_import(ctx, use)
        for use in ctx.facts.api_uses:
            change = BY_QUALNAME[use.qualname]
            if change.status != "deprecated" or use.compat or not used_as_function(ctx, use):
                continue
            if use.qualname.startswith("functorch.") and type(use.func) is cst.Name:
                continue  # `from functorch import vmap`: reported at the import
            if before_target(ctx, change.replacement_since):
                continue
            since = ""
            if change.deprecated_in is not None:
                since = f" since PyTorch {format_version(change.deprecated_in)}"
            fix = _fix(ctx, use, change)
            ctx.report(
                use.node,
                f"{named(ctx, use)} is deprecated{since}; use `{change.replacement}` "
                f"({change.note}).",
                fix=fix,
            )

    def _functorch_import(self, ctx: RuleContext, use: ApiUse) -> None:
        statement = use.node
        assert isinstance(statement, cst.ImportFrom)
        if isinstance(statement.names, cst.ImportStar):
            return
        changes = []
        for alias in statement.names:
            name = alias.name.value if type(alias.name) is cst.Name else ""
            change = BY_QUALNAME.get(f"functorch.{name}")
            if change is not None:
                changes.append(change)
        if not changes:
            return  # `from functorch import make_fx`: not deprecated
        renamed = [c.qualname.split(".", 1)[1] for c in changes if c.mechanical]
        others = [c for c in changes if not c.mechanical]
        advice = []
        if renamed:
            them = "them" if not others else ", ".join(f"`{n}`" for n in renamed)
            advice.append(f"import {them} from `torch.func`")
        for change in others:
            short = change.qualname.split(".", 1)[1]
            advice.append(f"replace `{short}` with `{change.replacement}` ({change.note})")
        listed = ", ".join(f"`{c.qualname.split('.', 1)[1]}`" for c in changes)
        fix = None
        if not others and len(changes) == len(statement.names):
            ctx.positions.span(statement)  # lays out the statement, its module name included
            module = statement.module
            assert module is not None
            fix = ctx.fix("safe", "Import from `torch.func`", ctx.replace(module, "torch.func"))
        ctx.report(
            statement,
            f"The functorch APIs {listed} are deprecated since PyTorch 2.0 and warn on every "
            f"call; {'; '.join(advice)}.",
            fix=fix,
        )


def _fix(ctx: RuleContext, use: ApiUse, change: ApiChange) -> Fix | None:
    if not change.mechanical or use.func is None:
        return None
    qualname = use.qualname
    if qualname == "torch.ger" or qualname.startswith("functorch."):
        # Same function under another name: any call, and any other reference, is renamed.
        new = "outer" if qualname == "torch.ger" else f"func.{qualname.split('.', 1)[1]}"
        torch, edits = torch_name(ctx)
        edits.append(ctx.replace(use.func, f"{torch}.{new}"))
        return ctx.fix("safe", f"Replace with `{torch}.{new}`", *edits)
    call = use.node
    if not isinstance(call, cst.Call) or any(arg.star for arg in call.args):
        return None
    args = positional(call)
    names = keywords(call)
    if qualname == "torch.qr":
        return _qr(ctx, use.func, call, args, names)
    if qualname == "torch.cholesky" and len(args) == 1 and names <= {"out"}:
        return _rename(ctx, use.func, "linalg.cholesky")
    if qualname == "torch.norm" and len(args) == 1 and not names:
        return _rename(ctx, use.func, "linalg.vector_norm")
    if qualname == "torch.chain_matmul" and len(args) >= 2 and not names:
        fix = _rename(ctx, use.func, "linalg.multi_dot")
        # `Arg` ranges include the parentheses around a value (a value's own range does not)
        first = ctx.positions.span(args[0]).start
        last = ctx.positions.span(args[-1]).end
        brackets = (ctx.insert_at(first, "["), ctx.insert_at(last, "]"))
        return Fix(fix.applicability, fix.message, (*fix.edits, *brackets))
    if qualname == "torch.lu_solve" and len(args) == 3 and not names:
        b, lu, pivots = (ctx.text(arg.value) for arg in args)
        if "#" in ctx.text(call):
            return None  # rewriting the argument list would drop the comments in it
        torch, edits = torch_name(ctx)
        edits.append(ctx.replace(call, f"{torch}.linalg.lu_solve({lu}, {pivots}, {b})"))
        return ctx.fix("safe", "Replace with `torch.linalg.lu_solve(LU, pivots, B)`", *edits)
    return None


def _rename(ctx: RuleContext, func: cst.BaseExpression, new: str) -> Fix:
    torch, edits = torch_name(ctx)
    edits.append(ctx.replace(func, f"{torch}.{new}"))
    return ctx.fix("safe", f"Replace with `{torch}.{new}`", *edits)


def _qr(
    ctx: RuleContext,
    func: cst.BaseExpression,
    call: cst.Call,
    args: list[cst.Arg],
    names: set[str],
) -> Fix | None:
    """`torch.qr(A, some)` -> `torch.linalg.qr(A, mode=...)`: `some=True` is the reduced QR
    (both functions' default), `some=False` the complete one."""
    if not 1 <= len(args) <= 2 or not names <= {"some", "out"}:
        return None
    by_keyword = keyword(call, "some")
    if len(args) == 2 and by_keyword is not None:
        return None
    some = args[1] if len(args) == 2 else by_keyword
    fix = _rename(ctx, func, "linalg.qr")
    if some is None:
        return fix
    if is_literal(some.value, "True"):
        mode = '"reduced"'
    elif is_literal(some.value, "False"):
        mode = '"complete"'
    else:
        return None  # `some=flag`: the mode depends on a value we cannot read
    span = ctx.positions.span(some)  # the whole argument: `some=False`, or `False`
    edit = Edit(f"mode={mode}", span.start, span.end)
    return Fix(fix.applicability, fix.message, (*fix.edits, edit))
