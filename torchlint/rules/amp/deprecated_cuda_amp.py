"""TL204: `torch.cuda.amp.autocast` / `torch.cuda.amp.GradScaler` are deprecated aliases."""

from __future__ import annotations

import libcst as cst

from torchlint.analysis.facts import DeprecatedUse
from torchlint.diagnostics import Edit, Fix, Severity
from torchlint.rules.amp.unused_import import references, removal
from torchlint.rules.base import Rule, RuleContext
from torchlint.rules.edits import torch_name

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
    min_torch = (2, 3)  # `torch.amp.GradScaler("cuda")` exists from PyTorch 2.3

    def check(self, ctx: RuleContext) -> None:
        uses = [use for use in ctx.facts.deprecated_amp if not use.compat]
        fixes = {id(use): self._fix(ctx, use, use.qualname.rsplit(".", 1)[-1]) for use in uses}
        fixes.update(self._with_import_removed(ctx, uses, fixes))
        for use in uses:
            kind = use.qualname.rsplit(".", 1)[-1]
            replacement = f"torch.amp.{kind}"
            written = ctx.text(use.func)
            name = f"`{written}`" if written == use.qualname else f"`{written}` (`{use.qualname}`)"
            ctx.report(
                use.node,
                f"{name} is deprecated since PyTorch 2.4 and warns on every call; use "
                f'`{replacement}("cuda", ...)`.',
                fix=fixes[id(use)],
            )

    def _with_import_removed(
        self, ctx: RuleContext, uses: list[DeprecatedUse], fixes: dict[int, Fix | None]
    ) -> dict[int, Fix | None]:
        """For a name imported from `torch.cuda.amp` whose every reference gets a fix: each of
        its uses' fixes rewrites all of them and removes the name from the import."""
        by_name: dict[str, list[DeprecatedUse]] = {}
        for use in uses:
            if type(use.func) is cst.Name:
                by_name.setdefault(use.func.value, []).append(use)
        combined: dict[int, Fix | None] = {}
        for local, named in by_name.items():
            own = [fixes[id(use)] for use in named]
            if any(fix is None for fix in own) or references(ctx, local, len(named)) != len(named):
                continue
            torch, torch_edits = torch_name(ctx)
            removed = removal(ctx, local, "import torch" if torch_edits else None)
            if removed is None:
                continue
            edits: list[Edit] = []
            for fix in own:
                assert fix is not None
                edits.extend(e for e in fix.edits if e not in torch_edits and e not in edits)
            kind = named[0].qualname.rsplit(".", 1)[-1]
            count = f"the {len(named)} uses of `{local}`" if len(named) > 1 else f"`{local}`"
            fix = ctx.fix(
                "safe",
                f'Replace {count} with `{torch}.amp.{kind}("cuda", ...)` and drop its import',
                *edits,
                *removed,
            )
            combined.update({id(use): fix for use in named})
        return combined

    def _fix(self, ctx: RuleContext, use: DeprecatedUse, kind: str) -> Fix | None:
        call = use.node
        if not isinstance(call, cst.Call):
            return None
        if any(arg.star for arg in call.args):
            return None  # `autocast(*args)`: cannot tell where the device goes
        torch, edits = torch_name(ctx)
        edits.append(ctx.replace(use.func, f"{torch}.amp.{kind}"))
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
        return ctx.fix("safe", f'Replace with `{torch}.amp.{kind}("cuda", ...)`', *edits)
