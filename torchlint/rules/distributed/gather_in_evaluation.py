"""TL605: `accelerator.gather(...)` of predictions or metrics in the loop over a prepared
evaluation loader: the samples Accelerate pads onto the last batch are counted too."""

from __future__ import annotations

import re

import libcst as cst

from torchlint.analysis.facts import ModuleFacts
from torchlint.analysis.names import dotted
from torchlint.diagnostics import Severity
from torchlint.rules.base import Rule, RuleContext
from torchlint.rules.distributed.sites import Sites, last, mentions, sites_of

_RELEVANT = re.compile(r"\.gather\(")
_ACCELERATOR = re.compile(r"accelerator")
_EVAL_LOADER = re.compile(r"(^|_)(eval|val|valid|validation|test|dev)(_|$)|^(eval|val|test)")
# The padded samples are already dropped by hand: `preds[: len(eval_dataloader.dataset)]`, or
# the `samples_seen` bookkeeping of Accelerate's older examples.
_TRUNCATED = re.compile(r"\[\s*:\s*len\(|samples_seen|num_samples")
_WRAPPERS = {"enumerate", "tqdm", "tqdm.tqdm", "tqdm.auto.tqdm", "iter"}


class GatherInEvaluation(Rule):
    code = "TL605"
    name = "gather-in-evaluation"
    family = "dist"
    severity = Severity.WARNING
    summary = (
        "`accelerator.gather(...)` in the loop over a prepared evaluation loader: the samples "
        "padded onto the last batch are counted twice; use `gather_for_metrics`."
    )
    fixable = True

    def check(self, ctx: RuleContext) -> None:
        if not mentions(ctx, _RELEVANT) or not mentions(ctx, _ACCELERATOR):
            return
        sites = sites_of(ctx)
        prepared = _prepared_names(sites)
        if not prepared:
            return
        module = ctx.facts.parsed.module
        for loop, loader, function in _eval_loops(ctx.facts, prepared):
            around = module.code_for_node(function) if function else ctx.facts.parsed.text
            if _TRUNCATED.search(around):
                continue
            for call in _gathers(loop):
                func = call.func
                assert isinstance(func, cst.Attribute)
                owner = ctx.text(func.value)
                ctx.report(
                    call,
                    f"`{owner}.gather(...)` in the evaluation loop over `{loader}`, which "
                    "Accelerate prepared: on several processes it pads the last batch with "
                    "repeated samples so that every process gets one, and `gather` returns "
                    "them too, so the metric counts those samples twice; use "
                    f"`{owner}.gather_for_metrics(...)`, which drops them.",
                    fix=ctx.fix(
                        "unsafe",
                        "Use `gather_for_metrics`",
                        ctx.replace(func, f"{owner}.gather_for_metrics"),
                    ),
                )


def _prepared_names(sites: Sites) -> set[str]:
    """The names (as written) bound to what `accelerator.prepare(...)` returns."""
    names: set[str] = set()
    for site in sites.calls:
        head, _, method = (site.callee or "").rpartition(".")
        if method == "prepare" and _ACCELERATOR.search(last(head)):
            names.update(sites.targets.get(id(site.call), []))
    return names


_Loop = tuple[cst.For, str, cst.FunctionDef | None]


def _eval_loops(facts: ModuleFacts, prepared: set[str]) -> list[_Loop]:
    """The `for` loops over a prepared loader named for evaluation (`eval_dataloader`), also
    through `enumerate(...)` / `tqdm(...)`, with the function around each, in the order of
    the file. (From the loops the walker recorded, each with its scope: walking the module
    again with a libcst visitor cost about 3% of an analysis of mature code.)"""
    found: list[_Loop] = []
    for loop in sorted(facts.loops, key=lambda frame: frame.order):
        node = loop.node
        if type(node) is not cst.For:
            continue
        source = node.iter
        while type(source) is cst.Call and dotted(source.func) in _WRAPPERS and source.args:
            source = source.args[0].value
        name = dotted(source)
        if name is None or name not in prepared or not _EVAL_LOADER.search(last(name).lower()):
            continue
        function = loop.scope.node  # a function's scope, or the module's
        found.append((node, name, function if type(function) is cst.FunctionDef else None))
    return found


def _gathers(loop: cst.For) -> list[cst.Call]:
    """`accelerator.gather(...)` calls in the loop's body (not in nested functions)."""
    calls = _GatherCalls()
    loop.body.visit(calls)
    return calls.found


class _GatherCalls(cst.CSTVisitor):
    def __init__(self) -> None:
        super().__init__()
        self.found: list[cst.Call] = []

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if (
            type(func) is cst.Attribute
            and func.attr.value == "gather"
            and node.args
            and _ACCELERATOR.search(last(dotted(func.value)))
        ):
            self.found.append(node)
