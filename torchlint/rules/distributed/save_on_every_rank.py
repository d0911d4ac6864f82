"""TL604: `torch.save(..., path)` with no rank test in a function that sets up DDP / FSDP: every
rank writes the same file at the same time."""

from __future__ import annotations

import re

import libcst as cst

from torchlint.analysis.names import dotted
from torchlint.analysis.subtree import preorder
from torchlint.diagnostics import Severity
from torchlint.rules.base import Rule, RuleContext
from torchlint.rules.distributed.ranks import reached_by
from torchlint.rules.distributed.sites import CallSite, Sites, TextGate, mentions, sites_of

_SAVES = {"torch.save", "torch.serialization.save"}
# What makes the function's processes the ranks of one job.
_DISTRIBUTED_SETUP = {
    "torch.distributed.init_process_group",
    "torch.nn.parallel.DistributedDataParallel",
    "torch.nn.parallel.distributed.DistributedDataParallel",
    "torch.distributed.fsdp.FullyShardedDataParallel",
    "torch.distributed.fsdp.fully_sharded_data_parallel.FullyShardedDataParallel",
}
# A test or a path that already tells the ranks apart (a per-rank file is meant to be written
# by every rank: `f"shard_{rank}.pt"`).
_PER_RANK = re.compile(r"rank|main|master|zero|process_index|local_process|is_global", re.I)
_SAVE_TEXT = TextGate(("save(",), word_start=True)
_RELEVANT = TextGate(("init_process_group", "DistributedDataParallel", "FullyShardedDataParallel"))


class SaveOnEveryRank(Rule):
    code = "TL604"
    name = "save-on-every-rank"
    family = "dist"
    severity = Severity.WARNING
    summary = (
        "`torch.save(..., path)` with no rank test in a function that sets up DDP or FSDP: "
        "every rank writes the same file at once."
    )

    def check(self, ctx: RuleContext) -> None:
        if not mentions(ctx, _RELEVANT) or not mentions(ctx, _SAVE_TEXT):
            return
        sites = sites_of(ctx)
        distributed = {
            id(site.function)
            for site in sites.calls
            if (ctx.facts.imports.qualify(site.call.func) or "") in _DISTRIBUTED_SETUP
        }
        for site in sites.calls:
            if (ctx.facts.imports.qualify(site.call.func) or "") not in _SAVES:
                continue
            if id(site.function) not in distributed or not _same_file_everywhere(ctx, sites, site):
                continue
            path = site.call.args[1].value
            ctx.report(
                site.call,
                f"`torch.save(..., {ctx.text(path)})` runs on every rank of this DDP/FSDP run "
                "with no rank test: all the processes write the same file at the same time, "
                "which wastes I/O and can leave a truncated or interleaved checkpoint; save on "
                "one rank (`if dist.get_rank() == 0:`; with FSDP, take the `state_dict()` on "
                "every rank first, since it gathers the shards), then `dist.barrier()` before "
                "anyone reads it.",
            )


def _same_file_everywhere(ctx: RuleContext, sites: Sites, site: CallSite) -> bool:
    """The save runs on every rank (no rank test around it) and to a path that does not name
    the rank."""
    call = site.call
    if len(call.args) < 2 or any(a.star for a in call.args):
        return False
    if reached_by(site) is not None:
        return False
    module = ctx.facts.parsed.module
    flags: set[str] | None = None
    for branch in site.branches:
        if _PER_RANK.search(module.code_for_node(branch.node.test)):
            return False  # a rank test we do not classify (`if args.rank % ngpus == 0:`)
        if flags is None:
            flags = _rank_flags(module)
        if any(name in flags for name in _names_tested(branch.node.test)):
            return False  # `if args.save_logs:` after `args.save_logs = ... and is_master(args)`
    return not _PER_RANK.search(module.code_for_node(call.args[1].value))


def _names_tested(test: cst.BaseExpression) -> list[str]:
    """The variables and attributes an `if` test reads (`args.save_logs`, `should_save`)."""
    found: list[str] = []

    class Reads(cst.CSTVisitor):
        def visit_Name(self, node: cst.Name) -> None:
            found.append(node.value)

        def visit_Attribute(self, node: cst.Attribute) -> bool:
            name = dotted(node)
            if name is not None:
                found.append(name)
            return True

    test.visit(Reads())
    return found


def _rank_flags(module: cst.Module) -> set[str]:
    """Names the file assigns from a rank test: a flag that says "this is the main process"."""
    flags: set[str] = set()

    def enter(node: cst.CSTNode) -> bool:
        if type(node) is cst.Assign:
            if _PER_RANK.search(module.code_for_node(node.value)):
                for target in node.targets:
                    name = dotted(target.target)
                    if name is not None:
                        flags.add(name)
        elif type(node) is cst.AnnAssign:
            name = dotted(node.target)
            value = node.value
            if (
                value is not None
                and name is not None
                and _PER_RANK.search(module.code_for_node(value))
            ):
                flags.add(name)
        return not isinstance(node, cst.BaseExpression)  # assignments are statements

    preorder(module, enter)
    return flags
