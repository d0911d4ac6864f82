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

import weakref
from dataclasses import replace

import libcst as cst

from torchlint.analysis.branches import (
    MAX_ALTERNATIVES,
    Alternative,
    BranchEnd,
    Undo,
    inherit,
    remember,
    restore,
)
from torchlint.analysis.model import Scope
from torchlint.analysis.names import (
    dotted,
)
from torchlint.analysis.value import (
    DETACHING_METHODS,
    UNKNOWN,
    Namespace,
    Value,
    What,
    iterated_name,
    names_in,
    rebound_params,
    reference,
    through_shape,
)
from torchlint.analysis.value_objects import ObjectQueries
from torchlint.analysis.value_tensors import TensorQueries


class Values(TensorQueries, ObjectQueries):
    """The values of one scope's names, as the walk has bound them so far: its state and its
    updates here, its queries in value_tensors.py and value_objects.py."""

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
        self.branches: list[Undo] = []  # the open `if` branches, innermost last

    # --- updates ------------------------------------------------------------------------

    def get(self, text: str) -> Value | None:
        return self.env.get(text)

    def put(self, text: str, value: Value) -> None:
        self._set(text, value, rebinds=True)

    def _set(self, text: str, value: Value, *, rebinds: bool = False) -> None:
        """Every write of `env` (`rebinds`: a new binding, not new facts about the old one)."""
        if self.branches:
            undo = self.branches[-1]
            remember(undo.env, self.env, text)
            if rebinds and text in self.alternatives:
                remember(undo.alternatives, self.alternatives, text)
        self.env[text] = value
        if rebinds and self.alternatives:
            self.alternatives.pop(text, None)

    def set_unpacked(self, text: str, index: int | None) -> None:
        """`text` is item `index` of a call's result (None: it is not)."""
        if index is None and text not in self.unpacked:
            return
        if self.branches:
            remember(self.branches[-1].unpacked, self.unpacked, text)
        if index is None:
            del self.unpacked[text]
        else:
            self.unpacked[text] = index

    # --- branches (see branches.py) -------------------------------------------------------

    def open_branch(self) -> None:
        """The walk enters the body of an `if` that has an `else`, or that `else`."""
        self.branches.append(Undo())

    def _close(self) -> Undo:
        undo = self.branches.pop()
        if self.branches:
            inherit(self.branches[-1], undo)
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
            if self.branches:
                remember(self.branches[-1].alternatives, self.alternatives, text)
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
        index = None
        if value.producer is None and through_shape(node) is not node:
            # `pred = torch.squeeze(pred)`, `out = out.view(-1)`: still the model's output (and
            # the same item of its tuple)
            output = self.output_of(node)
            if output is not None:
                value = replace(value, producer=output[0])
                index = output[1]
        self._set(text, value, rebinds=True)
        self.set_unpacked(text, index)
        return value

    def output_of(self, node: cst.BaseExpression) -> tuple[str, int | None] | None:
        """The model whose output the variable read by `node` holds, through reshapes (`pred`,
        `pred.float()` after `pred, depth = model(x)`), with the item of its tuple result (None:
        the whole result); None when no model's output is known there."""
        text = dotted(through_shape(node))
        producer = self.produced_by(text) if text is not None else None
        if producer is None:
            return None
        return producer, self.unpacked.get(text or "")

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
        iterates = iterated_name(node)  # `iter(loader)`, `pbar = tqdm(enumerate(loader))`
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
                found |= rebound_params(local, node)
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
