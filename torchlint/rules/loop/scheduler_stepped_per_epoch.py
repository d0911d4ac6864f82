"""TL118: a schedule sized in optimizer steps, stepped once per epoch."""

from __future__ import annotations

import libcst as cst

from torchlint.analysis.loops import IterEvent, LoopModel, runs_every_iteration
from torchlint.analysis.model import ConstructedObject, Kind, LoopFrame
from torchlint.analysis.names import dotted
from torchlint.analysis.value import iterates_data
from torchlint.diagnostics import Severity
from torchlint.rules.base import Rule, RuleContext

_HOPS = 2  # how far names in the constructor's arguments are followed to their values


class SchedulerSteppedPerEpoch(Rule):
    code = "TL118"
    name = "scheduler-stepped-per-epoch"
    family = "loop"
    severity = Severity.WARNING
    summary = (
        "A learning-rate schedule sized in optimizer steps (`len(loader) * epochs`, "
        "`steps_per_epoch=`) is stepped once per epoch, so it runs len(loader) times too slowly."
    )

    def check(self, ctx: RuleContext) -> None:
        seen: set[int] = set()
        for model in ctx.loops.all:
            for sched in model.events:
                if sched.kind is not Kind.SCHEDULER_STEP or id(sched.event) in seen:
                    continue
                if sched.event.has_closure or not runs_every_iteration(sched):
                    continue  # `scheduler.step(val_loss)`, a schedule stepped now and then
                batches = _batch_loop_stepping(model, sched)
                if batches is None:
                    continue
                loop, step = batches
                built = _construction(ctx, sched)
                if built is None:
                    continue
                sized = _sized_in_steps(ctx, built)
                if sized is None:
                    continue
                seen.add(id(sched.event))
                ctx.report(
                    sched.event.node,
                    f"`{ctx.text(sched.event.node)}`{ctx.where(sched)} runs once per iteration "
                    f"of the {model.loop.label}, but the schedule is sized in optimizer steps "
                    f"(`{sized}`) and `{ctx.text(step.event.node)}`{ctx.where(step)} runs once "
                    f"per batch of the {loop.label}: the schedule advances once for every "
                    "epoch's worth of steps (a warm-up that never ends, a decay that barely "
                    "starts); step the scheduler after each optimizer step.",
                )


def _batch_loop_stepping(model: LoopModel, sched: IterEvent) -> tuple[LoopFrame, IterEvent] | None:
    """An optimizer step in a loop over batches nested in the scheduler's iteration, where the
    same scheduler is not stepped: that loop, and the step."""
    depth = len(sched.loop_chain)
    for step in model.events:
        if step.kind is not Kind.STEP or not step.related(sched) or step.exclusive_with(sched):
            continue
        chain = step.loop_chain
        if len(chain) <= depth or chain[:depth] != sched.loop_chain:
            continue
        inner_id = chain[depth]
        if any(
            e.kind is Kind.SCHEDULER_STEP
            and e.receiver == sched.receiver
            and inner_id in e.loop_chain
            for e in model.events
        ):
            return None  # the same schedule is also stepped per batch
        for frame in step.frames:
            if isinstance(frame, LoopFrame) and id(frame.node) == inner_id:
                if iterates_data(frame):
                    return frame, step
                break
    return None


def _construction(ctx: RuleContext, sched: IterEvent) -> ConstructedObject | None:
    """Where the stepped scheduler is built in this module (the last construction of it)."""
    found = None
    for obj in ctx.facts.constructed:
        if obj.role == "scheduler" and obj.target == sched.receiver:
            found = obj
    if found is None or found.qualname.endswith("ReduceLROnPlateau"):
        return None
    return found


# The arguments that give a schedule's length, read first: the one a reader looks for.
_LENGTHS = ("steps_per_epoch", "total_steps", "num_training_steps", "total_iters", "T_max")
_NOT_LENGTHS = ("optimizer", "last_epoch")
# What a length is computed with: `len(loader) * epochs // accumulation`, `math.ceil(...)`.
# A length that divides counts epochs, not steps: `max_iters // len(loader)`.
_DIVISIONS = (cst.Divide, cst.FloorDivide)
_NUMERIC_CALLS = ("len", "int", "round", "min", "max", "math.ceil", "math.floor", "ceil", "floor")


def _sized_in_steps(ctx: RuleContext, built: ConstructedObject) -> str | None:
    """The argument that sizes the schedule in batches: `steps_per_epoch=...`, or one whose
    value (through the names it reads, as assigned in the constructing function) takes the
    length of something (`num_training_steps=len(loader) * epochs`), with the assignment the
    length came from when it is not in the argument itself; None when none does."""
    function = built.scope.node
    where = function if isinstance(function, cst.FunctionDef) else None
    args = sorted(
        built.node.args,
        key=lambda a: (
            _LENGTHS.index(a.keyword.value)
            if a.keyword is not None and a.keyword.value in _LENGTHS
            else len(_LENGTHS)
        ),
    )
    for position, arg in enumerate(args):
        keyword = arg.keyword.value if arg.keyword is not None else None
        if keyword == "steps_per_epoch":
            return ctx.text(arg)
        if keyword in _NOT_LENGTHS or (keyword is None and position == 0):
            continue  # the optimizer, a resumed position
        origin = _length_origin(ctx, arg.value, where, _HOPS)
        if origin is not None:
            text = ctx.text(arg)
            return text if origin is arg.value else f"{text}`, `{origin}"
    return None


def _length_origin(
    ctx: RuleContext, value: cst.BaseExpression, where: cst.FunctionDef | None, hops: int
) -> cst.BaseExpression | str | None:
    """`value` itself when its arithmetic takes a `len(...)` other than as a divisor; else
    `name = ...` for the assignment, of a name it reads, that does (following names `hops`
    deep); else None. Only arithmetic is followed: a length passed into a constructor sizes
    something else."""
    stack: list[cst.CSTNode] = [value]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is cst.Call:
            callee = dotted(node.func)  # type: ignore[attr-defined]
            if callee == "len":
                return value
            if callee in _NUMERIC_CALLS:
                stack.extend(a.value for a in node.args)  # type: ignore[attr-defined]
        elif kind is cst.Name and hops > 0:
            for assigned in ctx.facts.sites.values_of(where, node.value):  # type: ignore[attr-defined]
                found = _length_origin(ctx, assigned, where, hops - 1)
                if found is assigned:
                    return f"{node.value} = {ctx.text(assigned)}"  # type: ignore[attr-defined]
                if found is not None:
                    return found
        elif kind is cst.BinaryOperation:
            stack.append(node.left)  # type: ignore[attr-defined]
            if not isinstance(node.operator, _DIVISIONS):  # type: ignore[attr-defined]
                stack.append(node.right)  # type: ignore[attr-defined]
        elif kind is cst.UnaryOperation:
            stack.append(node.expression)  # type: ignore[attr-defined]
    return None
