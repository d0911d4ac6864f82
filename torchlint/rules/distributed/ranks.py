"""Which side of an `if` runs on the main process only, or on every process but the main one:
`if rank == 0:`, `if accelerator.is_main_process:`, `if not is_master():`,
`if args.local_rank in (-1, 0):`. A test against -1 alone (`local_rank != -1`) asks whether the
run is distributed at all, not which rank this is."""

from __future__ import annotations

import re

import libcst as cst

from torchlint.analysis.names import dotted
from torchlint.rules.distributed.sites import CallSite, last

# The flag or predicate that holds on the main process only.
_MAIN_FLAG = re.compile(
    r"(is_)?(local_|global_)?(main|master)(_process|_proc|_rank|_worker|_node)?(_only)?"
    r"|is_global_zero|is_rank_?(zero|0)|is_root(_process)?|rank_?zero"
)
_RANK = re.compile(r"(^|_)rank$|^get_(local_|global_)?rank$|^(local_)?process_index$")
# A test of whether the run is distributed at all: `not args.distributed`, `world_size == 1`.
_NOT_DISTRIBUTED = re.compile(r"distributed|ddp|is_initialized|world_size|num_processes|multi_gpu")

MAIN, OTHERS = True, False
# Decorators that run the function on the main process only.
_ONLY_MAIN = {"rank_zero_only", "main_process_only", "on_main_process"}


def main_side(test: cst.BaseExpression) -> bool | None:
    """MAIN when the body of `if test:` runs on the main process only, OTHERS when it runs on
    every other process only, None when the test does not tell ranks apart."""
    if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
        inner = main_side(test.expression)
        return None if inner is None else not inner
    if type(test) is cst.BooleanOperation:
        left, right = main_side(test.left), main_side(test.right)
        if type(test.operator) is cst.And:
            sides = {s for s in (left, right) if s is not None}
            return sides.pop() if len(sides) == 1 else None
        # `not distributed or rank == 0`: in a distributed run, the main process only.
        if left is not None and (right == left or _run_mode(test.right)):
            return left
        if right is not None and _run_mode(test.left):
            return right
        return None
    if isinstance(test, cst.Name | cst.Attribute | cst.Call):
        target = test.func if type(test) is cst.Call else test
        name = (dotted(target) or "").rsplit(".", 1)[-1]
        if type(test) is cst.Call and test.args:
            return None  # `is_main_process(group)`: some other question
        if name in ("main", "master") or not _MAIN_FLAG.fullmatch(name):
            return None  # `if main:` may be anything
        return MAIN
    if type(test) is cst.Comparison and len(test.comparisons) == 1:
        return _rank_comparison(test)
    return None


def _run_mode(test: cst.BaseExpression) -> bool:
    text = (dotted(test.func) if type(test) is cst.Call else dotted(test)) or ""
    if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
        inner = test.expression
        text = (dotted(inner.func) if type(inner) is cst.Call else dotted(inner)) or ""
    if type(test) is cst.Comparison:
        text = dotted(test.left) or ""
    return bool(_NOT_DISTRIBUTED.search(text.rsplit(".", 1)[-1]))


def _is_rank(node: cst.BaseExpression) -> bool:
    target = node.func if type(node) is cst.Call else node
    name = (dotted(target) or "").rsplit(".", 1)[-1]
    return bool(_RANK.search(name))


def _ints(node: cst.BaseExpression) -> set[int] | None:
    if type(node) is cst.Integer and node.value.isdigit():
        return {int(node.value)}
    if (
        type(node) is cst.UnaryOperation
        and type(node.operator) is cst.Minus
        and type(node.expression) is cst.Integer
        and node.expression.value.isdigit()
    ):
        return {-int(node.expression.value)}
    if isinstance(node, cst.Tuple | cst.List | cst.Set):
        values: set[int] = set()
        for element in node.elements:
            inner = _ints(element.value)
            if inner is None:
                return None
            values |= inner
        return values
    return None


def _rank_comparison(test: cst.Comparison) -> bool | None:
    target = test.comparisons[0]
    op, lhs, rhs = target.operator, test.left, target.comparator
    if not _is_rank(lhs):
        return None
    consts = _ints(rhs)
    if consts is None or 0 not in consts or not consts <= {0, -1}:
        return None  # `rank == -1`: not distributed at all; `rank == 3`: one worker's job
    if isinstance(op, cst.Equal | cst.In | cst.Is | cst.LessThanEqual):
        return MAIN
    if isinstance(op, cst.NotEqual | cst.NotIn | cst.IsNot | cst.GreaterThan):
        return OTHERS
    return None


def reached_by(site: CallSite) -> tuple[bool, str] | None:
    """Which ranks reach `site` (MAIN / OTHERS) and the rank test that decides it, innermost
    first; None when every rank does."""
    module = None
    for branch in reversed(site.branches):
        side = main_side(branch.node.test)
        if side is not None:
            if module is None:
                module = cst.Module(body=[])
            text = module.code_for_node(branch.node.test)
            sense = side if branch.branch == 0 else not side
            return sense, (
                f"under `if {text}:`" if branch.branch == 0 else f"in the `else` of `if {text}:`"
            )
    function = site.function
    if function is not None and any(
        last(_decorator_name(d.decorator)) in _ONLY_MAIN for d in function.decorators
    ):
        return MAIN, ""
    return None


def _decorator_name(node: cst.BaseExpression) -> str:
    target = node.func if type(node) is cst.Call else node
    return dotted(target) or ""
