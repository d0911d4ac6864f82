"""Abstract values: what every name, attribute, element and return value holds, tracked
flow-sensitively as the walk goes.

A `Value` is one of a few kinds of object training code handles (a module, an optimizer, a
scheduler, a GradScaler, a DataLoader, a tensor, a callable, a context manager...) with what is
known about it: the construction it came from (its identity), the module an optimizer updates,
the optimizer a scheduler drives; for tensors, whether they live on the compute device or on
the host, whether they carry the autograd graph (yes / no / unknown), whether they are
probabilities. Values the walk cannot know yet (a parameter, `self.x` set in another method, the
result of a function defined further down) are *references*, resolved later by `flow.Flow`,
bounded, to "unknown" at the bounds.

Cheap value flow, no type inference: each assignment updates the facts of its target in program
order, so `loss = loss.item()` makes `loss` a plain number again.
"""

from __future__ import annotations

import builtins
import enum
import re
import weakref
from dataclasses import field, replace
from typing import Protocol

import libcst as cst

from torchlint.analysis.apis import (
    DATA_NAME,
    FRAMEWORK_SETUP,
    HOST_CONSTRUCTORS,
    MODULE_WRAPPERS,
    RETURNS_SELF,
    constructor_role,
)
from torchlint.analysis.branches import (
    MAX_ALTERNATIVES,
    Alternative,
    BranchEnd,
    Journal,
    Undo,
    inherit,
    restore,
)
from torchlint.analysis.model import LoopFrame, Scope
from torchlint.analysis.names import (
    ImportTable,
    dotted,
    looks_like_framework,
    looks_like_model,
    root_name,
)
from torchlint.analysis.record import record

# Methods whose result is a Python value or a CPU copy, not a device tensor.
PY_VALUE_METHODS = {"item", "tolist", "numpy", "cpu", "size", "dim", "numel", "ndimension"}
# Methods whose result no longer carries gradients (`.cpu()` is a differentiable copy: it
# keeps the graph, and with it the activations on the device).
DETACHING_METHODS = (PY_VALUE_METHODS - {"cpu"}) | {
    "detach",
    "argmax",
    "argmin",
    "eq",
    "ne",
    "gt",
    "lt",
    "ge",
    "le",
    "long",
    "int",
    "bool",
    "sign",
    "round",
}
NUMBER_BUILTINS = {"float", "int", "bool"}
NON_TENSOR_ATTRIBUTES = {"shape", "dtype", "device", "ndim", "grad_fn", "requires_grad", "is_cuda"}
PYTHON_BUILTINS = frozenset(name for name in dir(builtins) if not name.startswith("_"))
# Builtins whose result is their arguments or made of them: `sum(losses)`, `max(a, b)`.
VALUE_BUILTINS = {"sum", "min", "max", "abs", "pow", "sorted", "reversed", "list", "tuple"}
# Method names that say they return what a model computed (`self.compute_loss(batch)`).
MODEL_RESULT_NAME = re.compile(
    r"loss|forward|logit|output|predict|score|criterion|model", re.IGNORECASE
)
NON_TENSOR_BUILTINS = {"len", "str", "repr", "round", "range", "enumerate", "zip", "list", "dict"}
NON_TENSOR_TORCH = (
    "torch.cuda.",
    "torch.device",
    "torch.optim.",
    "torch.utils.",
    "torch.backends.",
)
# What a value can be normalised by: a loss that wants logits must not get one of these.
PROB_ROLES = ("softmax", "log_softmax", "sigmoid")
SOFTMAX_FUNCTIONS = {
    "torch.softmax": "softmax",
    "torch.nn.functional.softmax": "softmax",
    "torch.special.softmax": "softmax",
    "torch.log_softmax": "log_softmax",
    "torch.nn.functional.log_softmax": "log_softmax",
    "torch.special.log_softmax": "log_softmax",
    "torch.sigmoid": "sigmoid",
    "torch.nn.functional.sigmoid": "sigmoid",
    "torch.special.expit": "sigmoid",
}
# Factories whose result is a leaf that requires grad when asked (`requires_grad=True`).
_GRAD_LEAVES = ("torch.nn.Parameter", "torch.nn.parameter.Parameter")
_LITERALS = (cst.Integer, cst.Float, cst.SimpleString, cst.ConcatenatedString, cst.Imaginary)
_CONSTANT_NAMES = {"True", "False", "None"}


class What(enum.Enum):
    """The kind of object a value is."""

    UNKNOWN = "unknown"
    TENSOR = "tensor"
    MODULE = "module"  # an nn.Module (a model, a loss module, a layer)
    OPTIMIZER = "optimizer"
    SCHEDULER = "scheduler"
    SCALER = "scaler"
    LOADER = "loader"
    SAMPLER = "sampler"
    DATASET = "dataset"
    INSTANCE = "instance"  # of a class of this module or of another project file
    CALLABLE = "callable"  # a function or method of this module or of the project
    CONTEXT = "context"  # autocast / no_grad / inference_mode / enable_grad, also as decorators
    FRAMEWORK = "framework"  # an Accelerator, a Fabric, a DeepSpeed engine
    CONTAINER = "container"  # a tuple or list of values (`items`)
    NONE = "none"  # the literal None
    CLASS = "class"  # a class itself (`loader_cls = DataLoader`): calling it builds an object
    REF = "ref"  # not known yet: see `Ref`; `flow.Flow` resolves it


@record(slots=True)
class Ref:
    """A value the walk cannot know where it reads it:

    - ("param", scope, name): a parameter of `scope` (its callers decide);
    - ("attr", class, name): `self.name` of a class of this module, set in some method;
    - ("call", scope): what a function or method of this module returns;
    - ("global", name): a module-level name read inside a function;
    - ("project", qualified): what a function of another project file returns;
    - ("project-class", qualified): an instance of a class of another project file;
    - ("member", value, name): an attribute of another value (`trainer.model`)."""

    how: str
    target: object = field(repr=False)
    name: str = ""
    # ("call", ...): the values of the call's arguments, bound to the callee's parameters.
    args: tuple[Value, ...] = ()
    kwargs: tuple[tuple[str, Value], ...] = ()


@record(slots=True)
class Value:
    what: What = What.UNKNOWN
    # --- tensors (all False / None when unknown) ------------------------------------------
    device: bool = False  # very probably a tensor on the compute device
    graph: bool | None = None  # carries the autograd graph: True / False / None (unknown)
    host: bool = False  # taken from a loader batch and not moved to a device
    no_grad: bool = False  # computed with gradients off (so it carries no graph)
    prob: str | None = None  # "softmax" / "log_softmax" when it is the output of one
    producer: str | None = None  # the variable called to compute it: `model` for `model(x)`
    scaled: bool = False  # `scaler.scale(loss)`
    iterates: str | None = None  # `iter(loader)`: the loader text
    # --- objects ----------------------------------------------------------------------------
    site: cst.CSTNode | None = field(default=None, repr=False)  # the construction: identity
    role: str | None = None  # the constructor's role (`cross-entropy`, `tensor-dataset`, ...)
    cls: str | None = None  # modules and instances: their class, when known
    of: Value | None = None  # optimizer: the module it updates; scheduler: its optimizer
    items: tuple[Value, ...] = ()  # containers; for an iteration variable: each in turn
    enabled: bool | None = True  # scalers: False when built with enabled=False
    context: str | None = None  # CONTEXT: "no-grad" / "autocast" / "enable-grad"
    scope: Scope | None = field(default=None, repr=False)  # CALLABLE: what it runs
    ref: Ref | None = None  # REF: what to resolve
    text: str | None = None  # the name it was first bound to, for messages and identity
    # Tensors: the modules (as written) whose calls computed it, `{"critic"}` for
    # `critic(fake.detach())`: the parameters a backward through it reaches.
    reach: frozenset[str] = frozenset()
    optional: bool = False  # may be None instead (`DistributedSampler(ds) if ddp else None`)
    keys: tuple[str, ...] = ()  # dict containers: the key of each item
    # Where this module first named the value (the assignment target): where to report an
    # object that another file builds (`train_loader, ds = create_dataloader(...)`).
    bound_at: cst.CSTNode | None = field(default=None, repr=False)
    # Constructions: the objects passed by keyword (a loader's `sampler=`).
    keywords: tuple[tuple[str, Value], ...] = ()
    # Read from this parameter of the scope without a move (`mask = batch.get("mask")`): on
    # the host when the callers pass a host value (see `param_root`).
    from_param: str | None = None

    @property
    def is_object(self) -> bool:
        return self.what not in (What.UNKNOWN, What.TENSOR, What.REF, What.NONE)


UNKNOWN = Value()
NOT_A_TENSOR = Value(graph=False)
_NONE = Value(What.NONE, graph=False)
_INDEX = re.compile(r"([\w.]+)\[(-?\d+)\]")


def reference(
    how: str,
    target: object,
    name: str = "",
    args: tuple[Value, ...] = (),
    kwargs: tuple[tuple[str, Value], ...] = (),
) -> Value:
    return Value(What.REF, ref=Ref(how, target, name, args, kwargs))


def join(values: list[Value]) -> Value:
    """The value of something that may be any of `values` (the returns of a function, the
    assignments of `self.x` in several methods): what they agree on, else unknown."""
    if not values:
        return UNKNOWN
    first = values[0]
    if all(v is first for v in values):
        return first
    if any(v.what is What.NONE for v in values):
        others = [v for v in values if v.what is not What.NONE]
        if not others:
            return first
        found = join(others)
        return replace(found, optional=True) if found.what is not What.UNKNOWN else UNKNOWN
    if any(v.what is not first.what for v in values):
        return UNKNOWN
    if first.what is What.CLASS and any(v.role != first.role for v in values):
        return UNKNOWN  # classes that build different kinds of object
    same_site = all(v.site is first.site for v in values)
    return replace(
        first,
        site=first.site if same_site else None,
        of=first.of if all(v.of is first.of for v in values) else None,
        cls=first.cls if all(v.cls == first.cls for v in values) else None,
        prob=first.prob if all(v.prob == first.prob for v in values) else None,
    )


class Namespace(Protocol):
    """What the values tracker needs to know about the module being walked."""

    imports: ImportTable
    top_names: set[str]
    class_methods: dict[str, set[str]]

    def resolve_local(self, name: str) -> Scope | None: ...

    def constructed_kind(self, text: str) -> str | None: ...

    def resolve_function(self, name: str) -> Scope | None: ...

    def own_forward(self) -> Scope | None: ...

    def project_class_of(self, receiver: str) -> str | None: ...

    def project_symbol(self, qualified: str) -> bool | None:
        """True for a class of another project file, False for a function, None otherwise."""
        ...

    def class_role(self, name: str) -> str | None:
        """What instances of a class of this module are, from its bases (`dataloader` for a
        subclass of `DataLoader`)."""
        ...


class Values:
    """The values of one scope's names, as the walk has bound them so far."""

    def __init__(
        self, ns: Namespace, params: tuple[str, ...] = (), scope: Scope | None = None
    ) -> None:
        # A proxy, not a reference: the walker holds us, and a cycle would keep the whole
        # tree alive until the cyclic garbage collector ran.
        self.ns: Namespace = weakref.proxy(ns)
        self.params = params
        self.scope = scope  # None at module level
        self.env: dict[str, Value] = {}
        # Names bound by unpacking a call's result (`validity, label = D(x)`): which item.
        self.unpacked: dict[str, int] = {}
        # Names the body of an `if` bound otherwise than its `else` (branches.py).
        self.alternatives: dict[str, tuple[Alternative, ...]] = {}
        # Tensors a point-to-point receive fills (`dist.irecv(shape, src)`): host reads of
        # them are what the host waits for, not a stall it could avoid.
        self.received: set[str] = set()
        self.journal = Journal()

    # --- updates ------------------------------------------------------------------------

    def get(self, text: str) -> Value | None:
        return self.env.get(text)

    def put(self, text: str, value: Value) -> None:
        self._set(text, value, rebinds=True)

    def _set(self, text: str, value: Value, *, rebinds: bool = False) -> None:
        """Every write of `env` (`rebinds`: a new binding, not new facts about the old one)."""
        journal = self.journal
        if journal.open:
            journal.note("env", self.env, text)
            if rebinds and text in self.alternatives:
                journal.note("alternatives", self.alternatives, text)
        self.env[text] = value
        if rebinds and self.alternatives:
            self.alternatives.pop(text, None)

    def set_unpacked(self, text: str, index: int | None) -> None:
        """`text` is item `index` of a call's result (None: it is not)."""
        if index is None and text not in self.unpacked:
            return
        if self.journal.open:
            self.journal.note("unpacked", self.unpacked, text)
        if index is None:
            del self.unpacked[text]
        else:
            self.unpacked[text] = index

    # --- branches (see branches.py) -------------------------------------------------------

    def open_branch(self) -> None:
        """The walk enters the body of an `if` that has an `else`, or that `else`."""
        self.journal.open.append(Undo())

    def _close(self) -> Undo:
        undo = self.journal.open.pop()
        if self.journal.open:
            inherit(self.journal.open[-1], undo)
        return undo

    def close_body(self) -> BranchEnd:
        """The body was walked: undo its writes, so that the `else` starts from the state
        before the `if`; what the body left is returned."""
        undo = self._close()
        return BranchEnd(
            restore(self.env, undo.env),
            restore(self.unpacked, undo.unpacked),
            restore(self.alternatives, undo.alternatives),
        )

    def join(self, body: BranchEnd, node: cst.If) -> None:
        """The `else` was walked: a name only the body bound holds the body's value again; a
        name both bound keeps the `else`'s and remembers the body's as an alternative."""
        done = self._close()
        written = done.env.keys() | done.unpacked.keys() | done.alternatives.keys()
        for text in body.env.keys() | body.unpacked.keys() | body.alternatives.keys():
            if text not in written:
                if text in body.env:
                    restore(self.env, {text: body.env[text]})
                if text in body.unpacked:
                    restore(self.unpacked, {text: body.unpacked[text]})
                if text in body.alternatives:
                    restore(self.alternatives, {text: body.alternatives[text]})
                continue
            value, current = body.env.get(text), self.env.get(text)
            if value is None or current is None or value is current:
                continue
            if self.journal.open:
                self.journal.note("alternatives", self.alternatives, text)
            found = (
                Alternative(value, body.unpacked.get(text), node),
                *(body.alternatives.get(text) or ()),
                *self.alternatives.get(text, ()),
            )
            self.alternatives[text] = found[:MAX_ALTERNATIVES]

    def mark_bound(self, text: str, at: cst.CSTNode) -> None:
        """Remember where an object (or a reference to one) got its name here."""
        value = self.env.get(text)
        if value is not None and value.bound_at is None and (value.is_object or value.ref):
            self._set(text, replace(value, bound_at=at))

    def item_of(self, text: str, whole: Value, index: int) -> Value:
        """What `text` holds after `..., text, ... = whole` (its tensor facts kept)."""
        if whole.what is What.CONTAINER:
            item = whole.items[index] if index < len(whole.items) else UNKNOWN
        else:
            item = reference("item", whole, str(index))
        current = self.env.get(text, UNKNOWN)
        return replace(
            item,
            device=current.device,
            graph=current.graph,
            host=current.host,
            no_grad=current.no_grad,
            reach=current.reach,
            producer=current.producer,  # `validity, label = D(x)`: both are D's output
            text=item.text or text,
        )

    def bind(self, text: str, node: cst.BaseExpression, *, under_no_grad: bool) -> Value:
        """`text = node`: the value `node` evaluates to, with what it means for tensors."""
        value = self.evaluate(node, text, under_no_grad=under_no_grad)
        self._set(text, value, rebinds=True)
        self.set_unpacked(text, None)
        return value

    def evaluate(
        self, node: cst.BaseExpression, text: str | None = None, *, under_no_grad: bool = False
    ) -> Value:
        obj = self.object_of(node)
        graph = False if under_no_grad else self.graph_of(node)
        device = self.is_tensor(node)
        host = self.is_host(node)
        no_grad = under_no_grad or self._derived_from_no_grad(node, graph)
        prob = self.softmax_of(node)
        producer = self.variable_call(node)
        iterates = _iterated_name(node)  # `iter(loader)`, `pbar = tqdm(enumerate(loader))`
        reach = self.reach_of(node) if graph is not False else frozenset()
        from_param = None if device or host or self.scope is None else self.param_root(node)
        if obj is UNKNOWN:
            if not (
                device or host or no_grad or iterates or prob or producer or reach or from_param
            ) and (graph is None):
                return UNKNOWN
            what = What.TENSOR if device or host else What.UNKNOWN
            return Value(
                what,
                device,
                graph,
                host,
                no_grad,
                prob,
                producer,
                iterates=iterates,
                reach=reach,
                from_param=from_param,
            )
        return Value(
            obj.what,
            device,
            graph,
            host,
            no_grad,
            prob,
            producer,
            obj.scaled,
            iterates or obj.iterates,
            site=obj.site,
            role=obj.role,
            cls=obj.cls,
            of=obj.of,
            items=obj.items,
            enabled=obj.enabled,
            context=obj.context,
            scope=obj.scope,
            ref=obj.ref,
            text=obj.text or text,
            reach=reach,
            optional=obj.optional,
            keys=obj.keys,
            keywords=obj.keywords,
            bound_at=obj.bound_at,
            from_param=from_param,
        )

    def reach_of(self, node: cst.BaseExpression, depth: int = 0) -> frozenset[str]:
        """The modules (as written) whose calls went into `node`: `{"model", "criterion"}` for
        `criterion(model(x), y)`; detached parts reach nothing."""
        kind = type(node)
        if depth > 12:
            return frozenset()
        if kind is cst.Name or kind is cst.Attribute:
            value = self.env.get(dotted(node) or "")
            if value is not None:
                return value.reach
            if kind is cst.Attribute:
                return self.reach_of(node.value, depth + 1)  # type: ignore[attr-defined]
            return frozenset()
        if kind is cst.Subscript:
            return self.reach_of(node.value, depth + 1)  # type: ignore[attr-defined]
        if kind is cst.BinaryOperation:
            left = self.reach_of(node.left, depth + 1)  # type: ignore[attr-defined]
            return left | self.reach_of(node.right, depth + 1)  # type: ignore[attr-defined]
        if kind is cst.UnaryOperation:
            return self.reach_of(node.expression, depth + 1)  # type: ignore[attr-defined]
        if kind is not cst.Call:
            return frozenset()
        assert isinstance(node, cst.Call)
        func = node.func
        if type(func) is cst.Attribute and func.attr.value in DETACHING_METHODS:
            return frozenset()
        found: set[str] = set()
        for arg in node.args:
            found |= self.reach_of(arg.value, depth + 1)
        callee = self.variable_call(node)
        if callee is not None:
            found.add(callee)
        elif type(func) is cst.Attribute:
            found |= self.reach_of(func.value, depth + 1)
            called = dotted(func)
            if called is not None:
                found.add(called)  # `D.net(x)`: maybe a module held by another object
            receiver = self.object_of(func.value)
            if receiver.what in (What.MODULE, What.INSTANCE):
                text = dotted(func.value)
                if text is not None:
                    found.add(text)  # `model.encode(x)`
        elif type(func) is cst.Name:
            local = self.ns.resolve_local(func.value) or self.ns.resolve_function(func.value)
            if local is not None and local.return_reach:
                found |= _rebound(local, node)
        return frozenset(found)

    def _derived_from_no_grad(self, node: cst.BaseExpression, graph: bool | None) -> bool:
        """`loss = F.cross_entropy(out, y)` where `out` came from under `no_grad`: no graph
        when nothing else in the expression can carry one (`graph` is known to be False)."""
        if graph is not False:
            return False
        return any((v := self.env.get(n)) is not None and v.no_grad for n in names_in(node))

    def bind_loop_targets(self, names: list[str], element: Value = UNKNOWN) -> None:
        """The variables of a `for` loop: a loader's batch (on the host), or each item of a
        container of objects (`for opt in optimizers:`)."""
        for name in names:
            if element.is_object and len(names) == 1:
                self._set(name, element, rebinds=True)
            else:
                self._set(
                    name,
                    Value(
                        What.TENSOR,
                        host=element.prob is None,
                        graph=element.graph,
                        prob=element.prob,
                    ),
                    rebinds=True,
                )

    def mark_backward(self, root: str) -> None:
        """Backward on it proves it is a tensor that carries a graph."""
        current = self.env.get(root, UNKNOWN)
        self._set(root, replace(current, what=What.TENSOR, device=True, graph=True))

    def forget_graph(self, root: str) -> None:
        """What proved that `root` carries a graph was detached: it may, or may not."""
        current = self.env.get(root)
        if current is not None and current.graph is True:
            self._set(root, replace(current, graph=None))

    def mark_scaled(self, text: str, scaled: bool) -> None:
        current = self.env.get(text)
        if current is not None and current.scaled != scaled:
            self._set(text, replace(current, scaled=scaled))
        elif current is None and scaled:
            self._set(text, Value(scaled=True))

    def mark_moved(self, text: str) -> None:
        """A batch object moved to the device in place (`batch.to_device(device)`)."""
        current = self.env.get(text)
        if current is not None and (current.host or current.from_param):
            self._set(text, replace(current, host=False, from_param=None))

    def mark_device_tensor(self, text: str) -> None:
        current = self.env.get(text, UNKNOWN)
        self._set(text, replace(current, what=What.TENSOR, device=True))

    @property
    def tensors(self) -> set[str]:
        """The names holding tensors on the compute device."""
        return {text for text, value in self.env.items() if value.device}

    # --- tensor queries ---------------------------------------------------------------------

    def _fact(self, text: str | None, field: str) -> bool:
        value = self.env.get(text) if text is not None else None
        return value is not None and bool(getattr(value, field))

    def is_param(self, node: cst.BaseExpression) -> bool:
        root = root_name(node)
        return root is not None and root != "self" and root in self.params

    def no_grad_name(self, name: str | None) -> bool:
        return self._fact(name, "no_grad")

    def is_scaled(self, text: str) -> bool:
        return self._fact(text, "scaled")

    def iterated(self, text: str) -> str | None:
        """`it` after `it = iter(loader)`: `loader`."""
        value = self.env.get(text)
        return value.iterates if value is not None else None

    def produced_by(self, text: str) -> str | None:
        value = self.env.get(text)
        return value.producer if value is not None else None

    def is_tensor(self, node: cst.BaseExpression) -> bool:
        """Whether `node` (very probably) evaluates to a tensor on the compute device."""
        kind = type(node)
        if kind is cst.Name:
            return self._fact(node.value, "device")  # type: ignore[attr-defined]
        if kind is cst.Attribute:
            if self._fact(dotted(node), "device"):
                return True
            if node.attr.value in NON_TENSOR_ATTRIBUTES:  # type: ignore[attr-defined]
                return False
            return self.is_tensor(node.value)  # type: ignore[attr-defined]
        if kind is cst.Subscript:
            return self.is_tensor(node.value)  # type: ignore[attr-defined]
        if kind is cst.BinaryOperation:
            return self.is_tensor(node.left) or self.is_tensor(node.right)  # type: ignore[attr-defined]
        if kind is cst.UnaryOperation:
            return self.is_tensor(node.expression)  # type: ignore[attr-defined]
        if kind is cst.Call:
            return self._call_returns_tensor(node)  # type: ignore[arg-type]
        return False

    def is_graph(self, node: cst.BaseExpression) -> bool:
        """Whether `node` is known to be a tensor that still carries the autograd graph."""
        return self.graph_of(node) is True

    def graph_of(self, node: cst.BaseExpression) -> bool | None:
        """Whether `node` carries the autograd graph: True when it is known to (a model's
        output, a loss), False when it cannot (numbers, detached values, values computed under
        `no_grad`, loader batches), None when it may (a parameter, another object's method)."""
        kind = type(node)
        if kind is cst.Name:
            name: str = node.value  # type: ignore[attr-defined]
            value = self.env.get(name)
            if value is not None:
                return value.graph
            return False if self._not_data(name) else None
        if kind is cst.Attribute:
            attr = node.attr.value  # type: ignore[attr-defined]
            if attr in NON_TENSOR_ATTRIBUTES or attr in ("data", "grad"):
                return False
            value = self.env.get(dotted(node) or "")
            if value is not None and value.graph is not False:
                return value.graph
            inner = self.graph_of(node.value)  # type: ignore[attr-defined]
            return value.graph if value is not None and inner is not True else inner
        if kind is cst.Subscript:
            return self.graph_of(node.value)  # type: ignore[attr-defined]
        if kind is cst.BinaryOperation:
            return _either(self.graph_of(node.left), self.graph_of(node.right))  # type: ignore[attr-defined]
        if kind is cst.UnaryOperation:
            return self.graph_of(node.expression)  # type: ignore[attr-defined]
        if kind in _LITERALS or kind is cst.FormattedString:
            return False
        if kind is cst.Call:
            return self._call_graph(node)  # type: ignore[arg-type]
        if kind is cst.Tuple or kind is cst.List:
            for element in node.elements:  # type: ignore[attr-defined]
                if self.graph_of(element.value) is not False:
                    return None  # a container is not itself on the graph
            return False
        return None

    def _not_data(self, name: str) -> bool:
        """A name that holds code, not data: an import, a builtin, a class or function."""
        if name in _CONSTANT_NAMES or name in self.ns.top_names:
            return True
        if name in self.ns.imports.aliases or self.ns.resolve_local(name) is not None:
            return True
        return name in PYTHON_BUILTINS and name not in self.params

    def _call_graph(self, node: cst.Call) -> bool | None:
        """A call's result carries a graph when it is a model's or a loss's output, a torch
        function of a value that carries one, or a leaf that requires grad; it cannot when it
        detaches, or when nothing it is given can carry one."""
        func = node.func
        qual = self.ns.imports.qualify(func)
        if qual is not None:
            if qual.startswith(_GRAD_LEAVES) or _requires_grad(node):
                return True
            if qual.startswith("torch.") and any(self.is_graph(a.value) for a in node.args):
                return True
            return self._args_graph(node)
        if type(func) is cst.Attribute:
            method = func.attr.value
            if method in DETACHING_METHODS:
                return False
            receiver = self.graph_of(func.value)
            if receiver is True or method == "requires_grad_":
                return True
            if (
                method in _FRAMEWORK_REDUCTIONS
                and node.args
                and looks_like_framework(dotted(func.value) or "")
            ):
                # `accelerator.reduce(loss)`: a reduced copy, graph and all, of what it is
                # given (a dict of floats stays one), not a model's output
                return self.graph_of(node.args[0].value)
            if self.builtin_of_graph(node) or self.forward_call(node):
                return True
            return None if receiver is None else self._args_graph(node)
        if self.builtin_of_graph(node) or self.forward_call(node):
            return True
        builtin = self._builtin(node)
        if builtin is not None:
            return self._args_graph(node) if builtin in VALUE_BUILTINS else False
        return None  # a function of this module, an instance of one of its classes, ...

    def _args_graph(self, node: cst.Call) -> bool | None:
        """False when no argument can carry a graph, else unknown: what a call we cannot see
        into makes of a graph is its business."""
        for arg in node.args:
            if self.graph_of(arg.value) is not False:
                return None
        return False

    def is_host(self, node: cst.BaseExpression) -> bool:
        """A value on the host: taken from a loader batch and not moved to a device (`y`,
        `batch["label"]`), or made by a torch factory on the CPU (`torch.randint(0, n, (1,))`,
        `torch.zeros(3, device="cpu")`)."""
        kind = type(node)
        if kind is cst.Call:
            assert isinstance(node, cst.Call)
            qual = self.ns.imports.qualify(node.func)
            if qual in HOST_CONSTRUCTORS:
                device = _device_argument(node)
                return device is None or _is_cpu(device)
            func = node.func
            if qual is None and type(func) is cst.Attribute and func.attr.value not in _MOVES:
                return self.is_host(func.value)  # `mask.bool()`, `y.sum()`: where `y` is
            return False
        if kind is cst.UnaryOperation:
            assert isinstance(node, cst.UnaryOperation)
            return self.is_host(node.expression)  # `~batch["mask"]`, `-y`
        if kind is cst.BinaryOperation:
            assert isinstance(node, cst.BinaryOperation)
            return self._host_operands(node.left, node.right)
        if kind is cst.Comparison:
            assert isinstance(node, cst.Comparison)
            return self._host_operands(node.left, *(c.comparator for c in node.comparisons))
        while type(node) is cst.Subscript or type(node) is cst.Attribute:
            if type(node) is cst.Attribute and node.attr.value == "grad":
                return False  # `p.grad`: a gradient lives where its parameter does
            node = node.value
        return type(node) is cst.Name and self._fact(node.value, "host")

    def param_root(self, node: cst.BaseExpression) -> str | None:
        """The parameter of this function that `node` reads without moving it (`batch` in
        `~batch.get("mask")`, in `batch["x"].sum()`, in `mask` after `mask = batch["mask"]`),
        as `is_host` reads a loader batch; None when it is no such read."""
        kind = type(node)
        if kind is cst.Call:
            assert isinstance(node, cst.Call)
            func = node.func
            if type(func) is not cst.Attribute or func.attr.value in _MOVES:
                return None
            if self.ns.imports.qualify(func) is not None:
                return None
            return self.param_root(func.value)  # `batch.get("mask")`, `mask.sum()`
        if kind is cst.UnaryOperation:
            assert isinstance(node, cst.UnaryOperation)
            return self.param_root(node.expression)
        while type(node) is cst.Subscript or type(node) is cst.Attribute:
            if type(node) is cst.Attribute and node.attr.value == "grad":
                return None
            node = node.value
        if type(node) is not cst.Name:
            return None
        name = node.value
        value = self.env.get(name)
        if value is not None:
            return value.from_param
        return name if name in self.params and name != "self" else None

    def _host_operands(self, *operands: cst.BaseExpression) -> bool:
        """An operator's result is on the host when an operand is and every other one is a
        host value or a Python literal (`labels == -100`, `mask * 2`)."""
        hosts = [self.is_host(o) for o in operands]
        return any(hosts) and all(h or _is_literal(o) for h, o in zip(hosts, operands, strict=True))

    def softmax_of(self, node: cst.BaseExpression) -> str | None:
        """ "softmax" / "log_softmax" when `node` is the output of one (through reshapes and
        indexing; `exp` of a log_softmax is a softmax), else None."""
        inner = through_shape(node)
        if inner is not node:
            return self.softmax_of(inner)
        kind = type(node)
        if kind is cst.Name or kind is cst.Attribute:
            value = self.env.get(dotted(node) or "")
            return value.prob if value is not None else None
        if kind is not cst.Call:
            return None
        assert isinstance(node, cst.Call)
        qual = self.ns.imports.qualify(node.func)
        if qual in _EXP and node.args and self.softmax_of(node.args[0].value) == "log_softmax":
            return "softmax"  # `torch.exp(log_probs)`
        if qual is not None:
            return SOFTMAX_FUNCTIONS.get(qual)
        if type(node.func) is cst.Attribute and node.func.attr.value in PROB_ROLES:
            return node.func.attr.value
        if type(node.func) is cst.Attribute and node.func.attr.value == "exp" and not node.args:
            return "softmax" if self.softmax_of(node.func.value) == "log_softmax" else None
        callee = self.variable_call(node)
        if callee is not None:
            role = self.ns.constructed_kind(callee)
            if role in PROB_ROLES:
                return role
        name = dotted(node.func)
        if name in ("self", "self.forward"):  # `self(x)` in a module's own method
            function = self.ns.own_forward()
        else:
            function = self.ns.resolve_function(name) if name is not None else None
        return function.returns_softmax if function is not None else None

    def forward_call(self, node: cst.Call) -> bool:
        """`model(x)`, `criterion(out, y)`: a variable called with arguments. (`env_fn()` with
        none is a factory, not a forward pass.)"""
        return bool(node.args) and self.variable_call(node) is not None

    def variable_call(self, node: cst.BaseExpression) -> str | None:
        """For `model(x)` / `self.criterion(out, y)`: the called variable's text; else None."""
        if type(node) is not cst.Call:
            return None
        func = node.func
        if type(func) is cst.Attribute and func.attr.value == "forward":
            func = func.value  # `model.forward(x)` is `model(x)` (without the hooks)
        if type(func) is not cst.Name and type(func) is not cst.Attribute:
            return None
        name = dotted(func)
        if name is None:
            return None
        head = name.split(".", 1)[0]
        if name in self.ns.top_names or head in self.ns.imports.aliases:
            return None
        if type(func) is cst.Name and name in PYTHON_BUILTINS:
            return None  # `min(a, b)`, `getattr(m, n)`: see `builtin_of_graph`
        if self.ns.resolve_local(name) is not None:
            return None
        if type(func) is cst.Attribute and head != "self":
            return None  # `y.sum()` on a value we know nothing about
        if type(func) is cst.Attribute and self._own_helper(name):
            return None
        if name.lower().endswith(("bar", "logger", "writer", "meter")):
            return None
        return name

    def _own_helper(self, name: str) -> bool:
        """`self.make_targets(...)`: a method of the class being walked whose name does not say
        it computes a model's result (`self.compute_loss(...)` does)."""
        _, _, method = name.partition(".")
        if "." in method:
            return False
        cls = self.ns.project_class_of("self")
        methods = self.ns.class_methods.get(cls, ()) if cls is not None else ()
        return method in methods and not MODEL_RESULT_NAME.search(method)

    def builtin_of_graph(self, node: cst.Call) -> bool:
        """`sum(losses)`, `max(a, b)`: a builtin that returns (a container of) its arguments,
        given a tensor on the graph. Other builtins (`getattr`, `len`, ...) never give one."""
        return self._builtin(node) in VALUE_BUILTINS and any(
            self.is_graph(a.value) for a in node.args
        )

    def _builtin(self, node: cst.Call) -> str | None:
        """The name of the Python builtin `node` calls (not shadowed by the module), or None."""
        func = node.func
        if type(func) is not cst.Name or func.value not in PYTHON_BUILTINS:
            return None
        if func.value in self.ns.top_names or self.ns.resolve_local(func.value) is not None:
            return None
        return func.value

    def is_module_object(self, node: cst.BaseExpression) -> bool:
        """`nn.Linear(...)`, `Net()`, `model`: a module being moved, not a tensor."""
        if type(node) is cst.Call:
            qual = self.ns.imports.qualify(node.func) or ""
            last = qual.rsplit(".", 1)[-1]
            if qual.startswith("torch.nn.") and last[:1].isupper():
                return True
            if type(node.func) is cst.Name and node.func.value in self.ns.class_methods:
                return True
            # `Darknet(cfg).to(device)`: an instance of a class (of the project or a library),
            # not a tensor (torch's own tensor constructors are `torch.` calls).
            name = (dotted(node.func) or "").rsplit(".", 1)[-1]
            return name[:1].isupper() and not qual.startswith("torch.")
        text = dotted(node)
        if text is None:
            return False
        value = self.env.get(text)
        if value is not None and value.what is What.MODULE:
            return True
        return looks_like_model(text)

    def printed_tensor(self, value: cst.BaseExpression) -> cst.BaseExpression | None:
        """The tensor that printing `value` formats: a known device tensor first, else a
        parameter that may hold one (the caller decides)."""
        parts: list[cst.BaseExpression] = [value]
        if type(value) is cst.FormattedString:
            parts = [p.expression for p in value.parts if type(p) is cst.FormattedStringExpression]
        elif (
            type(value) is cst.BinaryOperation
            and type(value.operator) is cst.Modulo
            and isinstance(value.left, cst.SimpleString | cst.ConcatenatedString)
        ):  # "loss %.4f" % loss, "[%d] %.4f" % (i, loss)
            right = value.right
            parts = [e.value for e in right.elements] if type(right) is cst.Tuple else [right]
        elif (
            type(value) is cst.Call
            and type(value.func) is cst.Attribute
            and value.func.attr.value == "format"
            and type(value.func.value) is cst.SimpleString
        ):
            parts = [a.value for a in value.args]
        for part in parts:
            if self.is_tensor(part):
                return part
        for part in parts:
            if isinstance(part, cst.Name | cst.Attribute | cst.Subscript) and self.is_param(part):
                return part
        return None

    def _call_returns_tensor(self, node: cst.Call) -> bool:
        func = node.func
        qual = self.ns.imports.qualify(func)
        if qual is not None:
            if not qual.startswith("torch.") or qual.startswith(NON_TENSOR_TORCH):
                return False
            device = _device_argument(node)
            if device is not None:
                return not _is_cpu(device)
            return any(self.is_tensor(a.value) for a in node.args)
        if type(func) is cst.Attribute:
            method = func.attr.value
            if method in PY_VALUE_METHODS:
                return False
            if method in ("to", "cuda"):
                target = node.args[0].value if node.args else None
                if type(target) is cst.SimpleString and target.value[1:-1] == "cpu":
                    return False
                return not self.is_module_object(func.value)
            if self.is_tensor(func.value):
                return True
        else:
            builtin = self._builtin(node)
            if builtin is not None:
                return builtin in VALUE_BUILTINS and any(self.is_tensor(a.value) for a in node.args)
        return self.forward_call(node)

    # --- objects ----------------------------------------------------------------------------

    def object_of(self, node: cst.BaseExpression, depth: int = 0) -> Value:
        """The object `node` evaluates to, as far as the walk can tell now (a reference where
        it cannot: see `Ref`)."""
        if depth > 8:
            return UNKNOWN
        kind = type(node)
        if kind is cst.Name and node.value == "None":  # type: ignore[attr-defined]
            return _NONE
        if kind is cst.Name or kind is cst.Attribute:
            return self._object_of_name(node, depth)
        if kind is cst.Call:
            return self._object_of_call(node, depth)  # type: ignore[arg-type]
        if kind is cst.Tuple or kind is cst.List:
            items = tuple(self.object_of(e.value, depth + 1) for e in node.elements)  # type: ignore[attr-defined]
            if not any(v.is_object or v.what is What.REF for v in items):
                return UNKNOWN
            return Value(What.CONTAINER, items=items)
        if kind is cst.Dict:  # `{"train": DataLoader(...), "dev": None}`
            keyed = [
                (k, self.object_of(e.value, depth + 1))
                for e in node.elements  # type: ignore[attr-defined]
                if type(e) is cst.DictElement and (k := _key(e.key)) is not None
            ]
            if not any(v.is_object or v.what is What.REF for _, v in keyed):
                return UNKNOWN
            return Value(
                What.CONTAINER, items=tuple(v for _, v in keyed), keys=tuple(k for k, _ in keyed)
            )
        if kind is cst.Subscript:
            return self._element(self.object_of(node.value, depth + 1), node)  # type: ignore[attr-defined,arg-type]
        if kind is cst.IfExp:
            body = self.object_of(node.body, depth + 1)  # type: ignore[attr-defined]
            orelse = self.object_of(node.orelse, depth + 1)  # type: ignore[attr-defined]
            return join([body, orelse])
        return UNKNOWN

    def _object_of_name(self, node: cst.BaseExpression, depth: int) -> Value:
        text = dotted(node)
        if text is None:
            return UNKNOWN
        value = self.env.get(text)
        if value is not None:
            return value if (value.is_object or value.what is What.REF) else UNKNOWN
        qual = self.ns.imports.qualify(node)
        role = constructor_role(qual) if qual is not None else None
        if role is not None:
            return Value(What.CLASS, cls=qual, role=role)  # `torch.utils.data.DataLoader`
        if type(node) is cst.Name:
            return self._object_of_plain_name(text)
        assert isinstance(node, cst.Attribute)
        attr = node.attr.value
        owner = node.value
        if attr in ("module", "_orig_mod"):
            return self.object_of(owner, depth + 1)  # DDP / torch.compile: the wrapped model
        if type(owner) is cst.Name and owner.value == "self":
            cls = self.ns.project_class_of("self")
            if cls is not None and self.scope is not None:
                return reference("attr", cls, attr)
            return UNKNOWN
        base = self.object_of(owner, depth + 1)
        if base.what is What.UNKNOWN:
            return UNKNOWN
        return reference("member", base, attr)

    def _object_of_plain_name(self, name: str) -> Value:
        """A name the scope has not bound: a parameter, a function of the module, or a
        module-level name read inside a function."""
        value = self.env.get(name)
        if value is not None:
            return value if (value.is_object or value.what is What.REF) else UNKNOWN
        if name in self.params and self.scope is not None:
            return reference("param", self.scope, name)
        local = self.ns.resolve_local(name) or (
            self.ns.resolve_function(name) if name in self.ns.top_names else None
        )
        if local is not None:
            return Value(What.CALLABLE, scope=local, text=name)
        if name in self.ns.class_methods and name in self.ns.top_names:
            return Value(What.CLASS, cls=name, role=self.ns.class_role(name))
        if name in self.ns.imports.aliases or name in PYTHON_BUILTINS:
            return UNKNOWN
        if self.scope is not None and name not in self.ns.top_names:
            return reference("global", name)
        return UNKNOWN

    def _object_of_call(self, node: cst.Call, depth: int) -> Value:
        func = node.func
        wrapper = dotted(func) or ""
        if (wrapper in _ITERATING or wrapper.endswith(".tqdm")) and node.args:
            return self.object_of(node.args[0].value, depth + 1)  # `tqdm(enumerate(loader))`
        qual = self.ns.imports.qualify(func)
        if qual is not None:
            return self._qualified_call(node, qual, depth)
        if type(func) is cst.Attribute:
            method = func.attr.value
            receiver = self.object_of(func.value, depth + 1)
            if method in RETURNS_SELF and receiver is not UNKNOWN:
                return receiver  # `model.to(device)`, `net.eval().cuda()`
            if method in FRAMEWORK_SETUP and (
                receiver.what is What.FRAMEWORK or looks_like_framework(dotted(func.value) or "")
            ):
                items = tuple(self.object_of(a.value, depth + 1) for a in node.args if not a.star)
                return items[0] if len(items) == 1 else Value(What.CONTAINER, items=items)
            if type(func.value) is cst.Name and func.value.value == "self":
                cls = self.ns.project_class_of("self")
                methods = self.ns.class_methods.get(cls, ()) if cls is not None else ()
                if method in methods:
                    return reference("method", cls, method)
            if receiver.what is not What.UNKNOWN:
                return reference("method-of", receiver, method)
            return UNKNOWN
        if type(func) is cst.Name:
            name = func.value
            if name in self.ns.class_methods and name in self.ns.top_names:
                role = self.ns.class_role(name)
                if role is not None:
                    return _constructed(role, node, name, self, depth)  # a DataLoader subclass
                return Value(What.INSTANCE, site=node, cls=name)
            local = self.ns.resolve_local(name) or (
                self.ns.resolve_function(name) if name in self.ns.top_names else None
            )
            if local is not None:
                args, kwargs = self.arguments(node, depth)
                return reference("call", local, args=args, kwargs=kwargs)
            if name in self.ns.top_names:  # a function defined further down the module
                args, kwargs = self.arguments(node, depth)
                return reference("call-named", name, args=args, kwargs=kwargs)
            called = self.object_of(func, depth + 1)
            if called.what is What.CLASS:  # `loader = DataLoader if a else Infinite; loader(ds)`
                if called.role is not None:
                    return _constructed(called.role, node, called.cls or name, self, depth)
                return Value(What.INSTANCE, site=node, cls=called.cls)
            if called.what is not What.UNKNOWN:
                return reference("called", called)
        return UNKNOWN

    def arguments(
        self, node: cst.Call, depth: int = 0
    ) -> tuple[tuple[Value, ...], tuple[tuple[str, Value], ...]]:
        """The objects a call passes, positionally and by keyword."""
        args = tuple(
            self.object_of(a.value, depth + 1)
            for a in node.args
            if a.keyword is None and not a.star
        )
        kwargs = tuple(
            (a.keyword.value, self.object_of(a.value, depth + 1))
            for a in node.args
            if a.keyword is not None
        )
        return args, kwargs

    def object_of_text(self, text: str) -> Value:
        """The object a receiver written as `text` holds (`self.optimizer`, `optimizers[0]`,
        `opt`): its binding, else a reference to what it may be."""
        value = self.env.get(text)
        if value is not None:
            return value if (value.is_object or value.what is What.REF) else UNKNOWN
        if "[" in text or "(" in text:
            index = _INDEX.fullmatch(text)
            if index is None:
                return UNKNOWN
            container = self.object_of_text(index.group(1))
            if container.what is not What.CONTAINER:
                return UNKNOWN
            position = int(index.group(2))
            items = container.items
            return items[position] if -len(items) <= position < len(items) else UNKNOWN
        owner, dot, attr = text.rpartition(".")
        if not dot:
            return self._object_of_plain_name(text) if text.isidentifier() else UNKNOWN
        if attr in ("module", "_orig_mod"):
            return self.object_of_text(owner)
        if owner == "self":
            cls = self.ns.project_class_of("self")
            if cls is not None and self.scope is not None:
                return reference("attr", cls, attr)
            return UNKNOWN
        base = self.object_of_text(owner)
        return UNKNOWN if base.what is What.UNKNOWN else reference("member", base, attr)

    def _qualified_call(self, node: cst.Call, qual: str, depth: int) -> Value:
        if qual in MODULE_WRAPPERS and node.args:
            inner = self.object_of(node.args[0].value, depth + 1)
            return inner if inner is not UNKNOWN else Value(What.MODULE, site=node)
        role = constructor_role(qual)
        if role is not None:
            return _constructed(role, node, qual, self, depth)
        symbol = self.ns.project_symbol(qual)
        if symbol is True:
            return Value(What.INSTANCE, site=node, cls=qual)
        if symbol is False:
            return reference("project", qual)
        last = qual.rsplit(".", 1)[-1]
        if qual.startswith("torch.nn.") and last[:1].isupper():
            return Value(What.MODULE, site=node, cls=qual)
        if looks_like_framework(last) and last[:1].isupper():
            return Value(What.FRAMEWORK, site=node, cls=qual)
        return UNKNOWN

    def _element(self, container: Value, node: cst.Subscript) -> Value:
        index = node.slice[0].slice if len(node.slice) == 1 else None
        key = _key(index.value) if type(index) is cst.Index else None
        if container.what is What.REF and key is not None:
            return reference("item", container, key)  # `self.loaders["train"]`
        if container.what is not What.CONTAINER:
            return UNKNOWN
        return element_of(container, key)


def element_of(container: Value, key: str | None) -> Value:
    """`container[key]`: the item at an integer position or under a string key, else what all
    items agree on."""
    if key is not None and container.keys:
        if key in container.keys:
            return container.items[container.keys.index(key)]
    elif key is not None and key.lstrip("-").isdigit():
        position = int(key)
        if -len(container.items) <= position < len(container.items):
            return container.items[position]
    return join(list(container.items))


def _key(node: cst.BaseExpression | None) -> str | None:
    """`0`, `-1`, `"train"` as a key; None for anything else."""
    if type(node) is cst.Integer:
        return node.value
    if type(node) is cst.UnaryOperation and type(node.expression) is cst.Integer:
        return f"-{node.expression.value}" if type(node.operator) is cst.Minus else None
    if type(node) is cst.SimpleString and node.value[:1] in "'\"":
        return node.value[1:-1]
    return None


def _constructed(role: str, node: cst.Call, qual: str, values: Values, depth: int) -> Value:
    if role == "optimizer":
        return Value(What.OPTIMIZER, site=node, role=role, cls=qual, of=_owner(node, values, depth))
    if role == "scheduler":
        first = node.args[0].value if node.args else None
        of = values.object_of(first, depth + 1) if first is not None else UNKNOWN
        return Value(What.SCHEDULER, site=node, role=role, cls=qual, of=of)
    if role == "scaler":
        enabled: bool | None = True
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value == "enabled":
                value = arg.value
                is_off = (type(value) is cst.Name and value.value == "False") or (
                    type(value) is cst.Integer and value.value == "0"
                )
                enabled = False if is_off else None
        return Value(What.SCALER, site=node, role=role, cls=qual, enabled=enabled)
    if role == "dataloader":
        _, keywords = values.arguments(node, depth)
        return Value(What.LOADER, site=node, role=role, cls=qual, keywords=keywords)
    if role in ("distributed-sampler",):
        return Value(What.SAMPLER, site=node, role=role, cls=qual)
    if role in ("tensor-dataset", "subset"):
        return Value(What.DATASET, site=node, role=role, cls=qual)
    return Value(What.MODULE, site=node, role=role, cls=qual)


def _owner(node: cst.Call, values: Values, depth: int) -> Value | None:
    """The module an optimizer updates: `model` in `SGD(model.parameters())`."""
    if not node.args:
        return None
    first = node.args[0].value
    func = first.func if type(first) is cst.Call else None
    if type(func) is cst.Attribute and func.attr.value in ("parameters", "named_parameters"):
        return values.object_of(func.value, depth + 1)
    return None


# Methods that keep what a tensor holds (probabilities stay probabilities).
_SHAPE_METHODS = {
    "view", "reshape", "squeeze", "unsqueeze", "flatten", "transpose", "permute", "contiguous",
    "float", "double", "half", "to", "cuda", "cpu", "clone", "view_as", "reshape_as", "t",
}  # fmt: skip
_EXP = ("torch.exp",)
# Wrappers of an iterable that iterate what they wrap (a progress bar, an index).
_ITERATING = {"enumerate", "tqdm", "iter", "tqdm.tqdm", "tqdm.auto.tqdm", "auto.tqdm", "track"}


def through_shape(node: cst.BaseExpression) -> cst.BaseExpression:
    """`out.view(1, -1)`, `probs[mask]`, `log_probs.float()`: the tensor whose values they
    keep."""
    while True:
        if type(node) is cst.Subscript:
            node = node.value
        elif (
            type(node) is cst.Call
            and type(node.func) is cst.Attribute
            and node.func.attr.value in _SHAPE_METHODS
        ):
            node = node.func.value
        else:
            return node


def _rebound(callee: Scope, call: cst.Call) -> set[str]:
    """What a function's returns reach, its parameters renamed to what `call` passes."""
    binding = dict(
        zip(callee.params, (a.value for a in call.args if a.keyword is None), strict=False)
    )
    binding.update((a.keyword.value, a.value) for a in call.args if a.keyword is not None)
    found = set()
    for text in callee.return_reach:
        head, dot, rest = text.partition(".")
        argument = binding.get(head)
        if argument is not None:
            written = dotted(argument)
            if written is not None:
                found.add(written + dot + rest)
        elif head in callee.params:
            continue  # a parameter the call does not pass
        else:
            found.add(text)  # a module-level model the function calls
    return found


def _device_argument(node: cst.Call) -> cst.BaseExpression | None:
    for arg in node.args:
        if arg.keyword is not None and arg.keyword.value == "device":
            return arg.value
    return None


def _is_cpu(device: cst.BaseExpression) -> bool:
    """`"cpu"`, `torch.device("cpu")`."""
    if type(device) is cst.Call and device.args:
        device = device.args[0].value
    return type(device) is cst.SimpleString and device.value[1:-1].startswith("cpu")


def _requires_grad(node: cst.Call) -> bool:
    for arg in node.args:
        if arg.keyword is not None and arg.keyword.value == "requires_grad":
            value = arg.value
            return type(value) is cst.Name and value.value == "True"
    return False


def _either(a: bool | None, b: bool | None) -> bool | None:
    """Whether a value made of two parts carries a graph."""
    if a is True or b is True:
        return True
    if a is None or b is None:
        return None
    return False


def names_in(node: cst.BaseExpression) -> set[str]:
    """The plain names an expression reads (roots of attribute chains included)."""
    found: set[str] = set()
    stack: list[cst.CSTNode] = [node]
    while stack:
        current = stack.pop()
        if type(current) is cst.Name:
            found.add(current.value)
        elif type(current) is cst.Attribute:
            stack.append(current.value)
        elif type(current) is cst.Call:
            stack.append(current.func)
            stack.extend(a.value for a in current.args)
        elif type(current) is cst.BinaryOperation:
            stack.extend((current.left, current.right))
        elif type(current) is cst.UnaryOperation:
            stack.append(current.expression)
        elif type(current) is cst.Subscript:
            stack.append(current.value)
        elif isinstance(current, cst.Tuple | cst.List):
            stack.extend(e.value for e in current.elements)
    return found


# A framework's collectives that return the reduced tensor (Accelerate, Fabric): the result
# is a copy that keeps the autograd graph of what was reduced.
_FRAMEWORK_REDUCTIONS = {"reduce", "gather", "gather_for_metrics", "all_reduce", "all_gather"}

# Methods that take a tensor off the host (or return a device copy).
_MOVES = {"to", "cuda", "pin_memory"}


def _is_literal(node: cst.BaseExpression) -> bool:
    """A Python number, string or constant (`-100`, `0.5`, `None`, `True`)."""
    if type(node) is cst.UnaryOperation:
        assert isinstance(node, cst.UnaryOperation)
        return _is_literal(node.expression)
    if type(node) is cst.Name:
        assert isinstance(node, cst.Name)
        return node.value in ("None", "True", "False")
    return isinstance(node, (cst.Integer, cst.Float, cst.SimpleString))


def iterates_data(loop: LoopFrame) -> bool:
    """A loop over batches: a loader's value, or an iterable named like data (also behind a
    progress bar: `pbar = tqdm(train_loader)` ... `for batch in pbar:`)."""
    if any(value.what is What.LOADER for value in loop.source_values):
        return True
    if DATA_NAME.search(loop.iter_text) is not None:
        return True
    return any(DATA_NAME.search(source) for source in loop.sources)


def _iterated_name(node: cst.BaseExpression) -> str | None:
    """What an iterator or a progress bar iterates, when it is named: `loader` for
    `iter(loader)`, `tqdm(loader)`, `tqdm(enumerate(loader))`; None for anything else."""
    wrapped = False
    while type(node) is cst.Call and node.args:
        callee = dotted(node.func) or ""
        if callee == "enumerate" and wrapped:
            node = node.args[0].value
            continue
        if callee not in ("iter", "track") and callee.rsplit(".", 1)[-1] != "tqdm":
            break
        node = node.args[0].value
        wrapped = True
    return dotted(node) if wrapped else None
