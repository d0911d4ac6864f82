"""TL403: a `DataLoader` given both a sampler and `shuffle=True`: it raises when it is built."""

from __future__ import annotations

import re

import libcst as cst

from torchlint.analysis.names import dotted
from torchlint.diagnostics import Severity
from torchlint.rules.api.calls import is_literal, keyword, positional
from torchlint.rules.base import Rule, RuleContext
from torchlint.rules.distributed.sites import CallSite, Sites, TextGate, last, mentions, sites_of

_LOADERS = {"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"}
_SAMPLER_CLASS = re.compile(r"\w*Sampler")
_RELEVANT = re.compile(r"shuffle\s*=\s*True|,\s*True\s*,")
_SAMPLER_TEXT = TextGate(("Sampler", "sampler"))
_BATCH_EXCLUSIVE = "batch_size, shuffle, sampler, and drop_last"


class SamplerWithShuffle(Rule):
    code = "TL403"
    name = "sampler-with-shuffle"
    family = "data"
    severity = Severity.ERROR
    summary = (
        "A `DataLoader` gets both a `sampler=` and `shuffle=True`: PyTorch refuses the "
        "combination with a `ValueError` when the loader is built."
    )

    def check(self, ctx: RuleContext) -> None:
        if not mentions(ctx, _RELEVANT) or not mentions(ctx, _SAMPLER_TEXT):
            return
        sites = sites_of(ctx)
        for site in sites.calls:
            if (ctx.facts.imports.qualify(site.call.func) or "") not in _LOADERS:
                continue
            call = site.call
            args = positional(call)
            if any(a.star for a in call.args):
                continue
            shuffle = keyword(call, "shuffle") or (args[2] if len(args) > 2 else None)
            sampler = keyword(call, "sampler") or (args[3] if len(args) > 3 else None)
            option = "sampler"
            if sampler is None or is_literal(sampler.value, "None"):
                sampler, option = keyword(call, "batch_sampler"), "batch_sampler"
            if shuffle is None or sampler is None or not is_literal(shuffle.value, "True"):
                continue
            kind = _sampler_class(sites, site, sampler.value)
            if kind is None:
                continue
            exclusive = "shuffle" if option == "sampler" else _BATCH_EXCLUSIVE
            error = (
                f"PyTorch raises `ValueError` (`{option} option is mutually exclusive with "
                f"{exclusive}`) when"
            )
            path = " (the distributed one)" if "Distributed" in kind else ""
            given = ctx.text(sampler.value)
            if _kinds(sites, site, sampler.value, 0) == {kind}:
                message = (
                    f"this `DataLoader` gets `{option}=` (a `{kind}`) and `shuffle=True`: "
                    f"{error} it is built; drop `shuffle=True` (the sampler decides the order; "
                    "a `DistributedSampler` shuffles by itself, with `set_epoch` each epoch)."
                )
            else:
                message = (
                    f"this `DataLoader` gets `shuffle=True` and `{option}={given}`, a `{kind}` "
                    f"on the path that sets it{path}: there {error} the loader "
                    f"is built; pass `shuffle=({given} is None)`, since the sampler shuffles by "
                    "itself when it is set."
                )
            ctx.report(shuffle.value, message)


def _sampler_class(sites: Sites, site: CallSite, value: cst.BaseExpression) -> str | None:
    """The class of the sampler `value` holds there, or None when it may be something else
    (a parameter, a factory's result). A sampler on one path and `None` on the other
    (`DistributedSampler(ds) if distributed else None`) counts: the loader raises on the
    path that sets it, the distributed one."""
    kinds = _kinds(sites, site, value, 0)
    kinds.discard("None")
    if len(kinds) != 1 or None in kinds:
        return None
    return kinds.pop()


def _kinds(sites: Sites, site: CallSite, value: cst.BaseExpression, depth: int) -> set[str | None]:
    """What `value` may be: sampler class names, "None", or None for anything else."""
    if type(value) is cst.Name and value.value == "None":
        return {"None"}
    if type(value) is cst.Call:
        name = last(dotted(value.func))
        return {name if _SAMPLER_CLASS.fullmatch(name) else None}
    if type(value) is cst.IfExp:
        return _kinds(sites, site, value.body, depth) | _kinds(sites, site, value.orelse, depth)
    text = dotted(value)
    if text is None or depth > 0:
        return {None}
    assigned = sites.values_of(site.function, text)
    if not assigned and text.startswith("self.") and site.class_name is not None:
        assigned = [
            v
            for (cls, _), method in sites.methods.items()
            if cls == site.class_name
            for v in sites.values_of(method, text)
        ]
    if not assigned:
        return {None}
    kinds: set[str | None] = set()
    for v in assigned:
        kinds |= _kinds(sites, site, v, depth + 1)
    return kinds
