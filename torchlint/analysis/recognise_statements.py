"""Recognising what statements hand over: `with` items, constructions, accumulations, loops."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import libcst as cst

from torchlint.analysis.apis import (
    AUTOCAST_FUNCTIONS,
    ENABLE_GRAD_FUNCTIONS,
    FRAMEWORK_ACCUMULATE,
    FRAMEWORK_AUTOCAST,
    ITER_WRAPPERS,
    NO_GRAD_FUNCTIONS,
    PROFILE_FUNCTIONS,
    RETURNS_SELF,
    STREAMING,
    constructor_role,
)
from torchlint.analysis.model import ConstructedObject, Kind, LoopFrame, WithFrame, WithKind
from torchlint.analysis.names import ImportTable, dotted, expr_text, looks_like_framework, root_name
from torchlint.analysis.syntax import is_false, method_name, string_value
from torchlint.analysis.value import PROB_ROLES, UNKNOWN, Value, What

if TYPE_CHECKING:
    from torchlint.analysis.walk_state import WalkState


class StatementRecogniser:
    """What a `with` item or decorator, a construction, an accumulation, a loop's iterable is."""

    def __init__(
        self, walk: WalkState, watched: frozenset[str], watched_prefixes: tuple[str, ...]
    ) -> None:
        self.walk = walk
        self.watched = watched  # qualified names the selected api rules look at
        self.watched_prefixes = watched_prefixes

    def with_frame(self, owner: cst.CSTNode, expr: cst.BaseExpression) -> WithFrame:
        call = expr if type(expr) is cst.Call else None
        func = call.func if call is not None else expr
        qual = self.walk.imports.qualify(func) or ""
        text = expr_text(func)
        if qual in AUTOCAST_FUNCTIONS:
            device = AUTOCAST_FUNCTIONS[qual]
            dtype = None
            if call is not None:
                for i, arg in enumerate(call.args):
                    key = arg.keyword.value if arg.keyword else None
                    if key == "device_type" or (key is None and i == 0 and device is None):
                        device = string_value(arg.value) or device
                    elif key == "dtype":
                        dtype = (dotted(arg.value) or "").rsplit(".", 1)[-1] or None
                    elif key == "enabled" and is_false(arg.value):
                        return WithFrame(owner, WithKind.AUTOCAST_OFF, text)
            return WithFrame(owner, WithKind.AUTOCAST, text, dtype, device)
        if qual in NO_GRAD_FUNCTIONS:
            if call is not None and any(
                ((a.keyword and a.keyword.value == "mode") or not a.keyword) and is_false(a.value)
                for a in call.args
            ):
                return WithFrame(owner, WithKind.OTHER, text)  # inference_mode(False)
            return WithFrame(owner, WithKind.NO_GRAD, text)
        if qual == "torch.set_grad_enabled" and call is not None and call.args:
            if is_false(call.args[0].value):
                return WithFrame(owner, WithKind.NO_GRAD, text)
            return WithFrame(owner, WithKind.ENABLE_GRAD, text)
        if qual in ENABLE_GRAD_FUNCTIONS:
            return WithFrame(owner, WithKind.ENABLE_GRAD, text)
        method = self.framework_method(func) if call is not None and not qual else None
        if method in FRAMEWORK_AUTOCAST:
            # The framework's own mixed precision: its dtype is the run's configuration.
            return WithFrame(owner, WithKind.AUTOCAST, text)
        if method in FRAMEWORK_ACCUMULATE:
            return WithFrame(owner, WithKind.ACCUMULATE, text)
        lowered = text.lower()
        if qual in PROFILE_FUNCTIONS or "profil" in lowered or "timer" in lowered:
            return WithFrame(owner, WithKind.PROFILE, text)
        return WithFrame(owner, WithKind.OTHER, text)

    def framework_method(self, func: cst.BaseExpression) -> str | None:
        """`accelerator.autocast` -> `autocast`: the method, when it is called on a training
        framework's object (an Accelerator, a Fabric, a DeepSpeed engine)."""
        if type(func) is not cst.Attribute:
            return None
        receiver = func.value
        if looks_like_framework(dotted(receiver) or ""):
            return func.attr.value
        if self.walk.values.object_of(receiver).what is What.FRAMEWORK:
            return func.attr.value
        return None

    def constructed(self, target: str, call: cst.Call) -> None:
        built = self.walk.facts.constructed
        start = len(built)
        self._constructed(target, call)
        branches = self.walk.branches
        if branches:
            built[start:] = [replace(obj, branches=branches) for obj in built[start:]]

    def _constructed(self, target: str, call: cst.Call) -> None:
        moved = _moved_object(call)  # `Net(...).to(device)` is the Net it built
        if type(moved) is cst.Call:
            call = moved
        if _streams(call, self.walk.imports):
            self.walk.order += 1
            self.walk.facts.constructed.append(
                ConstructedObject(
                    "iterable-dataset", target, "", call, self.walk.scope, order=self.walk.order
                )
            )
            return
        qual = self.walk.imports.qualify(call.func)
        if qual is not None:
            role = constructor_role(qual)
            if role == "sequential" and call.args:
                last = call.args[-1].value
                inner = self.walk.imports.qualify(last.func) if type(last) is cst.Call else None
                role = constructor_role(inner or "")
                role = role if role in PROB_ROLES else None
            if role is None:
                if self.walk.is_project_class(call.func, qual):
                    self.walk.instances[target] = qual  # dotted: a class of another project file
                    self.walk.facts.constructed.append(
                        ConstructedObject("instance", target, qual, call, self.walk.scope)
                    )
                return
            enabled: bool | None = True
            for arg in call.args:
                if arg.keyword is not None and arg.keyword.value == "enabled":
                    enabled = False if is_false(arg.value) else None
            owner = None
            if role == "optimizer" and call.args:
                first = call.args[0].value
                if type(first) is cst.Call and method_name(first) in (
                    "parameters",
                    "named_parameters",
                ):
                    owner = expr_text(first.func.value)  # type: ignore[attr-defined]
            self.walk.order += 1
            value = self.walk.values.object_of(call) if role == "dataloader" else None
            self.walk.facts.constructed.append(
                ConstructedObject(
                    role,
                    target,
                    qual,
                    call,
                    self.walk.scope,
                    enabled,
                    owner,
                    self.walk.order,
                    value,
                )
            )
        elif (
            type(call.func) is cst.Name
            and call.func.value in self.walk.facts.functions
            and set(self.walk.facts.functions[call.func.value].returned_roles) == {"tensor-dataset"}
        ):  # `dataset = build_corpus()` where the helper returns a TensorDataset
            self.walk.order += 1
            self.walk.facts.constructed.append(
                ConstructedObject(
                    "tensor-dataset",
                    target,
                    call.func.value,
                    call,
                    self.walk.scope,
                    order=self.walk.order,
                )
            )
        elif type(call.func) is cst.Name and call.func.value in self.walk.class_methods:
            self.walk.instances[target] = call.func.value
            self.walk.facts.constructed.append(
                ConstructedObject("instance", target, call.func.value, call, self.walk.scope)
            )

    def accumulation(self, node: cst.CSTNode, target: str, value: cst.BaseExpression) -> None:
        """`total += loss` / `losses.append(loss)` in a loop, with `loss` on the graph. Which
        loop's iterations the total outlives is the rule's question: we record where it was
        reset (assigned) so far."""
        if (
            not self.walk.loop_assigned
            or self.walk.under_no_grad()
            or not self.walk.values.is_graph(value)
        ):
            return
        loops = [f for f in self.walk.frames if isinstance(f, LoopFrame)]
        reset_in = tuple(
            loop
            for loop, names in zip(loops, self.walk.loop_assigned, strict=False)
            if target in names
        )
        producer = self.producer_of(value)
        self.walk.event(
            Kind.ACCUMULATE,
            node,
            receiver=target,
            subject=root_name(value),
            value=value,
            reset_in=reset_in,
            producer=producer,
            # what computed it, when it is called directly (`total += loss_fn(out, y)`)
            obj=self.walk.values.object_of(value.func) if type(value) is cst.Call else None,
        )

    def producer_of(self, value: cst.BaseExpression) -> str | None:
        """The variable called to compute `value`: `model` for `model(x)`, for `out` after
        `out = model(x)`, and for `out.logits * w`."""
        while isinstance(value, cst.BinaryOperation | cst.UnaryOperation):
            value = value.left if isinstance(value, cst.BinaryOperation) else value.expression
        called = self.walk.values.variable_call(value)
        if called is not None:
            return called
        while type(value) is cst.Call and type(value.func) is cst.Attribute:
            value = value.func.value  # `loss.mean()`, `out.float()`
        while isinstance(value, cst.Attribute | cst.Subscript):
            text = dotted(value)
            producer = self.walk.values.produced_by(text) if text is not None else None
            if producer is not None:
                return producer
            value = value.value
        text = dotted(value)
        return self.walk.values.produced_by(text) if text is not None else None

    def calls_no_grad_function(self, value: cst.BaseExpression) -> bool:
        """`loss = compute(...)` where `compute` is decorated with `torch.no_grad()`."""
        if type(value) is not cst.Call:
            return False
        name = dotted(value.func)
        if name is None:
            return False
        if name.startswith("self.") and self.walk.class_stack:
            name = f"{self.walk.class_stack[-1].name}.{name[5:]}"
        return name in self.walk.no_grad_functions

    def loop_sources(self, node: cst.BaseExpression) -> list[str]:
        """The loaders a `for` iterates: through enumerate / tqdm / iter, each side of a zip."""
        if type(node) is cst.Call:
            name = dotted(node.func) or ""
            if name == "zip":
                return [s for a in node.args for s in self.loop_sources(a.value)]
            if (name in ITER_WRAPPERS or name.endswith(".tqdm")) and node.args:
                return self.loop_sources(node.args[0].value)
            return []
        text = dotted(node)
        if text is None:
            return []
        return [self.walk.values.iterated(text) or text]

    def loop_source_values(self, node: cst.BaseExpression) -> list[Value]:
        """The values of what a `for` iterates (as `loop_sources`), for loaders that factories
        return: `for x in build_loader(cfg):`, `loader = make_loaders()[0]`."""
        values = self.walk.values
        if type(node) is cst.Call:
            name = dotted(node.func) or ""
            if name == "zip":
                return [v for a in node.args for v in self.loop_source_values(a.value)]
            if (name in ITER_WRAPPERS or name.endswith(".tqdm")) and node.args:
                return self.loop_source_values(node.args[0].value)
        text = dotted(node)
        iterated = values.iterated(text) if text is not None else None
        value = values.object_of_text(iterated) if iterated else values.object_of(node)
        return [value] if value is not UNKNOWN else []


# --- helpers ------------------------------------------------------------------------------


def _streams(call: cst.Call, imports: ImportTable) -> bool:
    """An iterable-style dataset the loader cannot shuffle: `load_dataset(..., streaming=True)`,
    `wds.WebDataset(urls).shuffle(1000).decode()`, an `IterableDataset` from a library."""
    node: cst.BaseExpression = call
    while type(node) is cst.Call:
        if any(
            a.keyword is not None and a.keyword.value == "streaming" and not is_false(a.value)
            for a in node.args
        ):
            return True
        qual = imports.qualify(node.func)
        if qual is not None:
            return bool(STREAMING.search(qual))
        if type(node.func) is not cst.Attribute:
            return False
        node = node.func.value
    return False


def _moved_object(node: cst.BaseExpression) -> cst.BaseExpression:
    """`net.to(device)` / `net.eval().cpu()` return `net` itself: see through the chain."""
    while type(node) is cst.Call and method_name(node) in RETURNS_SELF:
        node = node.func.value  # type: ignore[attr-defined]
    return node
