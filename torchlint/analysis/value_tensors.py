"""The tensor queries of a scope's values: whether an expression is a tensor on the device,
carries the autograd graph, lives on the host, holds probabilities, or is a call of a model;
mixed into `Values` (values.py)."""

from __future__ import annotations

import libcst as cst

from torchlint.analysis.apis import (
    HOST_CONSTRUCTORS,
)
from torchlint.analysis.names import (
    dotted,
    looks_like_framework,
    looks_like_model,
    root_name,
)
from torchlint.analysis.value import (
    CONSTANT_NAMES,
    DETACHING_METHODS,
    EXP_FUNCTIONS,
    FRAMEWORK_REDUCTIONS,
    GRAD_LEAVES,
    LITERALS,
    MODEL_RESULT_NAME,
    MOVES,
    NON_TENSOR_ATTRIBUTES,
    NON_TENSOR_TORCH,
    PROB_ROLES,
    PY_VALUE_METHODS,
    PYTHON_BUILTINS,
    SOFTMAX_FUNCTIONS,
    VALUE_BUILTINS,
    ValueScope,
    What,
    device_argument,
    either,
    is_cpu,
    is_literal,
    requires_grad,
    through_shape,
)


class TensorQueries(ValueScope):
    """Questions about tensors, asked of the values bound so far."""

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
            return either(self.graph_of(node.left), self.graph_of(node.right))  # type: ignore[attr-defined]
        if kind is cst.UnaryOperation:
            return self.graph_of(node.expression)  # type: ignore[attr-defined]
        if kind in LITERALS or kind is cst.FormattedString:
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
        if name in CONSTANT_NAMES or name in self.ns.top_names:
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
            if qual.startswith(GRAD_LEAVES) or requires_grad(node):
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
                method in FRAMEWORK_REDUCTIONS
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
                device = device_argument(node)
                return device is None or is_cpu(device)
            func = node.func
            if qual is None and type(func) is cst.Attribute and func.attr.value not in MOVES:
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
            if type(func) is not cst.Attribute or func.attr.value in MOVES:
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
        return any(hosts) and all(h or is_literal(o) for h, o in zip(hosts, operands, strict=True))

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
        if (
            qual in EXP_FUNCTIONS
            and node.args
            and self.softmax_of(node.args[0].value) == "log_softmax"
        ):
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
            device = device_argument(node)
            if device is not None:
                return not is_cpu(device)
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
