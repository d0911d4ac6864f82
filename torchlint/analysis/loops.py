"""The loop model: for each loop, the ordered events of one iteration, with calls into functions and
methods of the module and of other project files expanded in place (bounded, recursion-safe),
receivers renamed into the loop's own terms through the arguments of each call."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property

import libcst as cst

from torchlint.analysis.flow import NO_BINDING, Binding, bind_call
from torchlint.analysis.guards import decided
from torchlint.analysis.model import (
    CallFrame,
    Event,
    Frame,
    GuardFrame,
    GuardKind,
    Kind,
    LoopFrame,
    Scope,
    WithFrame,
    WithKind,
)
from torchlint.analysis.names import dotted, rebind, strip_module_wrapper
from torchlint.analysis.record import record
from torchlint.analysis.resolve import Roles, call_binding, params_at
from torchlint.analysis.subtree import preorder

MAX_CALL_DEPTH = 5
MAX_EVENTS_PER_LOOP = 20_000


@record()
class IterEvent:
    """One event as it happens during an iteration of a particular loop."""

    event: Event
    kind: Kind  # may differ from event.kind: `o.step()` is an optimizer step when `o` is one
    frames: tuple[Frame, ...]  # from inside the loop down to the event, calls included
    receiver: str | None  # in the loop's terms
    site: Event  # the event in the loop's own scope through which this one is reached
    subject_is_tensor: bool | None
    index: int
    # The values of the parameters of the calls through which the loop reaches the event.
    binding: Binding
    # BACKWARD: the modules the loss was computed by, in the loop's terms.
    reach: frozenset[str] = frozenset()
    # The receiver is an object a function the loop calls makes for itself (a model that
    # `evaluate()` loads, a model that each `train()` of a hyper-parameter search builds):
    # not one of the loop's own objects, even when the names agree.
    local: bool = False
    # HOST_SYNC: the value is read from a parameter that every call on the way passes a host
    # value (the loop's batch, before the helper moves it): no device sync.
    on_host: bool = False

    @cached_property
    def depth(self) -> int:
        """How many loops (other than loops over parameters) lie between the loop and here."""
        return sum(1 for f in self.frames if isinstance(f, LoopFrame) and not f.is_param_loop)

    @cached_property
    def guards(self) -> tuple[GuardFrame, ...]:
        return tuple(f for f in self.frames if isinstance(f, GuardFrame))

    @cached_property
    def withs(self) -> tuple[WithFrame, ...]:
        return tuple(f for f in self.frames if isinstance(f, WithFrame))

    @cached_property
    def loop_chain(self) -> tuple[int, ...]:
        """The loops (not parameter loops) between the loop and here, outermost first."""
        return tuple(
            id(f.node) for f in self.frames if isinstance(f, LoopFrame) and not f.is_param_loop
        )

    def related(self, other: IterEvent) -> bool:
        """Whether the two happen in one line of nested loops (one's loops enclose the other's),
        not in two sibling loops, such as two training functions an outer loop calls in turn."""
        a, b = self.loop_chain, other.loop_chain
        shorter = min(len(a), len(b))
        return a[:shorter] == b[:shorter]

    @cached_property
    def own_guards(self) -> tuple[GuardFrame, ...]:
        """The guards between the loop and the event that are not inside a nested loop (a
        nested loop's own guards decide per inner iteration, not per iteration of this loop)."""
        guards = []
        for frame in self.frames:
            if isinstance(frame, LoopFrame) and not frame.is_param_loop:
                break
            if isinstance(frame, GuardFrame):
                guards.append(frame)
        return tuple(guards)

    @property
    def is_unconditional(self) -> bool:
        return not self.guards

    @property
    def via_call(self) -> Scope | None:
        """The first function entered on the way here, when the event is not in the loop itself."""
        for frame in self.frames:
            if isinstance(frame, CallFrame):
                return frame.callee
        return None

    def in_context(self, kind: WithKind) -> bool:
        return any(w.kind is kind for w in self.withs)

    def exclusive_with(self, other: IterEvent) -> bool:
        """Whether the two sit in different branches of the same `if`, or of two `if`s with
        the same condition (`if use_amp: ... else: ...` written twice): never both run."""
        mine = {id(g.node): g.branch for g in self.guards}
        if any(mine.get(id(g.node), g.branch) != g.branch for g in other.guards):
            return True
        conditions = {g.condition: g.branch for g in self.guards if g.condition}
        return any(
            g.condition in conditions and conditions[g.condition] != g.branch
            for g in other.guards
            if g.condition
        )

    @property
    def callee_text(self) -> str | None:
        """For calls: what is called, in the loop's terms (`model`, `self.model`)."""
        ref = self.event.callee_ref
        if not ref:
            return None
        if ref[0] == "name":
            return self.receiver
        if ref[0] == "method":
            return f"{self.receiver}.{ref[2]}"
        return ref[-1]


@dataclass(eq=False)
class LoopModel:
    loop: LoopFrame
    events: list[IterEvent]
    memo: dict[str, object] = field(default_factory=dict)  # derived facts, computed once

    def of(self, *kinds: Kind) -> list[IterEvent]:
        return [e for e in self.events if e.kind in kinds]

    @cached_property
    def framework_steps(self) -> bool:
        """A framework runs backward and the optimizer step around this loop's body (a
        LightningModule's `training_step` under automatic optimization)."""
        return bool(self.loop.runner) and not self.loop.manual

    @cached_property
    def has_backward(self) -> bool:
        return self.framework_steps or any(e.kind is Kind.BACKWARD for e in self.events)

    @cached_property
    def is_step_loop(self) -> bool:
        """The loop itself does the training work of a step: backward or optimizer step happen
        in its iteration, not only inside a nested loop."""
        return self.framework_steps or any(
            e.kind in (Kind.BACKWARD, Kind.STEP) and e.depth == 0 for e in self.events
        )

    @cached_property
    def inner_loops(self) -> set[int]:
        """ids of the loop nodes that run inside this loop's iteration (nested or called)."""
        return {id(f.node) for e in self.events for f in e.frames if isinstance(f, LoopFrame)}


class LoopModels:
    """Builds (lazily, once) the model of every loop in a module."""

    def __init__(
        self, scopes: list[Scope], roles: Roles, bodies: list[LoopFrame] | None = None
    ) -> None:
        self._scopes = scopes
        # Functions a framework runs once per batch, each read as a loop's body (frameworks.py).
        self._bodies = bodies or []
        self.roles = roles
        # Events of other project files enter a loop's model as copies whose node is a shallow
        # copy of theirs (one per time they are reached), so that a finding about one is
        # reported at the call in this file through which that loop reaches it:
        # id(copied node) -> (the original node, the call in this file, the original event).
        self.foreign_nodes: dict[int, tuple[cst.CSTNode, Event, Event]] = {}
        self._aliases: dict[int, dict[str, str]] = {}

    def aliases(self, scope: Scope) -> dict[str, str]:
        """The local names of a method that only alias an attribute of its object (`model =
        self.model`): the same object as the attribute, in every method."""
        found = self._aliases.get(id(scope))
        if found is None:
            found = self._aliases[id(scope)] = (
                attribute_aliases(scope.node) if scope.class_name is not None else {}
            )
        return found

    def unalias(self, scope: Scope, text: str | None) -> str | None:
        aliases = self.aliases(scope)
        if not text or not aliases:
            return text
        root = text.split(".", 1)[0].split("[", 1)[0]
        target = aliases.get(root)
        return text if target is None else target + text[len(root) :]

    @cached_property
    def all(self) -> list[LoopModel]:
        loops = [loop for scope in self._scopes for loop in scope.loops]
        return [self.build(loop) for loop in (*loops, *self._bodies)]

    def model_of(self, loop: LoopFrame) -> LoopModel:
        by_loop = self._by_loop
        return by_loop[id(loop)]

    @cached_property
    def _by_loop(self) -> dict[int, LoopModel]:
        return {id(model.loop): model for model in self.all}

    @cached_property
    def training(self) -> list[LoopModel]:
        return [m for m in self.all if m.has_backward]

    def build(self, loop: LoopFrame) -> LoopModel:
        events: list[IterEvent] = []
        for event in loop.scope.events:
            position = -1 if loop.runner else _index_of(event.path, loop)
            if position < 0 and not loop.runner:
                continue
            frames = event.path[position + 1 :]
            receiver = self.unalias(loop.scope, event.receiver)
            self._add(events, event, frames, receiver, event, event.subject_is_tensor, loop)
            callee = self.callee_of(event, NO_BINDING)
            if event.kind is Kind.CALL and callee is not None:
                binding = call_binding(event, callee)
                self._expand(
                    events,
                    callee,
                    (*frames, CallFrame(event, callee)),
                    binding,
                    event.tensor_params,
                    event,
                    (loop.scope, callee),
                    loop,
                    bind_call(event, callee, self.roles.flow),
                    frozenset(),
                    call_consts(event, callee),
                    params_at(event.host_args, event, callee),
                )
        return LoopModel(loop, events)

    def _expand(
        self,
        out: list[IterEvent],
        scope: Scope,
        prefix: tuple[Frame, ...],
        binding: dict[str, str],
        tensor_params: frozenset[str],
        site: Event,
        stack: tuple[Scope, ...],
        loop: LoopFrame,
        values: Binding,
        local_params: frozenset[str],
        consts: dict[str, object] | None = None,
        hosts: frozenset[str] = frozenset(),
    ) -> None:
        """Add the events of `scope`, called from the loop, in the loop's terms.
        `local_params` are the parameters bound to objects local to a function between the
        loop and `scope`."""
        if len(stack) > MAX_CALL_DEPTH:
            return

        def is_local(text: str | None) -> bool:
            root = text.split(".", 1)[0].split("[", 1)[0] if text else ""
            if root in binding:
                return root in local_params
            if root in scope.params and root != "self":
                return True  # passed as an expression (`model=load(path)`): not a loop name
            return root != "self" and root in scope.bound

        for event in scope.events:
            if len(out) >= MAX_EVENTS_PER_LOOP:
                return
            if consts and _dead(event, consts):
                continue  # `if reduction == "mean":` in a helper called with "none"
            frames = prefix + event.path
            written = self.unalias(scope, event.receiver)
            receiver = rebind(written, binding) if written else None
            is_tensor = event.subject_is_tensor
            if is_tensor is None and event.subject is not None:
                is_tensor = True if event.subject in tensor_params else None
            reach = frozenset(rebind(t, binding) for t in event.reach) if event.reach else None
            self._add(
                out, event, frames, receiver, site, is_tensor, loop, values, reach,
                is_local(written), event.subject_param is not None and event.subject_param in hosts,
            )  # fmt: skip
            callee = self.callee_of(event, values)
            if event.kind is Kind.CALL and callee is not None and callee not in stack:
                inner_texts = call_binding(event, callee)
                inner = dict(inner_texts)
                inner = {k: rebind(v, binding) for k, v in inner.items()}
                inner_tensors = set(event.tensor_params)
                params = list(callee.params)
                for param, text in zip(params, event.arg_texts, strict=False):
                    if text.split(".", 1)[0].split("[", 1)[0] in tensor_params:
                        inner_tensors.add(param)
                inner_hosts = set(params_at(event.host_args, event, callee))
                for param, text in call_binding(event, callee).items():
                    if text in hosts:
                        inner_hosts.add(param)  # `self.step(batch)` with this scope's host batch
                self._expand(
                    out,
                    callee,
                    (*frames, CallFrame(event, callee)),
                    inner,
                    frozenset(inner_tensors),
                    site,
                    (*stack, callee),
                    loop,
                    bind_call(event, callee, self.roles.flow, values),
                    frozenset(p for p, text in inner_texts.items() if is_local(text)),
                    call_consts(event, callee),
                    frozenset(inner_hosts),
                )

    def _add(
        self,
        out: list[IterEvent],
        event: Event,
        frames: tuple[Frame, ...],
        receiver: str | None,
        site: Event,
        is_tensor: bool | None,
        loop: LoopFrame,
        values: Binding = NO_BINDING,
        reach: frozenset[str] | None = None,
        local: bool = False,
        on_host: bool = False,
    ) -> None:
        kind = event.kind
        if event.scope.source is not None:
            original = event
            event = replace(event, node=event.node.with_changes())
            self.foreign_nodes[id(event.node)] = (original.node, site, original)
        if kind is Kind.MAYBE_STEP:
            role = self.roles.event_role(event, receiver, values)
            if role == "optimizer":
                kind = Kind.STEP
            elif role == "scheduler":
                kind = Kind.SCHEDULER_STEP
        out.append(
            IterEvent(
                event,
                kind,
                frames,
                receiver,
                site,
                is_tensor,
                len(out),
                values,
                event.reach if reach is None else reach,
                local,
                on_host,
            )
        )

    def callee_of(self, event: Event, values: Binding) -> Scope | None:
        """What a call runs: the function or method it names, else, for a call of an object
        (`loss_scaler(loss, optimizer)`, a parameter bound to an instance), its class's
        `__call__` (or the method called on it)."""
        if event.kind is not Kind.CALL:
            return None
        callee = event.callee
        if callee is not None or event.obj is None:
            return callee
        return self.roles.flow.method_of(event, values)


def call_consts(event: Event, callee: Scope) -> dict[str, object]:
    """The parameters of `callee` that the call `event` leaves at a literal: literal arguments,
    and literal defaults of parameters it does not pass."""
    params = list(callee.params)
    if callee.class_name is not None and params and event.callee_ref[0] != "name":
        params = params[1:]  # self
    consts = dict(callee.param_consts)
    passed = dict(event.arg_consts)
    for index in range(len(event.arg_texts)):
        if index < len(params):
            name = params[index]
            if index in passed:
                consts[name] = passed[index]
            else:
                consts.pop(name, None)
    for key, _ in event.kwarg_texts:
        if key in passed:
            consts[key] = passed[key]
        else:
            consts.pop(key, None)
    return consts


def _dead(event: Event, consts: dict[str, object]) -> bool:
    """The event sits in a branch that the literal arguments of the call rule out."""
    for frame in event.path:
        if isinstance(frame, GuardFrame) and type(frame.node) is cst.If:
            truth = decided(frame.node.test, consts)
            if truth is not None and truth != (frame.branch == 0):
                return True
    return False


def _index_of(path: tuple[Frame, ...], loop: LoopFrame) -> int:
    for i, frame in enumerate(path):
        if frame is loop:
            return i
    return -1


def same_object(a: str | None, b: str | None) -> bool:
    """Whether two receiver texts name the same object (`model.module` is `model`)."""
    if a is None or b is None:
        return False
    return strip_module_wrapper(a) == strip_module_wrapper(b)


def runs_every_iteration(event: IterEvent) -> bool:
    """No guard between the loop and the event makes it skip iterations (rank checks and
    configuration switches still run every step where they are on)."""
    return all(g.kind in (GuardKind.RANK, GuardKind.CONFIG) for g in event.guards)


def attribute_aliases(node: cst.CSTNode) -> dict[str, str]:
    """`name -> self.attr` for each name a function assigns once, from an attribute of `self`
    (`model = self.model`, `net = self.model.module`), and binds no other way."""
    assigned: dict[str, list[cst.BaseExpression | None]] = {}

    def enter(current: cst.CSTNode) -> bool:
        kind = type(current)
        if kind is cst.Assign:
            assert isinstance(current, cst.Assign)
            for target in current.targets:
                if type(target.target) is cst.Name:
                    assigned.setdefault(target.target.value, []).append(current.value)
                else:
                    for name in _target_names(target.target):
                        assigned.setdefault(name, []).append(None)
        elif kind in (cst.AugAssign, cst.AnnAssign):
            target = current.target  # type: ignore[attr-defined]
            for name in _target_names(target):
                assigned.setdefault(name, []).append(None)
        elif kind is cst.For or kind is cst.WithItem:
            target = current.target if kind is cst.For else current.asname  # type: ignore[attr-defined]
            if target is not None:
                inner = target.name if isinstance(target, cst.AsName) else target
                for name in _target_names(inner):
                    assigned.setdefault(name, []).append(None)
        nested = current is not node and isinstance(
            current, (cst.FunctionDef, cst.ClassDef, cst.Lambda)
        )
        return not nested and not isinstance(current, cst.BaseExpression)  # names bind there

    preorder(node, enter)
    aliases = {}
    for name, values in assigned.items():
        if len(values) != 1 or values[0] is None or type(values[0]) is not cst.Attribute:
            continue
        text = dotted(values[0])
        if text is not None and text.startswith("self.") and name != "self":
            aliases[name] = text
    return aliases


def _target_names(node: cst.BaseExpression) -> list[str]:
    if isinstance(node, cst.Name):
        return [node.value]
    if isinstance(node, (cst.Tuple, cst.List)):
        return [n for element in node.elements for n in _target_names(element.value)]
    return []
