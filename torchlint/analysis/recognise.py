"""Recognisers: what a call, a `with` item or a construction means for training, from the table
of known APIs (`apis.py`) and what the names hold (`values.py`). The walker hands each one over
in evaluation order; the recognisers record the events, constructions and API uses."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import libcst as cst

from torchlint.analysis.apis import (
    AMP_DEPRECATED,
    AUTOCAST_FUNCTIONS,
    CLIP_FUNCTIONS,
    DEVICE_SYNCS,
    ENABLE_GRAD_FUNCTIONS,
    ENGINE_NAME,
    FRAMEWORK_ACCUMULATE,
    FRAMEWORK_AUTOCAST,
    FRAMEWORK_CLIP,
    HOST_CONSTRUCTORS,
    ITER_WRAPPERS,
    NO_GRAD_FUNCTIONS,
    PROFILE_FUNCTIONS,
    RETURNS_SELF,
    STREAMING,
    SYNC_METHODS,
    TIMER_NAME,
    TIMERS,
    constructor_role,
)
from torchlint.analysis.deprecations import BY_QUALNAME as _API_CHANGES
from torchlint.analysis.facts import ApiUse, CrossEntropyInput, DeprecatedUse
from torchlint.analysis.model import ConstructedObject, Kind, LoopFrame, WithFrame, WithKind
from torchlint.analysis.names import (
    ImportTable,
    dotted,
    expr_text,
    looks_like_framework,
    looks_like_optimizer,
    root_name,
)
from torchlint.analysis.syntax import (
    NOT_A_LITERAL,
    is_false,
    literal,
    method_name,
    simple_text,
    string_value,
)
from torchlint.analysis.value import (
    NON_TENSOR_BUILTINS,
    NUMBER_BUILTINS,
    PROB_ROLES,
    UNKNOWN,
    Value,
    What,
    through_shape,
)

if TYPE_CHECKING:
    from torchlint.analysis.walk_state import WalkState


class CallRecogniser:
    """Turns the calls (and `with` items, constructions, accumulations) the walker meets into
    events, reading and updating the walker's state: its scope, frames and values."""

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

    def call(self, node: cst.Call) -> None:
        func = node.func
        qual = self.walk.imports.qualify(func)
        if (
            qual is not None
            and self.walk.project is not None
            and self.walk.project.is_project(qual)
        ):
            if self.project_call(node, qual):
                return
            qual = None  # the imported name is shadowed here
        if qual is not None:
            self.qualified_call(node, qual)
            return
        alias = self.walk.loss_aliases.get(self.walk.alias_key(func))
        if alias is not None:
            self.functional_loss(node, alias)  # `self.loss_func = F.cross_entropy`
        callee = self.walk.values.variable_call(node)
        if callee is not None and self.walk.constructed_kind(callee) == "cross-entropy":
            self.cross_entropy_input(node)  # `criterion(outputs, labels)`
        elif callee is not None and self.walk.constructed_kind(callee) == "nll-loss":
            self.cross_entropy_input(node, loss="nll")
        elif callee is not None and self.walk.constructed_kind(callee) == "bce-with-logits":
            self.cross_entropy_input(node, loss="bce-with-logits")
        elif callee is not None and callee.split(".", 1)[0] in self.walk.scope.params:
            self.cross_entropy_input(node, criterion=callee)  # maybe: decided by the rule
        if type(func) is cst.Attribute:
            self.method_call(node, func)
        elif type(func) is cst.Name:
            self.name_call(node, func.value)
        elif type(func) is cst.Call:  # `nn.CrossEntropyLoss()(outputs, labels)`
            inner = self.walk.imports.qualify(func.func)
            role = constructor_role(inner) if inner is not None else None
            if role == "cross-entropy":
                self.cross_entropy_input(node)
            elif role in ("nll-loss", "bce-with-logits"):
                self.cross_entropy_input(node, loss="nll" if role == "nll-loss" else role)

    def project_call(self, node: cst.Call, qual: str) -> bool:
        """A call of something imported from another project file. False when a definition or
        parameter of this file shadows the imported name (the call is then read as local)."""
        assert self.walk.project is not None
        if self.walk.shadowed(node.func):
            return False
        symbol = self.walk.project.symbol(qual)
        if symbol is not None and symbol.is_class:
            if _may_update_weights(qual, node):
                self.call_event(node, ("qualified", qual))  # as for any opaque constructor
            return True
        self.call_event(node, ("project", qual))
        return True

    def foreign_methods(self, qual: str) -> frozenset[str]:
        """The methods of a class another project file defines (`trainer.Trainer`)."""
        methods = self.walk.class_methods.get(qual)
        if methods is None:
            found = self.walk.project.class_methods(qual) if self.walk.project is not None else None
            methods = self.walk.class_methods[qual] = set(found or ())
        return frozenset(methods)

    def cross_entropy_input(
        self, node: cst.Call, criterion: str | None = None, loss: str = "cross-entropy"
    ) -> None:
        if not node.args:
            return
        values = self.walk.values
        value = node.args[0].value
        base = through_shape(value)  # `output.reshape(-1, vocab)`: still `output`
        producer = values.variable_call(base)
        if producer is None and isinstance(base, cst.Name | cst.Attribute):
            producer = values.produced_by(dotted(base) or "")
        softmax = values.softmax_of(value)
        others = [
            other
            for other in (
                values.alternatives.get(dotted(base) or "", ())
                if isinstance(base, cst.Name | cst.Attribute)
                else ()
            )
            if other.value.prob is not None or other.value.producer is not None
        ]
        if criterion is not None and softmax is None and producer is None and not others:
            return  # nothing that could make a parameter call interesting
        called = values.object_of(node.func) if criterion is not None else None
        element = values.unpacked.get(dotted(base) or "") if producer is not None else None
        scope = self.walk.scope
        alternatives = tuple(
            CrossEntropyInput(
                node,
                value,
                other.value.prob,
                other.value.producer,
                scope,
                criterion,
                called,
                loss,
                other.element if other.value.producer is not None else None,
                branch=other.node,
            )
            for other in others
        )
        self.walk.facts.ce_inputs.append(
            CrossEntropyInput(
                node,
                value,
                softmax,
                producer,
                scope,
                criterion,
                called,
                loss,
                element,
                alternatives,
            )
        )

    def deprecated_reference(self, node: cst.BaseExpression, qual: str) -> None:
        """`autocast = torch.cuda.amp.autocast`: a use that is not (yet) a call."""
        self.walk.facts.deprecated_amp.append(DeprecatedUse(qual, node, node, self._compat(node)))

    def api_reference(self, node: cst.BaseExpression, qual: str, root: str | None) -> None:
        """`torch.qr`, or `qr` after `from torch import qr`: a use of a table entry (the call
        replaces it when it is the callee). A parameter named `torch` is not the module."""
        if root is None or root in self.walk.scope.params:
            return
        compat = self.walk.compat_depth > 0 or root in self.walk.compat_names
        self.walk.facts.api_uses.append(ApiUse(qual, node, node, compat))

    def watched_call(self, node: cst.Call, qual: str) -> None:
        root = root_name(node.func)
        if root is None or root in self.walk.scope.params:
            return
        compat = self.walk.compat_depth > 0 or root in self.walk.compat_names
        self.walk.facts.watched_calls.append(ApiUse(qual, node, node.func, compat))

    def _compat(self, node: cst.BaseExpression) -> bool:
        """Whether a use sits in a version fallback (a version test, an `except` handler) or
        goes through a name imported in one."""
        return self.walk.compat_depth > 0 or root_name(node) in self.walk.compat_names

    def qualified_call(self, node: cst.Call, qual: str) -> None:
        if qual in _RECEIVES or qual == _P2P_OP:
            self.received_into(node, qual)
        if qual in AMP_DEPRECATED:
            uses = self.walk.facts.deprecated_amp
            if uses and uses[-1].node is node.func:
                uses.pop()  # the reference is this call's callee: report the call instead
            uses.append(DeprecatedUse(qual, node, node.func, self._compat(node.func)))
        elif qual in _API_CHANGES:
            api_uses = self.walk.facts.api_uses
            for i in range(len(api_uses) - 1, -1, -1):  # the callee, recorded just before
                if api_uses[i].node is node.func:
                    api_uses[i] = ApiUse(qual, node, node.func, api_uses[i].compat)
                    break
        elif qual in self.watched or (
            self.watched_prefixes and qual.startswith(self.watched_prefixes)
        ):
            self.watched_call(node, qual)
        if not qual.startswith("torch.") and _may_update_weights(qual, node):
            # e.g. `xm.optimizer_step(optimizer)`: a library call that may step or clear.
            self.call_event(node, ("qualified", qual))
        if qual == "torch.autograd.backward":
            subject = node.args[0].value if node.args else None
            root = root_name(subject) if subject is not None else None
            self.walk.event(
                Kind.BACKWARD,
                node,
                method="torch.autograd.backward",
                via="autograd",
                subject=root,
                subject_no_grad=self.walk.values.no_grad_name(root),
            )
        elif qual in CLIP_FUNCTIONS:
            self.walk.event(Kind.CLIP, node, method=qual.rsplit(".", 1)[-1])
        elif qual in DEVICE_SYNCS:
            self.walk.event(Kind.DEVICE_SYNC, node, method=qual.rsplit(".", 1)[-1])
        elif (
            qual in TIMERS
            or qual.startswith("torch.cuda.Event")
            or TIMER_NAME.search(qual.rsplit(".", 1)[-1])
        ):
            self.walk.event(Kind.TIMING, node, method=qual)
        else:
            self.functional_loss(node, qual)

    def functional_loss(self, node: cst.Call, qual: str) -> None:
        """`F.cross_entropy(logits, y)` and the other losses whose input must be logits (or
        log-probabilities): what they are given."""
        loss = FUNCTIONAL_LOSSES.get(qual)
        if loss is not None:
            self.cross_entropy_input(node, loss=loss)

    def name_call(self, node: cst.Call, name: str) -> None:
        shadowed = name in self.walk.top_names or name in self.walk.imports.aliases
        if name in NUMBER_BUILTINS and not shadowed and len(node.args) == 1:
            self.sync_of_value(node, node.args[0].value, name)
            return
        if name == "print" and not shadowed:
            for arg in node.args:
                printed = self.walk.values.printed_tensor(arg.value)
                if printed is not None:
                    self.sync_of_value(node, printed, "print")
                    return
            return
        if name == "next" and not shadowed and node.args:
            self.next_batch(node.args[0].value)
            return
        if name in NON_TENSOR_BUILTINS and not shadowed:
            return
        self.call_event(node, ("name", name))

    def method_call(self, node: cst.Call, func: cst.Attribute) -> None:
        method = func.attr.value
        receiver_node = func.value
        if method == "log" and not node.args and type(receiver_node) is cst.Call:
            self.walk.facts.log_calls.append(node)  # maybe `x.exp().sum(dim).log()` (TL507)
        if type(receiver_node) is cst.Call and dotted(receiver_node.func) == "super":
            self.call_event(node, ("super", method))
            return
        if method in _MODULE_ONLY_METHODS and _is_method_call(receiver_node, "cpu"):
            self.module_move(receiver_node)  # `m.cpu().parameters()`: a module, not a tensor
        receiver = expr_text(_moved_object(receiver_node))
        project_class = self.walk.project_class_of(receiver)
        if project_class is not None and "." in project_class:
            self.foreign_methods(project_class)
        if (
            project_class is not None
            and method in self.walk.class_methods.get(project_class, ())
            and method not in _MODE_METHODS  # a trainer's or a module's: resolve.py decides
        ):
            self.call_event(node, ("method", receiver, method))
            return
        on_grad = receiver.endswith((".grad", ".grad.data"))
        if on_grad and method == "zero_":
            owner = receiver.rsplit(".grad", 1)[0]
            self.walk.event(Kind.ZERO_GRAD, node, receiver=owner, method="grad")
        elif on_grad and method.endswith("_") and method not in ("detach_", "requires_grad_"):
            self.walk.event(Kind.GRAD_WRITE, node, receiver=receiver, method=method)
        elif method == "manual_backward" or (
            method == "backward" and _fits_backward(node, receiver)
        ):
            self.backward(node, receiver_node, receiver, method)
        elif method == "step" and not node.args and ENGINE_NAME.search(receiver.rsplit(".", 1)[-1]):
            # A DeepSpeed engine's step: it updates the weights and clears the gradients.
            self.walk.event(Kind.STEP, node, receiver=receiver, method="step", via="engine")
        elif method == "step":
            self.step(node, receiver)
        elif method == "zero_grad":
            self.walk.event(Kind.ZERO_GRAD, node, receiver=receiver, method=method)
        elif method == "update" and self.walk.is_scaler(receiver) and not node.args:
            self.walk.event(
                Kind.SCALER_UPDATE, node, receiver=receiver, scaler=receiver, method=method
            )
        elif method == "unscale_" and self.walk.is_scaler(receiver):
            arg = expr_text(node.args[0].value) if node.args else None
            self.walk.event(Kind.SCALER_UNSCALE, node, receiver=arg, scaler=receiver, method=method)
        elif method == "train":
            kind = Kind.MODE_TRAIN
            if node.args:
                value = node.args[0].value
                if is_false(value):
                    kind = Kind.MODE_EVAL
                elif not (type(value) is cst.Name and value.value == "True"):
                    kind = Kind.MODE_UNKNOWN
            # Kept with what a call needs: `trainer.train(loader)` on an instance of a class
            # whose own `train` runs an epoch is a call (resolve.py decides, knowing the class).
            self.call_event(node, ("method", receiver, method), kind)
        elif method == "eval" and not node.args:
            self.call_event(node, ("method", receiver, method), Kind.MODE_EVAL)
        elif (method in SYNC_METHODS and not node.args) or method == "cpu":
            if _chain_has_sync(receiver_node):
                return  # `x.cpu().numpy()`: one sync, already recorded
            self.sync_of_value(node, receiver_node, method)
        elif method in FRAMEWORK_CLIP and self.framework_method(func) is not None:
            self.walk.event(Kind.CLIP, node, method=method, via="framework")
        elif method in ("to", "cuda") and self.moves_to_device(node):
            self.transfer(node, receiver_node)
        elif method in ("record", "elapsed_time") and _looks_like_event(receiver):
            self.walk.event(Kind.TIMING, node, method=method)
        elif method == "add_module" and len(node.args) == 2:
            self.added_module(receiver, node)
            self.call_event(node, ("method", receiver, method))
        elif method in ("append", "extend") and len(node.args) == 1:
            self.accumulation(node, receiver, node.args[0].value)
            self.call_event(node, ("method", receiver, method))
        else:
            self.call_event(node, ("method", receiver, method))

    def module_move(self, node: cst.BaseExpression) -> None:
        """Forget the host sync recorded for a `.cpu()` that turns out to move a module (calls
        are recorded inner first, so the module method comes after it)."""
        events = self.walk.scope.events
        for i in range(len(events) - 1, max(len(events) - 8, -1), -1):
            if events[i].node is node and events[i].kind is Kind.HOST_SYNC:
                del events[i]
                return

    def moves_to_device(self, node: cst.Call) -> bool:
        """`.cuda()`, `.to(device)`, `.to("cuda:0")`, `.to(device=...)` — not `.to(torch.float16)`
        or `.to("cpu")`."""
        if method_name(node) == "cuda":
            return True
        for arg in node.args:
            key = arg.keyword.value if arg.keyword else None
            if key in ("dtype", "non_blocking", "copy", "memory_format"):
                continue
            value = arg.value
            text = (dotted(value) or expr_text(value)).lower()
            if type(value) is cst.SimpleString:
                return "cpu" not in text
            return key == "device" or "device" in text or "cuda" in text or text.endswith("dev")
        return False

    def transfer(self, node: cst.Call, receiver: cst.BaseExpression) -> None:
        non_blocking = any(
            a.keyword is not None and a.keyword.value == "non_blocking" and not is_false(a.value)
            for a in node.args
        )
        created = receiver
        while (
            type(created) is cst.Call
            and type(created.func) is cst.Attribute
            and self.walk.imports.qualify(created.func) is None
            and created.func.attr.value not in ("to", "cuda")
        ):
            created = created.func.value  # `torch.arange(n).unsqueeze(0).to(device)`
        if type(created) is cst.Call:
            qual = self.walk.imports.qualify(created.func) or ""
            if (
                qual in HOST_CONSTRUCTORS
                and not any(
                    a.keyword is not None and a.keyword.value == "device" for a in created.args
                )
                and not _copies_host_data(qual, created)
            ):
                self.walk.event(Kind.CREATE_MOVE, node, method=qual)
                return
        if self.walk.values.is_host(receiver):
            self.walk.event(
                Kind.TRANSFER,
                node,
                subject=root_name(receiver),
                non_blocking=non_blocking,
                receiver=expr_text(receiver),
            )

    def next_batch(self, iterator: cst.BaseExpression) -> None:
        """`next(it)` in a loop: the loop iterates whatever `it` iterates."""
        if type(iterator) is cst.Call and dotted(iterator.func) == "iter" and iterator.args:
            source = dotted(iterator.args[0].value)
        else:
            text = dotted(iterator)
            source = (self.walk.values.iterated(text) or text) if text else None
        loops = [f for f in self.walk.frames if isinstance(f, LoopFrame)]
        if source is not None and loops:
            loops[-1].sources.append(source)
            value = self.walk.values.object_of_text(source)
            if value is not UNKNOWN:
                loops[-1].source_values.append(value)

    def added_module(self, receiver: str, node: cst.Call) -> None:
        """`self.head.add_module("softmax", nn.Softmax(dim=1))`: a container built step by step
        whose last module (so far) is a softmax outputs probabilities, as `nn.Sequential(...,
        nn.Softmax())` does; a module added after it takes that back."""
        added = node.args[1].value
        qual = self.walk.imports.qualify(added.func) if type(added) is cst.Call else None
        role = constructor_role(qual or "")
        constructed = self.walk.facts.constructed
        if role in PROB_ROLES and receiver != "self":
            self.walk.order += 1
            constructed.append(
                ConstructedObject(
                    role, receiver, qual or "", node, self.walk.scope, order=self.walk.order
                )
            )
            return
        constructed[:] = [
            obj
            for obj in constructed
            if not (
                obj.target == receiver
                and obj.scope is self.walk.scope
                and obj.node is not node
                and method_name(obj.node) == "add_module"
            )
        ]

    def backward(
        self, node: cst.Call, receiver_node: cst.BaseExpression, receiver: str, method: str
    ) -> None:
        """`loss.backward()`, `scaler.scale(loss).backward()`, `accelerator.backward(loss)`: one
        BACKWARD event, with the loss (what it was computed from) and how it is scaled."""
        values = self.walk.values
        via, scaler = "tensor", None
        loss: cst.BaseExpression | None = receiver_node
        if type(receiver_node) is cst.Call and method_name(receiver_node) == "scale":
            scaler = expr_text(receiver_node.func.value)  # type: ignore[attr-defined]
            if self.walk.is_scaler(scaler):
                via = "scaled"
                loss = receiver_node.args[0].value if receiver_node.args else None
            else:
                scaler = None
        if via == "tensor" and values.is_scaled(receiver):
            via, loss = "scaled", None  # `scaled = scaler.scale(loss)`, then `scaled.backward()`
        elif via == "tensor" and (
            method == "manual_backward" or (node.args and looks_like_framework(receiver))
        ):
            via = "framework"
            loss = node.args[0].value if node.args else None
        root = root_name(loss) if loss is not None else None
        self.walk.event(
            Kind.BACKWARD,
            node,
            receiver=receiver,
            method=method,
            via=via,
            scaler=scaler,
            subject=root,
            subject_no_grad=via != "framework" and values.no_grad_name(root),
            reach=values.reach_of(loss if loss is not None else receiver_node),
        )
        if via == "tensor" and root is not None and _names_a_tensor(loss, root):
            values.mark_backward(root)  # not `model` in `model(x).sum().backward()`

    def step(self, node: cst.Call, receiver: str) -> None:
        if self.walk.is_scaler(receiver):
            optimizer = expr_text(node.args[0].value) if node.args else None
            self.walk.event(
                Kind.STEP, node, receiver=optimizer, method="step", via="scaler", scaler=receiver
            )
            return
        closure = node.args[0].value if node.args else None
        if type(closure) is cst.Name and (
            self.walk.resolve_local(closure.value) is not None
            or closure.value in self.walk.top_names
        ):
            # LBFGS & co.: the closure runs inside step, before the update.
            self.call_event(closure, ("name", closure.value))
        has_closure = any(a.keyword is None or a.keyword.value == "closure" for a in node.args)
        # Which `.step()` this is (optimizer, scheduler, unknown) is decided once the whole
        # module is known: see resolve.py.
        self.walk.event(
            Kind.MAYBE_STEP, node, receiver=receiver, method="step", has_closure=has_closure
        )

    def call_event(self, node: cst.CSTNode, ref: tuple[str, ...], kind: Kind = Kind.CALL) -> None:
        args: tuple[str, ...] = ()
        kwargs: tuple[tuple[str, str], ...] = ()
        tensor_args: set[int | str] = set()
        host_args: set[int | str] = set()
        if type(node) is cst.Call:
            positional = [a for a in node.args if a.keyword is None and not a.star]
            args = tuple(simple_text(a.value) for a in positional)
            kwargs = tuple(
                (a.keyword.value, simple_text(a.value)) for a in node.args if a.keyword is not None
            )
            for i, a in enumerate(positional):
                if self.walk.values.is_tensor(a.value):
                    tensor_args.add(i)
                elif self.walk.values.is_host(a.value):
                    host_args.add(i)
            for a in node.args:
                if a.keyword is not None and self.walk.values.is_tensor(a.value):
                    tensor_args.add(a.keyword.value)
                elif a.keyword is not None and self.walk.values.is_host(a.value):
                    host_args.add(a.keyword.value)
        receiver = ref[1] if ref[0] in ("name", "method") else "self"
        method = ref[-1].rsplit(".", 1)[-1] if ref[0] == "project" else ref[-1]
        event = self.walk.event(kind, node, method=method, receiver=receiver)
        event.callee_ref = ref
        event.arg_texts = args
        event.kwarg_texts = kwargs
        event.tensor_args = frozenset(tensor_args)
        event.host_args = frozenset(host_args)
        values = self.walk.values
        if type(node) is cst.Call and node.args:
            event.arg_values, event.kwarg_values = values.arguments(node)
            event.arg_consts = _literal_arguments(node)
        if ref[0] in ("name", "method") and (ref[0] == "method" or not self.walk.defines(ref[1])):
            event.obj = values.object_of_text(receiver)  # what is called, or its receiver
        helper = ref[0] == "name" and self.walk.defines(ref[1])
        if (helper or ref[:2] == ("method", "self")) and type(node) is cst.Call and args:
            probs = tuple(values.softmax_of(a.value) for a in positional)
            if any(probs):
                event.arg_probs = probs  # a loss helper handed probabilities

    def received_into(self, node: cst.Call, qual: str) -> None:
        """`dist.recv(t, src)`, `dist.irecv(t, src)`, `P2POp(dist.irecv, t, peer)`: `t` is
        filled with what another rank sends (a pipeline stage's shapes, a schedule's metadata),
        which the host reads because it needs it, not to log it."""
        args = node.args
        if qual == _P2P_OP:
            if len(args) < 2 or self.walk.imports.qualify(args[0].value) not in _RECEIVES:
                return
            args = args[1:]
        root = root_name(args[0].value) if args else None
        if root is not None:
            self.walk.values.received.add(root)

    def sync_of_value(self, node: cst.Call, value: cst.BaseExpression, method: str) -> None:
        root = root_name(value)
        if self.walk.values.is_tensor(value):
            is_tensor: bool | None = True
        elif self.walk.values.is_param(value):
            is_tensor = None  # the caller knows
        else:
            is_tensor = False
        host = value
        while type(host) is cst.Call and type(host.func) is cst.Attribute:
            if host.func.attr.value in ("to", "cuda") or self.walk.imports.qualify(host.func):
                break  # moved to the device, or made by `torch.rand(...)`: judged as it is
            host = host.func.value  # `y.sum().item()`: look through tensor methods
        consumer = (
            self.walk.consumer[1]
            if self.walk.consumer and self.walk.consumer[0] == id(node)
            else None
        )
        self.walk.event(
            Kind.HOST_SYNC,
            node,
            method=method,
            subject=root,
            subject_is_tensor=is_tensor,
            subject_on_host=not is_tensor and self.walk.values.is_host(host),
            receiver=expr_text(value) if method in SYNC_METHODS else None,
            consumer=consumer,
            subject_received=root is not None and root in self.walk.values.received,
            subject_param=None if is_tensor else self.walk.values.param_root(host),
        )


# --- helpers ------------------------------------------------------------------------------

# Point-to-point receives: their tensor argument holds what another rank sent.
_RECEIVES = frozenset({"torch.distributed.recv", "torch.distributed.irecv"})
_P2P_OP = "torch.distributed.P2POp"

# Functional losses whose input TL109 / TL112 / TL114 check, by the `loss` they record.
FUNCTIONAL_LOSSES = {
    "torch.nn.functional.cross_entropy": "cross-entropy",
    "torch.nn.functional.nll_loss": "nll",
    "torch.nn.functional.binary_cross_entropy_with_logits": "bce-with-logits",
}

# `x.train(...)` / `x.eval()`: a mode switch, unless `x`'s class defines its own (resolve.py).
_MODE_METHODS = frozenset(("train", "eval"))

# Methods only an `nn.Module` has: what they are called on is a module, not a tensor.
_MODULE_ONLY_METHODS = {
    "parameters", "named_parameters", "state_dict", "load_state_dict", "modules",
    "named_modules", "children", "buffers", "named_buffers",
}  # fmt: skip


def _is_method_call(node: cst.BaseExpression, method: str) -> bool:
    return (
        type(node) is cst.Call
        and type(node.func) is cst.Attribute
        and node.func.attr.value == method
    )


def _copies_host_data(qual: str, call: cst.Call) -> bool:
    """`torch.tensor(loss_value).cuda()`: the data is a host value, so `device=` would copy it
    just the same (only factories such as `zeros` or `arange` can skip the host)."""
    if qual not in ("torch.tensor", "torch.as_tensor") or not call.args:
        return False
    return isinstance(call.args[0].value, cst.Name | cst.Attribute | cst.Call | cst.Subscript)


def _literal_arguments(node: cst.Call) -> tuple[tuple[int | str, object], ...]:
    found: list[tuple[int | str, object]] = []
    position = 0
    for arg in node.args:
        if arg.star:
            break
        value = literal(arg.value)
        if arg.keyword is not None:
            if value is not NOT_A_LITERAL:
                found.append((arg.keyword.value, value))
            continue
        if value is not NOT_A_LITERAL:
            found.append((position, value))
        position += 1
    return tuple(found)


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


def _may_update_weights(qual: str, node: cst.Call) -> bool:
    last = qual.rsplit(".", 1)[-1].lower()
    if any(word in last for word in ("step", "optim", "update", "zero", "clear", "reset")):
        return True
    return any(
        looks_like_optimizer(simple_text(a.value)) for a in node.args if simple_text(a.value)
    )


def _moved_object(node: cst.BaseExpression) -> cst.BaseExpression:
    """`net.to(device)` / `net.eval().cpu()` return `net` itself: see through the chain."""
    while type(node) is cst.Call and method_name(node) in RETURNS_SELF:
        node = node.func.value  # type: ignore[attr-defined]
    return node


def _looks_like_event(receiver: str) -> bool:
    name = receiver.rsplit(".", 1)[-1].lower()
    return any(word in name for word in ("start", "end", "event", "evt", "tic", "toc", "begin"))


def _chain_has_sync(node: cst.BaseExpression) -> bool:
    while True:
        if type(node) is cst.Call:
            if method_name(node) in SYNC_METHODS:
                return True
            node = node.func
        elif isinstance(node, cst.Attribute | cst.Subscript):
            node = node.value
        else:
            return False


# `Tensor.backward(gradient, retain_graph, create_graph, inputs)` takes at most four positional
# arguments, `torch.autograd.backward` six; a `backward` called with more is another API (a
# compiled extension's kernel inside an `autograd.Function`, `wkv_cuda.backward(B, T, C, ...)`).
_BACKWARD_POSITIONALS = 4
_AUTOGRAD_POSITIONALS = 6


def _fits_backward(node: cst.Call, receiver: str) -> bool:
    """The call can be autograd's backward, judged by how many positional arguments it has."""
    positional = 0
    for arg in node.args:
        if arg.keyword is not None or arg.star:
            break
        positional += 1
    limit = _AUTOGRAD_POSITIONALS if receiver.endswith("autograd") else _BACKWARD_POSITIONALS
    return positional <= limit


def _names_a_tensor(loss: cst.BaseExpression | None, root: str) -> bool:
    """Whether the backpropagated expression is its root name itself, or an attribute or item
    of it (`loss`, `out.loss`, `losses[0]`), not the result of calling it (`model(x).sum()`)."""
    node = loss
    while node is not None and type(node) in (cst.Attribute, cst.Subscript, cst.Call):
        if type(node) is cst.Call:
            func = node.func
            if type(func) is not cst.Attribute:
                return False  # `model(x)`: the root is called
            node = func.value
            continue
        node = node.value  # type: ignore[attr-defined]
    return type(node) is cst.Name and node.value == root
