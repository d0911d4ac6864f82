"""What a value is: the records of the abstract values the walk tracks (`Value`, `Ref`,
`What`), how several of them join, and the small facts about expressions that the queries of
`value_tensors.py` and `value_objects.py` share. `values.py` puts them together as `Values`,
the state of one scope's names as the walk goes (see there).
"""

from __future__ import annotations

import builtins
import enum
import re
from dataclasses import field, replace
from typing import Protocol

import libcst as cst

from torchlint.analysis.apis import (
    DATA_NAME,
)
from torchlint.analysis.model import LoopFrame, Scope
from torchlint.analysis.names import (
    ImportTable,
    dotted,
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
GRAD_LEAVES = ("torch.nn.Parameter", "torch.nn.parameter.Parameter")
LITERALS = (cst.Integer, cst.Float, cst.SimpleString, cst.ConcatenatedString, cst.Imaginary)
CONSTANT_NAMES = {"True", "False", "None"}


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
NONE = Value(What.NONE, graph=False)
INDEX_TEXT = re.compile(r"([\w.]+)\[(-?\d+)\]")


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


class ValueScope:
    """The state the queries read: one scope's names as the walk has bound them so far
    (`Values` sets it up; `TensorQueries` and `ObjectQueries` read it and call each other)."""

    ns: Namespace
    params: tuple[str, ...]
    scope: Scope | None  # None at module level
    env: dict[str, Value]
    unpacked: dict[str, int]
    received: set[str]

    def object_of(self, node: cst.BaseExpression, depth: int = 0) -> Value:
        raise NotImplementedError

    def is_tensor(self, node: cst.BaseExpression) -> bool:
        raise NotImplementedError


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


def key_of(node: cst.BaseExpression | None) -> str | None:
    """`0`, `-1`, `"train"` as a key; None for anything else."""
    if type(node) is cst.Integer:
        return node.value
    if type(node) is cst.UnaryOperation and type(node.expression) is cst.Integer:
        return f"-{node.expression.value}" if type(node.operator) is cst.Minus else None
    if type(node) is cst.SimpleString and node.value[:1] in "'\"":
        return node.value[1:-1]
    return None


# Methods that keep what a tensor holds (probabilities stay probabilities).
SHAPE_METHODS = {
    "view", "reshape", "squeeze", "unsqueeze", "flatten", "transpose", "permute", "contiguous",
    "float", "double", "half", "to", "cuda", "cpu", "clone", "view_as", "reshape_as", "t",
}  # fmt: skip
# `torch.<f>(x, ...)` forms of the shape methods: the tensor is their first argument.
SHAPE_FUNCTIONS = {
    "squeeze", "unsqueeze", "flatten", "reshape", "transpose", "permute", "t", "clone",
}  # fmt: skip
EXP_FUNCTIONS = ("torch.exp",)
# Wrappers of an iterable that iterate what they wrap (a progress bar, an index).
ITERATING = {"enumerate", "tqdm", "iter", "tqdm.tqdm", "tqdm.auto.tqdm", "auto.tqdm", "track"}


def through_shape(node: cst.BaseExpression) -> cst.BaseExpression:
    """`out.view(1, -1)`, `probs[mask]`, `log_probs.float()`, `torch.squeeze(out)`: the tensor
    whose values they keep."""
    while True:
        if type(node) is cst.Subscript:
            node = node.value
        elif type(node) is cst.Call and type(node.func) is cst.Attribute:
            func = node.func
            if func.attr.value in SHAPE_METHODS and not _is_torch(func.value):
                node = func.value
            elif func.attr.value in SHAPE_FUNCTIONS and _is_torch(func.value) and node.args:
                node = node.args[0].value
            else:
                return node
        else:
            return node


def _is_torch(node: cst.BaseExpression) -> bool:
    return type(node) is cst.Name and node.value == "torch"


def rebound_params(callee: Scope, call: cst.Call) -> set[str]:
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


def device_argument(node: cst.Call) -> cst.BaseExpression | None:
    for arg in node.args:
        if arg.keyword is not None and arg.keyword.value == "device":
            return arg.value
    return None


def is_cpu(device: cst.BaseExpression) -> bool:
    """`"cpu"`, `torch.device("cpu")`."""
    if type(device) is cst.Call and device.args:
        device = device.args[0].value
    return type(device) is cst.SimpleString and device.value[1:-1].startswith("cpu")


def requires_grad(node: cst.Call) -> bool:
    for arg in node.args:
        if arg.keyword is not None and arg.keyword.value == "requires_grad":
            value = arg.value
            return type(value) is cst.Name and value.value == "True"
    return False


def either(a: bool | None, b: bool | None) -> bool | None:
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
FRAMEWORK_REDUCTIONS = {"reduce", "gather", "gather_for_metrics", "all_reduce", "all_gather"}

# Methods that take a tensor off the host (or return a device copy).
MOVES = {"to", "cuda", "pin_memory"}


def is_literal(node: cst.BaseExpression) -> bool:
    """A Python number, string or constant (`-100`, `0.5`, `None`, `True`)."""
    if type(node) is cst.UnaryOperation:
        assert isinstance(node, cst.UnaryOperation)
        return is_literal(node.expression)
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


def iterated_name(node: cst.BaseExpression) -> str | None:
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
