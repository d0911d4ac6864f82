"""TL601: a collective (`dist.all_reduce`, `accelerator.wait_for_everyone()`, ...) that only some
ranks reach: the others never enter it, and the job hangs."""

from __future__ import annotations

import re
from dataclasses import dataclass

import libcst as cst

from torchlint.diagnostics import Severity
from torchlint.rules.base import Rule, RuleContext
from torchlint.rules.distributed.ranks import MAIN, OTHERS, reached_by
from torchlint.rules.distributed.sites import (
    CallSite,
    Sites,
    TextGate,
    last,
    mentions,
    receiver,
    sites_of,
)

# torch.distributed's collectives, with the position of their `group` argument: a collective
# over a subgroup is meant to be called by that group's ranks only.
_DIST_COLLECTIVES = {
    "all_reduce": 2, "all_gather": 2, "all_gather_into_tensor": 2, "all_gather_object": 2,
    "broadcast": 2, "broadcast_object_list": 2, "all_to_all": 2, "all_to_all_single": 4,
    "reduce": 3, "reduce_scatter": 3, "reduce_scatter_tensor": 3, "gather": 3,
    "gather_object": 3, "scatter": 3, "scatter_object_list": 3, "barrier": 0,
    "monitored_barrier": 0,
}  # fmt: skip
# The same, as methods of a framework object (Accelerate's Accelerator, Lightning's Fabric and
# strategies): every process must call them.
_FRAMEWORK_COLLECTIVES = {
    "wait_for_everyone", "gather", "gather_for_metrics", "reduce", "pad_across_processes",
    "barrier", "all_reduce", "all_gather", "broadcast",
}  # fmt: skip
_FRAMEWORK_OBJECTS = re.compile(r"accelerator|fabric|strategy")
_BARRIERS = {"barrier", "monitored_barrier", "wait_for_everyone"}
# A file is walked only when it names a collective and a rank test.
_COLLECTIVES = TextGate(
    ("gather", "scatter", "all_reduce", "broadcast", "barrier", "wait_for_everyone", "all_to_all")
)  # `gather` also finds `all_gather`, `scatter` finds `reduce_scatter`
_REDUCE = TextGate(("reduce(",), word_start=True)
_RANK_TEXT = TextGate(
    ("rank", "main_process", "is_master", "is_main", "global_zero", "master_process")
)


@dataclass(frozen=True)
class _Collective:
    site: CallSite  # the collective itself, or the call of a function that runs one
    name: str  # `dist.all_reduce`, as written
    via: str | None = None  # `evaluate()`, when the collective runs inside it
    row_note: str = ""


class CollectiveUnderRankGuard(Rule):
    code = "TL601"
    name = "collective-under-rank-guard"
    family = "dist"
    severity = Severity.ERROR
    summary = (
        "A collective (`all_reduce`, `barrier`, `accelerator.gather`, ...) runs under "
        "`if rank == 0:` or another rank test: the other ranks never join it and the job hangs."
    )

    def check(self, ctx: RuleContext) -> None:
        relevant = mentions(ctx, _COLLECTIVES) or mentions(ctx, _REDUCE)
        if not relevant or not mentions(ctx, _RANK_TEXT):
            return
        sites = sites_of(ctx)
        runs = self._functions_running_collectives(ctx, sites)
        for site in sites.calls:
            found = self._collective(ctx, sites, site, runs)
            if found is None:
                continue
            side = reached_by(site)
            if side is None:
                continue
            sense, test = side
            counts = self._path_counts(ctx, sites, site, found, runs)
            if counts[MAIN] == counts[OTHERS]:
                continue
            who = "the main process" if sense is MAIN else "every process but the main one"
            where = f" ({test})" if test else " (a function only the main process runs)"
            others = counts[not sense]
            if others:  # a barrier after the rank-0 block, say: the counts still differ
                mine, theirs = counts[sense], "the other ranks" if sense is MAIN else "rank 0"
                ctx.report(
                    site.call,
                    f"`{_shown(ctx, site.call, found.name)}` runs only for {who}{where}, so "
                    f"that path enters `{last(found.name)}` {_times(mine)} in this function and "
                    f"{theirs} {_times(others)}: the collectives pair up wrongly and the job "
                    "hangs; call it on every rank, outside the rank test.",
                )
                continue
            if found.via:
                shown = _shown(ctx, site.call, found.via)
                what = f"`{shown}` runs the collective `{found.name}`{found.row_note}"
            else:
                what = f"`{_shown(ctx, site.call, found.name)}` is a collective"
            ctx.report(
                site.call,
                f"{what}, and only {who} reaches it{where}: the other ranks never join it, so "
                "every rank waits in it until the process group times out and the job hangs; "
                "call it on every rank, outside the rank test.",
            )

    def _collective(
        self,
        ctx: RuleContext,
        sites: Sites,
        site: CallSite,
        runs: dict[int, tuple[str, int]],
    ) -> _Collective | None:
        name = _direct(ctx, site)
        if name is not None:
            return _Collective(site, name)
        callee = _local_callee(sites, site)
        if callee is not None and id(callee) in runs:
            inner, row = runs[id(callee)]
            return _Collective(site, inner, f"{site.callee}", f" (line {row})")
        return None

    def _functions_running_collectives(
        self, ctx: RuleContext, sites: Sites
    ) -> dict[int, tuple[str, int]]:
        """The functions of the module that run a collective on every call (not under a rank
        test of their own), directly or through another such function."""
        runs: dict[int, tuple[str, int]] = {}
        for _ in range(4):
            changed = False
            for site in sites.calls:
                function = site.function
                if function is None or id(function) in runs or reached_by(site) is not None:
                    continue
                name = _direct(ctx, site)
                if name is not None:
                    runs[id(function)] = (name, ctx.line_of(site.call))
                else:
                    callee = _local_callee(sites, site)
                    if callee is None or id(callee) not in runs:
                        continue
                    runs[id(function)] = runs[id(callee)]
                changed = True
            if not changed:
                break
        return runs

    def _path_counts(
        self,
        ctx: RuleContext,
        sites: Sites,
        site: CallSite,
        found: _Collective,
        runs: dict[int, tuple[str, int]],
    ) -> dict[bool, int]:
        """Every rank runs the collective as many times along its path through the function:
        `if rank == 0: broadcast(x) else: broadcast(y)`, or the barrier pair that lets the main
        process go first (`if rank not in (-1, 0): barrier()` ... `if rank == 0: barrier()`).
        A barrier after the rank-0 block is no excuse for one inside it: rank 0 enters the
        barrier twice, the others once."""
        kind = last(found.name)
        counts = {True: 0, False: 0}  # the main process's path, the other ranks' path
        for other in sites.in_function(site.function):
            other_found = found if other is site else self._collective(ctx, sites, other, runs)
            if other_found is None:
                continue
            name = last(other_found.name)
            if not (name == kind or (kind in _BARRIERS and name in _BARRIERS)):
                continue
            side = reached_by(other)
            for path in counts:
                if side is None or (side[0] is MAIN) == path:
                    counts[path] += 1
        return counts


def _times(count: int) -> str:
    return "once" if count == 1 else "twice" if count == 2 else f"{count} times"


def _direct(ctx: RuleContext, site: CallSite) -> str | None:
    """The collective `site` calls, as written, or None."""
    call = site.call
    qual = ctx.facts.imports.qualify(call.func) or ""
    method = last(site.callee)
    if qual.startswith("torch.distributed.") and qual.count(".") == 2:
        index = _DIST_COLLECTIVES.get(method)
        if index is None or _has_group(call, index):
            return None
        return site.callee or qual
    if (
        method in _FRAMEWORK_COLLECTIVES
        and type(call.func) is cst.Attribute
        and _FRAMEWORK_OBJECTS.search(receiver(site.callee))
        and not _has_group(call, None)
    ):
        return site.callee
    return None


def _shown(ctx: RuleContext, call: cst.Call, name: str) -> str:
    """The call as written when it is short, else `name(...)`."""
    text = ctx.text(call)
    return text if len(text) <= 60 and "\n" not in text else f"{name}(...)"


def _has_group(call: cst.Call, index: int | None) -> bool:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value in ("group", "process_group"):
            return not (type(arg.value) is cst.Name and arg.value.value == "None")
        if arg.star:
            return True  # `**kwargs` may hold one
    if index is None:
        return False
    return len([a for a in call.args if a.keyword is None]) > index


def _local_callee(sites: Sites, site: CallSite) -> cst.FunctionDef | None:
    func = site.call.func
    if type(func) is cst.Name:
        return sites.functions.get(func.value)
    if (
        type(func) is cst.Attribute
        and type(func.value) is cst.Name
        and func.value.value == "self"
        and site.class_name is not None
    ):
        return sites.methods.get((site.class_name, func.attr.value))
    return None
