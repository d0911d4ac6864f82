"""Recognising calls: which one a call is (a known API, a builtin, a method), and API uses.

The recognisers tell what a call, a `with` item or a construction means for training, from the
table of known APIs (`apis.py`) and what the names hold (`values.py`); the walker hands each one
over in evaluation order, and they record the events, constructions and API uses. Their parts,
each the base of the next: `recognise_statements.py` (`with` items, constructions,
accumulations, what loops iterate), `recognise_events.py` (what a recognised call records),
and the calls here.
"""

from __future__ import annotations

import libcst as cst

from torchlint.analysis.apis import (
    AMP_DEPRECATED,
    CLIP_FUNCTIONS,
    DEVICE_SYNCS,
    ENGINE_NAME,
    FRAMEWORK_CLIP,
    SYNC_METHODS,
    TIMER_NAME,
    TIMERS,
    constructor_role,
)
from torchlint.analysis.deprecations import BY_QUALNAME as _API_CHANGES
from torchlint.analysis.facts import ApiUse, DeprecatedUse
from torchlint.analysis.model import Kind
from torchlint.analysis.names import dotted, expr_text, looks_like_optimizer, root_name
from torchlint.analysis.recognise_events import CallEvents
from torchlint.analysis.recognise_statements import _moved_object
from torchlint.analysis.syntax import is_false, method_name, simple_text
from torchlint.analysis.value import NON_TENSOR_BUILTINS, NUMBER_BUILTINS


class CallRecogniser(CallEvents):
    """Turns the calls (and `with` items, constructions, accumulations) the walker meets into
    events, reading and updating the walker's state: its scope, frames and values."""

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


def _may_update_weights(qual: str, node: cst.Call) -> bool:
    last = qual.rsplit(".", 1)[-1].lower()
    if any(word in last for word in ("step", "optim", "update", "zero", "clear", "reset")):
        return True
    return any(
        looks_like_optimizer(simple_text(a.value)) for a in node.args if simple_text(a.value)
    )


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
