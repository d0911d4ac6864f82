"""What the local names of one scope hold, tracked flow-sensitively as the walk goes.

Cheap value flow, no type inference: a name holds a *device tensor* when it was assigned a model's
output, a loss, or something moved with `.to(device)`; a *graph tensor* when that value is still
attached to autograd (not detached, not computed under `no_grad`); a *host value* when it came
straight out of a loader; a *softmax* when it came out of softmax / log_softmax. Each assignment
updates these facts in program order, so `loss = loss.item()` makes `loss` a plain number again.
"""

from __future__ import annotations

import builtins
import re
import weakref
from typing import Protocol

import libcst as cst

from torchlint.analysis.model import Scope
from torchlint.analysis.names import ImportTable, dotted, looks_like_model, root_name

# Methods whose result is a Python value or a CPU copy, not a device tensor.
PY_VALUE_METHODS = {"item", "tolist", "numpy", "cpu", "size", "dim", "numel", "ndimension"}
# Methods whose result no longer carries gradients.
DETACHING_METHODS = PY_VALUE_METHODS | {
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
SOFTMAX_FUNCTIONS = {
    "torch.softmax": "softmax",
    "torch.nn.functional.softmax": "softmax",
    "torch.special.softmax": "softmax",
    "torch.log_softmax": "log_softmax",
    "torch.nn.functional.log_softmax": "log_softmax",
    "torch.special.log_softmax": "log_softmax",
}
SOFTMAX_MODULES = {
    "torch.nn.Softmax": "softmax",
    "torch.nn.modules.activation.Softmax": "softmax",
    "torch.nn.LogSoftmax": "log_softmax",
    "torch.nn.modules.activation.LogSoftmax": "log_softmax",
}


class Namespace(Protocol):
    """What the values tracker needs to know about the module being walked."""

    imports: ImportTable
    top_names: set[str]
    class_methods: dict[str, set[str]]

    def resolve_local(self, name: str) -> Scope | None: ...

    def constructed_kind(self, text: str) -> str | None: ...

    def resolve_function(self, name: str) -> Scope | None: ...

    def project_class_of(self, receiver: str) -> str | None: ...


class Values:
    def __init__(self, ns: Namespace, params: tuple[str, ...] = ()) -> None:
        # A proxy, not a reference: the collector holds us, and a cycle would keep the whole
        # tree alive until the cyclic garbage collector ran.
        self.ns: Namespace = weakref.proxy(ns)
        self.params = params
        self.tensors: set[str] = set()  # device tensors
        self.graph: set[str] = set()  # tensors attached to autograd
        self.host: set[str] = set()  # loader batches not moved to a device
        self.scaled: set[str] = set()  # `scaler.scale(loss)`
        self.softmax: dict[str, str] = {}  # name -> "softmax" | "log_softmax"
        self.no_grad: set[str] = set()  # computed under no_grad / inference_mode
        self.iterators: dict[str, str] = {}  # `it = iter(loader)`: it -> loader
        self.produced_by: dict[str, str] = {}  # `out = model(x)`: out -> model

    # --- updates ------------------------------------------------------------------------

    def bind(self, text: str, value: cst.BaseExpression, *, under_no_grad: bool) -> None:
        """`text = value`."""
        _update(self.tensors, text, self.is_tensor(value))
        _update(self.graph, text, not under_no_grad and self.is_graph(value))
        _update(self.host, text, self.is_host(value))
        _update(self.no_grad, text, under_no_grad or self._derived_from_no_grad(value))
        kind = self.softmax_of(value)
        if kind is None:
            self.softmax.pop(text, None)
        else:
            self.softmax[text] = kind
        callee = self.variable_call(value)
        if callee is None:
            self.produced_by.pop(text, None)
        else:
            self.produced_by[text] = callee
        if type(value) is cst.Call and dotted(value.func) == "iter" and value.args:
            source = dotted(value.args[0].value)
            if source is not None:
                self.iterators[text] = source

    def _derived_from_no_grad(self, value: cst.BaseExpression) -> bool:
        """`loss = F.cross_entropy(out, y)` where `out` came from under `no_grad`: no graph
        unless something else in the expression carries one."""
        names = _names_in(value)
        return any(n in self.no_grad for n in names) and not self.is_graph(value)

    def bind_loop_targets(self, names: list[str]) -> None:
        for name in names:
            for facts in (self.tensors, self.graph, self.no_grad):
                facts.discard(name)
            self.softmax.pop(name, None)
            self.host.add(name)

    # --- queries ------------------------------------------------------------------------

    def is_param(self, node: cst.BaseExpression) -> bool:
        root = root_name(node)
        return root is not None and root != "self" and root in self.params

    def is_tensor(self, node: cst.BaseExpression) -> bool:
        """Whether `node` (very probably) evaluates to a tensor on the compute device."""
        if type(node) is cst.Name:
            return node.value in self.tensors
        if type(node) is cst.Attribute:
            text = dotted(node)
            if text is not None and text in self.tensors:
                return True
            if node.attr.value in NON_TENSOR_ATTRIBUTES:
                return False
            return self.is_tensor(node.value)  # `outputs.logits`, `x.T`, `x.data`
        if type(node) is cst.Subscript:
            return self.is_tensor(node.value)
        if type(node) is cst.BinaryOperation:
            return self.is_tensor(node.left) or self.is_tensor(node.right)
        if type(node) is cst.UnaryOperation:
            return self.is_tensor(node.expression)
        if type(node) is cst.Call:
            return self._call_returns_tensor(node)
        return False

    def is_graph(self, node: cst.BaseExpression) -> bool:
        """Whether `node` is a tensor that still carries the autograd graph."""
        if type(node) is cst.Name:
            return node.value in self.graph
        if type(node) is cst.Attribute:
            if node.attr.value in NON_TENSOR_ATTRIBUTES or node.attr.value in ("data", "grad"):
                return False
            text = dotted(node)
            return (text is not None and text in self.graph) or self.is_graph(node.value)
        if type(node) is cst.Subscript:
            return self.is_graph(node.value)
        if type(node) is cst.BinaryOperation:
            return self.is_graph(node.left) or self.is_graph(node.right)
        if type(node) is cst.UnaryOperation:
            return self.is_graph(node.expression)
        if type(node) is cst.Call:
            func = node.func
            qual = self.ns.imports.qualify(func)
            if qual is not None:
                return qual.startswith("torch.") and any(self.is_graph(a.value) for a in node.args)
            if type(func) is cst.Attribute:
                if func.attr.value in DETACHING_METHODS:
                    return False
                if self.is_graph(func.value):
                    return True
            return self.builtin_of_graph(node) or self.forward_call(node)
        return False

    def is_host(self, node: cst.BaseExpression) -> bool:
        """A value taken from a loader batch and not moved to a device: `y`, `batch["label"]`."""
        while isinstance(node, cst.Subscript | cst.Attribute):
            node = node.value
        return type(node) is cst.Name and node.value in self.host

    def softmax_of(self, node: cst.BaseExpression) -> str | None:
        """ "softmax" / "log_softmax" when `node` is the output of one, else None."""
        if type(node) is cst.Name:
            return self.softmax.get(node.value)
        if type(node) is cst.Attribute:
            text = dotted(node)
            return self.softmax.get(text) if text is not None else None
        if type(node) is not cst.Call:
            return None
        qual = self.ns.imports.qualify(node.func)
        if qual is not None:
            return SOFTMAX_FUNCTIONS.get(qual)
        if type(node.func) is cst.Attribute and node.func.attr.value in (
            "softmax",
            "log_softmax",
        ):
            return node.func.attr.value
        callee = self.variable_call(node)
        if callee is not None:
            kind = self.ns.constructed_kind(callee)
            if kind in ("softmax", "log_softmax"):
                return kind
        name = dotted(node.func)
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
        if not isinstance(func, cst.Name | cst.Attribute):
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
            return type(node.func) is cst.Name and node.func.value in self.ns.class_methods
        text = dotted(node)
        return text is not None and looks_like_model(text)

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
            return any(self.is_tensor(a.value) for a in node.args) or any(
                a.keyword is not None and a.keyword.value == "device" for a in node.args
            )
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


def _update(facts: set[str], name: str, holds: bool) -> None:
    if holds:
        facts.add(name)
    else:
        facts.discard(name)


def _names_in(node: cst.BaseExpression) -> set[str]:
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
