"""Questions about training semantics that several rules ask of the loop model."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import libcst as cst

from torchlint.analysis.apis import FRAMEWORK_SETUP
from torchlint.analysis.facts import ModuleFacts
from torchlint.analysis.loops import IterEvent, LoopModel, same_object
from torchlint.analysis.model import (
    Event,
    Frame,
    GuardFrame,
    Kind,
    LoopFrame,
    Scope,
    WithFrame,
    WithKind,
    grad_disabled,
)
from torchlint.analysis.names import (
    looks_like_framework,
    looks_like_optimizer,
    strip_module_wrapper,
)
from torchlint.analysis.resolve import Roles
from torchlint.analysis.syntax import string_value_of
from torchlint.analysis.value import iterates_data

# A file that never mentions an optimizer is not training anything: its backward loops compute
# gradients for inspection (saliency maps, gradient checks) and need no step.
OPTIMIZER_EVIDENCE = re.compile(r"optim|Optimizer|(\b|_)opt(\b|_)|\.step\(")

_UPDATE_WORDS = ("step", "optim", "update")
_CLEAR_WORDS = ("zero", "clear", "reset")


def mentions_optimizer(text: str) -> bool:
    return bool(OPTIMIZER_EVIDENCE.search(text))


def is_opaque_call(event: Event) -> bool:
    return event.kind is Kind.CALL and event.callee is None


def passes_optimizer(event: Event, roles: Roles) -> bool:
    if event.method in FRAMEWORK_SETUP and looks_like_framework(event.receiver or ""):
        return False  # `accelerator.prepare(model, optimizer)` wraps it, it does not step it
    texts = [*event.arg_texts, *(t for _, t in event.kwarg_texts)]
    return any(t and roles.role(t, event.scope) == "optimizer" for t in texts)


# Getters named like an update: a LightningModule's `self.optimizers()` hands them over.
_GETTERS = {"optimizers", "lr_schedulers"}


def called_name(event: Event) -> str:
    """The called function's or method's name, lowercased; empty for a getter named like an
    update (`self.optimizers()`)."""
    name = (event.method or "").lower()
    return "" if name in _GETTERS and not event.arg_texts else name


def may_step(e: IterEvent, roles: Roles) -> bool:
    """An optimizer update may happen here: a step, an unclassified `.step()`, a manual update
    that reads `.grad`, or a call we cannot see into that is handed the optimizer or says so."""
    if e.kind in (Kind.STEP, Kind.MAYBE_STEP, Kind.GRAD_READ):
        return True
    if is_opaque_call(e.event):
        name = called_name(e.event)
        return any(w in name for w in _UPDATE_WORDS) or passes_optimizer(e.event, roles)
    return False


def may_clear(e: IterEvent, roles: Roles) -> bool:
    """Gradients may be cleared here (a DeepSpeed engine's step clears them too)."""
    if e.kind is Kind.ZERO_GRAD or (e.kind is Kind.STEP and e.event.via == "engine"):
        return True
    if is_opaque_call(e.event):
        name = called_name(e.event)
        return any(w in name for w in _CLEAR_WORDS) or passes_optimizer(e.event, roles)
    return False


def scope_may_step(
    scope: Scope, roles: Roles, outside: LoopFrame | None = None, named: str | None = None
) -> bool:
    """Whether `scope` (outside `outside`, when given) or a function it calls may step (the
    optimizer written `named`, when given)."""
    return _StepSearch(scope, roles, outside, named).visit(scope, 0)


@dataclass
class _StepSearch:
    """What `scope_may_step` looks for, and the functions it has seen. (Methods, not a
    recursive closure: a closure that calls itself is a reference cycle, which would keep the
    file's whole tree alive, through `roles`, until the cyclic garbage collector ran.)"""

    scope: Scope
    roles: Roles
    outside: LoopFrame | None
    named: str | None
    seen: set[int] = field(default_factory=set)

    def steps(self, event: Event) -> bool:
        named = self.named
        if named is None or event.kind is Kind.GRAD_READ:
            return True
        receiver = (event.receiver or "").removeprefix("self.")
        return receiver == named or (event.kind is Kind.MAYBE_STEP and not event.receiver)

    def visit(self, current: Scope, depth: int) -> bool:
        if id(current) in self.seen or depth > 4:
            return False
        self.seen.add(id(current))
        named, roles = self.named, self.roles
        for event in current.events:
            if self.outside is not None and current is self.scope and self.outside in event.path:
                continue
            if event.kind in (Kind.STEP, Kind.MAYBE_STEP, Kind.GRAD_READ) and self.steps(event):
                return True
            if event.kind is Kind.CALL:
                if event.callee is not None:
                    if self.visit(event.callee, depth + 1):
                        return True
                elif named is not None:
                    # One optimizer's step: a call named like a step (handed that optimizer,
                    # or none), not one that only receives it (`adjust_learning_rate(opt)`).
                    texts = [*event.arg_texts, *(t for _, t in event.kwarg_texts)]
                    if any(w in called_name(event) for w in _UPDATE_WORDS) and (
                        named in texts or not passes_optimizer(event, roles)
                    ):
                        return True
                elif any(w in called_name(event) for w in _UPDATE_WORDS) or passes_optimizer(
                    event, roles
                ):
                    return True
        return False


def is_whole_model(text: str | None) -> bool:
    """`model`, `self.model`, `model.module`: the whole network, not `model.encoder`."""
    if not text:
        return False
    text = strip_module_wrapper(text)
    if text.startswith("self."):
        text = text[5:]
    return "." not in text and "[" not in text


def clears_all_gradients(e: IterEvent, roles: Roles) -> bool:
    """A clear that resets the gradients the optimizer steps with (not one sub-module's)."""
    if e.kind is not Kind.ZERO_GRAD:
        return False
    if e.event.method == "grad":  # `p.grad = None` inside `for p in X.parameters()`
        for frame in reversed(e.frames):
            if isinstance(frame, GuardFrame):
                return False  # `if "last_layer" in name: p.grad = None`: some of them only
            if isinstance(frame, LoopFrame) and frame.is_param_loop:
                owner = frame.iter_text.rsplit(".", 1)[0]
                return is_whole_model(owner) or "param_groups" in frame.iter_text
        return False
    return roles.role(e.receiver, e.event.scope) == "optimizer" or is_whole_model(e.receiver)


def clears_for(zero: IterEvent, step: IterEvent, roles: Roles) -> bool:
    """Whether clearing `zero` affects the gradients that `step` applies."""
    if roles.role(zero.receiver, zero.event.scope) == "optimizer":
        return zero.receiver == step.receiver
    owner = roles.optimizer_owner(step.receiver)
    cleared = _cleared_model(zero)
    if owner is not None and cleared is not None:
        return same_object(_unself(owner), _unself(cleared))
    return True


def _unself(text: str) -> str:
    return text[5:] if text.startswith("self.") else text


def _cleared_model(zero: IterEvent) -> str | None:
    if zero.event.method == "grad":
        for frame in reversed(zero.frames):
            if isinstance(frame, LoopFrame) and frame.is_param_loop:
                return frame.iter_text.rsplit(".", 1)[0]
        return None
    return zero.receiver


def first(events: list[IterEvent], kind: Kind) -> IterEvent | None:
    return next((e for e in events if e.kind is kind), None)


# Modules that are updated without backprop: an exponential moving average of the model, a
# teacher, a momentum encoder, a DQN target network, SWA weights.
_NOT_TRAINED = re.compile(
    r"(^|[._])(ema|ema_\w+|\w+_ema|teacher\w*|target(_\w+)?|momentum\w*|shadow\w*|swa\w*|"
    r"averaged\w*|frozen\w*)($|[._\[])",
    re.IGNORECASE,
)


def not_trained(receiver: str) -> bool:
    """Whether a module's name says that no optimizer trains it (`ema.ema`, `teacher`,
    `target_network`, `model_ema`)."""
    return bool(_NOT_TRAINED.search(strip_module_wrapper(receiver)))


def forwards(model: LoopModel, receiver: str) -> bool:
    """Whether the loop runs `receiver` as a function with gradients on (a training forward)."""
    target = strip_module_wrapper(receiver)
    for e in model.events:
        if e.kind is not Kind.CALL or e.event.callee is not None or e.callee_text is None:
            continue
        if not e.in_context(WithKind.NO_GRAD) and strip_module_wrapper(e.callee_text) == target:
            return True
    return False


def opaque_training_step(e: IterEvent, roles: Roles) -> bool:
    """A call we cannot see into that is handed a tensor and the optimizer, such as timm's
    `loss_scaler(loss, optimizer, parameters=...)`: it runs backward and step inside."""
    return (
        is_opaque_call(e.event) and bool(e.event.tensor_args) and passes_optimizer(e.event, roles)
    )


def iterates_steps(model: LoopModel) -> bool:
    """A loop whose iterations are training steps (over batches, `range(steps)`, `while`, a
    framework's step method), not a loop over several losses of one graph or over optimizers."""
    node = model.loop.node
    if type(node) is cst.While or isinstance(node, cst.FunctionDef):
        return True
    text = model.loop.iter_text
    return text.startswith(("range(", "enumerate(range(", "tqdm(range(")) or iterates_data(
        model.loop
    )


def does_step_work(model: LoopModel, roles: Roles) -> bool:
    """The loop itself trains: backward or step (or an opaque training call) at its own level."""
    return model.is_step_loop or any(
        e.depth == 0 and opaque_training_step(e, roles) for e in model.events
    )


def uses_autocast(model: LoopModel) -> bool:
    """Whether the loop's work runs under float16 autocast (inside the loop, around it, or
    through a decorated function it calls): the precision that needs loss scaling."""
    frame = autocast_frame((*model.loop.scope.decorators, *model.loop.outer))
    if frame is not None and is_float16(frame):
        return True
    for e in model.events:
        frame = autocast_frame(context(model, e))
        if frame is not None and is_float16(frame):
            return True
    return False


def optimizer_name(roles: Roles, model: LoopModel) -> str:
    """The name of an optimizer the loop can see, for messages; `optimizer` when none."""
    for e in model.events:
        for text in (e.receiver, *e.event.arg_texts):
            if text and roles.role(text, e.event.scope) == "optimizer":
                return text
    known = roles.targets_with_role("optimizer")
    return known[0] if known else "optimizer"


__all__ = [
    "called_name",
    "clears_all_gradients",
    "clears_for",
    "first",
    "forwards",
    "grad_disabled",
    "is_opaque_call",
    "is_whole_model",
    "looks_like_optimizer",
    "may_clear",
    "may_step",
    "mentions_optimizer",
    "optimizer_name",
    "scope_may_step",
]


def context(model: LoopModel, e: IterEvent) -> tuple[Frame, ...]:
    """Every frame around an event, outermost first: the loop's own surroundings (decorators,
    `with` blocks around the loop), then what lies between the loop and the event."""
    return (*model.loop.outer, *e.frames)


def autocast_frame(frames: tuple[Frame, ...]) -> WithFrame | None:
    """The innermost enabled autocast around a point, if any (`enabled=False` inside it
    turns it off again)."""
    for frame in reversed(frames):
        if isinstance(frame, WithFrame):
            if frame.kind is WithKind.AUTOCAST:
                return frame
            if frame.kind is WithKind.AUTOCAST_OFF:
                return None
    return None


def is_float16(frame: WithFrame) -> bool:
    """CUDA autocast computes in float16 unless told otherwise (CPU defaults to bfloat16)."""
    if frame.autocast_dtype in ("bfloat16",):
        return False
    if frame.autocast_dtype in ("float16", "half"):
        return True
    return (frame.autocast_device or "").startswith("cuda")


def called_only_without_grad(scope: Scope, callers: dict[int, list[Event]], level: int = 0) -> bool:
    """Every call site of `scope` in the module runs with gradients off (directly, or because
    its own callers all do), and there is at least one."""
    if scope.is_module or level > 4:
        return False
    sites = callers.get(id(scope), [])
    return bool(sites) and all(
        grad_disabled(site.path) or called_only_without_grad(site.scope, callers, level + 1)
        for site in sites
    )


def visible_scaler(facts: ModuleFacts, model: LoopModel) -> str | None:
    """A GradScaler built (and not disabled) where the loop can see it: before the loop in
    its own function or at module level, or in its class (`self.scaler`)."""
    scope = model.loop.scope
    for obj in facts.constructed:
        if obj.role != "scaler" or obj.enabled is False:
            continue
        if obj.scope is scope or obj.scope.is_module:
            if obj.order < model.loop.order:
                return obj.target
            continue
        if (
            obj.target.startswith("self.")
            and scope.class_name is not None
            and obj.scope.class_name == scope.class_name
        ):
            return obj.target
    return None


def outermost_training_loops(step_loops: list[LoopModel]) -> list[LoopModel]:
    """The step loops that do not run inside another one's iteration (nested in it, or in a
    function it calls, such as an inner gradient-accumulation loop)."""
    inside_another: set[int] = set()
    for model in step_loops:
        inside_another |= model.inner_loops - {id(model.loop.node)}
    return [m for m in step_loops if id(m.loop.node) not in inside_another]


def is_main_guard(statement: cst.BaseStatement) -> bool:
    """`if __name__ == "__main__":` (either side of the `==`, any quotes)."""
    if not isinstance(statement, cst.If):
        return False
    test = statement.test
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return False
    target = test.comparisons[0]
    if not isinstance(target.operator, cst.Equal):
        return False
    sides = (test.left, target.comparator)
    names = [side for side in sides if isinstance(side, cst.Name) and side.value == "__name__"]
    strings = [
        side
        for side in sides
        if isinstance(side, cst.SimpleString) and string_value_of(side) == "__main__"
    ]
    return len(names) == 1 and len(strings) == 1
