"""TL123: a module is replaced after the optimizer was built over its parameters."""

from __future__ import annotations

import libcst as cst

from torchlint.analysis.model import ConstructedObject, exclusive
from torchlint.analysis.names import dotted
from torchlint.analysis.sites import CallSite, Sites
from torchlint.analysis.value import names_in
from torchlint.diagnostics import Severity
from torchlint.rules.base import Rule, RuleContext

_PARAMETER_METHODS = frozenset(("parameters", "named_parameters"))
# Constructors that wrap the module they are given and keep its parameters.
_WRAPPERS = frozenset(
    (
        "torch.nn.DataParallel",
        "torch.nn.parallel.DataParallel",
        "torch.nn.parallel.DistributedDataParallel",
        "torch.nn.parallel.distributed.DistributedDataParallel",
    )
)
_COPIES = frozenset(("copy.deepcopy",))
# Calls on the optimizer that take in new parameters.
_REFRESH = frozenset(("add_param_group", "load_state_dict"))


class OptimizerOverReplacedModule(Rule):
    code = "TL123"
    name = "optimizer-over-replaced-module"
    family = "loop"
    severity = Severity.WARNING
    summary = (
        "A module (or a submodule, or a parameter) is replaced by a new one after the optimizer "
        "was built over its parameters, and the old optimizer goes on stepping: the new "
        "parameters are never trained."
    )

    def check(self, ctx: RuleContext) -> None:
        optimizers = [o for o in ctx.facts.constructed if o.role == "optimizer"]
        if not optimizers:
            return
        sites = ctx.facts.sites
        order: dict[int, int] = {}
        for index, site in enumerate(sites.calls):
            order.setdefault(id(site.call), index)
        instances = {id(o.node) for o in ctx.facts.constructed if o.role == "instance"}
        for optimizer in optimizers:
            start = order.get(id(optimizer.node))
            if start is None:
                continue
            built = sites.calls[start]
            owners = _owners(optimizer, sites, built)
            if not owners:
                continue
            later = [s for s in sites.calls[start + 1 :] if s.function is built.function]
            for index, site in enumerate(later):
                replaced = _replaced(ctx, site, owners, instances)
                if replaced is None or exclusive(site, built):
                    continue
                use = _still_used(later[index + 1 :], optimizer, ctx)
                if use is None:
                    break
                target, owner = replaced
                if target == owner:
                    what = f"`{owner}`"
                elif target.startswith(owner + "."):
                    what = f"a part of `{owner}`"
                else:
                    what = f"the object that holds `{owner}`"
                name = optimizer.target
                ctx.report(
                    site.call,
                    f"`{target} = {ctx.text(site.call)}` replaces {what} after `{name}` was "
                    f"built over `{owner}.parameters()` (line {ctx.line_of(optimizer.node)}), "
                    f"and `{name}` is used again at line {ctx.line_of(use.call)}: it still holds "
                    f"the old parameters, so the new `{target}` is never updated; build the "
                    f"optimizer after the replacement (or pass the new parameters to "
                    f"`{name}.add_param_group(...)`).",
                )
                break


def _owners(optimizer: ConstructedObject, sites: Sites, built: CallSite) -> list[str]:
    """The modules whose parameters the optimizer's arguments take (`model` for
    `SGD(model.parameters())`, `[{"params": model.fc.parameters()}]`,
    `filter(..., model.parameters())`, or a local name assigned one of those)."""
    owners: list[str] = []
    for arg in optimizer.node.args:
        _collect_owners(arg.value, owners)
        name = arg.value
        if isinstance(name, cst.Name):
            for value in sites.values_of(built.function, name.value):
                _collect_owners(value, owners)
    if optimizer.params_owner and optimizer.params_owner not in owners:
        owners.append(optimizer.params_owner)
    return owners


class _ParameterCalls(cst.CSTVisitor):
    def __init__(self, owners: list[str]) -> None:
        self.owners = owners

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in _PARAMETER_METHODS:
            owner = dotted(func.value)
            if owner is not None and owner not in self.owners:
                self.owners.append(owner)


def _collect_owners(value: cst.BaseExpression, owners: list[str]) -> None:
    value.visit(_ParameterCalls(owners))


def _replaced(
    ctx: RuleContext, site: CallSite, owners: list[str], instances: set[int]
) -> tuple[str, str] | None:
    """`(target, owner)` when the call builds a new module assigned to an owner, to a part of
    one (`model.fc`), or to what holds one (`self.net` replaced while the optimizer was built
    over `self.net.encoder`)."""
    targets = ctx.facts.sites.targets.get(id(site.call))
    if not targets:
        return None
    target = targets[0]
    owner = next(
        (
            o
            for o in owners
            if target == o or target.startswith(o + ".") or o.startswith(target + ".")
        ),
        None,
    )
    if owner is None or not _builds_new_module(ctx, site.call, owner, instances):
        return None
    return target, owner


def _builds_new_module(ctx: RuleContext, call: cst.Call, owner: str, instances: set[int]) -> bool:
    qual = ctx.facts.imports.qualify(call.func) or ""
    if qual in _COPIES:
        return True
    if qual in _WRAPPERS or _mentions(call, owner):
        return False  # a wrapper around the old module keeps its parameters
    if qual.startswith("torch.nn."):
        return qual.rsplit(".", 1)[-1][:1].isupper()
    name = dotted(call.func)
    return id(call) in instances or (name is not None and name in ctx.facts.classes)


def _mentions(call: cst.Call, owner: str) -> bool:
    root = owner.split(".", 1)[0]
    return any(root in names_in(arg.value) for arg in call.args)


def _still_used(
    later: list[CallSite], optimizer: ConstructedObject, ctx: RuleContext
) -> CallSite | None:
    """The first later call that steps the optimizer or hands it on, unless the optimizer is
    built again or takes in new parameters first."""
    name = optimizer.target
    rebuilt = {
        id(o.node)
        for o in ctx.facts.constructed
        if o.role == "optimizer" and o.target == name and o is not optimizer
    }
    for site in later:
        if id(site.call) in rebuilt:
            return None
        callee = site.callee or ""
        if callee.startswith(name + "."):
            if callee[len(name) + 1 :] in _REFRESH:
                return None
            return site
        if any(dotted(arg.value) == name for arg in site.call.args):
            return site
    return None
