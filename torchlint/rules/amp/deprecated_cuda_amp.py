"""TL204: `torch.cuda.amp.autocast` / `torch.cuda.amp.GradScaler` are deprecated aliases."""

from __future__ import annotations

import libcst as cst

from torchlint.analysis.collect import DeprecatedUse
from torchlint.diagnostics import Edit, Fix, Location, Severity
from torchlint.rules.base import Rule, RuleContext

# `torch.cuda.amp.autocast(enabled, dtype, cache_enabled)` takes these positionally, while
# `torch.amp.autocast(device_type, dtype, enabled, cache_enabled)` orders them differently:
# positional arguments must become keywords. GradScaler's order is unchanged after the device.
_AUTOCAST_POSITIONAL = ("enabled", "dtype", "cache_enabled")


class DeprecatedCudaAmp(Rule):
    code = "TL204"
    name = "deprecated-cuda-amp"
    family = "amp"
    severity = Severity.WARNING
    summary = "`torch.cuda.amp.autocast(...)` / `torch.cuda.amp.GradScaler(...)` are deprecated."
    fixable = True

    def check(self, ctx: RuleContext) -> None:
        for use in ctx.facts.deprecated_amp:
            kind = use.qualname.rsplit(".", 1)[-1]
            replacement = f"torch.amp.{kind}"
            written = ctx.text(use.func)
            name = f"`{written}`" if written == use.qualname else f"`{written}` (`{use.qualname}`)"
            ctx.report(
                use.node,
                f"{name} is deprecated since PyTorch 2.4 and warns on every call; use "
                f'`{replacement}("cuda", ...)`.',
                fix=self._fix(ctx, use, kind),
            )

    def _fix(self, ctx: RuleContext, use: DeprecatedUse, kind: str) -> Fix | None:
        call = use.node
        if not isinstance(call, cst.Call):
            return None
        if any(arg.star for arg in call.args):
            return None  # `autocast(*args)`: cannot tell where the device goes
        torch_name = next(
            (local for local, target in ctx.facts.imports.aliases.items() if target == "torch"),
            None,
        )
        edits: list[Edit] = []
        if torch_name is None:
            torch_name = "torch"
            edits.append(self._import_torch(ctx))
        edits.append(ctx.replace(use.func, f"{torch_name}.amp.{kind}"))
        if not call.args:
            func_end = ctx.positions.span(use.func).end
            call_end = ctx.positions.span(call).end
            edits.append(Edit('("cuda")', func_end, call_end))
        else:
            first = ctx.positions.span(call.args[0]).start
            edits.append(ctx.insert_at(first, '"cuda", '))
            if kind == "autocast":
                positional = [a for a in call.args if a.keyword is None]
                if len(positional) > len(_AUTOCAST_POSITIONAL):
                    return None
                for name, arg in zip(_AUTOCAST_POSITIONAL, positional, strict=False):
                    start = ctx.positions.span(arg).start
                    if start == first:
                        edits[-1] = ctx.insert_at(first, f'"cuda", {name}=')
                    else:
                        edits.append(ctx.insert_at(start, f"{name}="))
        return ctx.fix("safe", f'Replace with `{torch_name}.amp.{kind}("cuda", ...)`', *edits)

    def _import_torch(self, ctx: RuleContext) -> Edit:
        imports = ctx.facts.top_level_imports
        lines = ctx.facts.parsed.lines
        if imports:
            row = ctx.positions.span(imports[-1].body[-1]).end.row
        else:
            row = 0
            body = ctx.facts.parsed.module.body
            if body and _is_docstring(body[0]):
                row = ctx.positions.span(body[0]).end.row
        if row >= lines.line_count or (not lines.line(row + 1) and row + 1 == lines.line_count):
            last = lines.line_count
            end = Location(last, len(lines.line(last)) + 1)
            prefix = "" if ctx.facts.parsed.text.endswith(("\n", "\r")) else "\n"
            return Edit(f"{prefix}import torch\n", end, end)
        return Edit("import torch\n", Location(row + 1, 1), Location(row + 1, 1))


def _is_docstring(stmt: cst.BaseStatement) -> bool:
    return (
        isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], cst.Expr)
        and isinstance(stmt.body[0].value, cst.SimpleString | cst.ConcatenatedString)
    )
