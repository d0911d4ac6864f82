"""What a recognised call records: its event (backward, step, host sync, transfer, call) or fact."""

from __future__ import annotations

import libcst as cst

from torchlint.analysis.apis import HOST_CONSTRUCTORS, SYNC_METHODS, constructor_role
from torchlint.analysis.facts import CrossEntropyInput
from torchlint.analysis.model import ConstructedObject, Kind, LoopFrame
from torchlint.analysis.names import dotted, expr_text, looks_like_framework, root_name
from torchlint.analysis.recognise_statements import StatementRecogniser
from torchlint.analysis.syntax import NOT_A_LITERAL, is_false, literal, method_name, simple_text
from torchlint.analysis.value import PROB_ROLES, UNKNOWN, through_shape


class CallEvents(StatementRecogniser):
    """Records the event of a call once it is known which call it is (recognise.py)."""

    def cross_entropy_input(
        self, node: cst.Call, criterion: str | None = None, loss: str = "cross-entropy"
    ) -> None:
        if not node.args:
            return
        values = self.walk.values
        value = node.args[0].value
        base = through_shape(value)  # `output.reshape(-1, vocab)`: still `output`
        producer = values.variable_call(base)
        element = None
        if producer is None and (output := values.output_of(value)) is not None:
            producer, element = output
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
        elif ref[0] == "name" and type(node) is cst.Call and args:
            # `focal(pred, y)`: a loss module's forward may be handed probabilities, or a
            # model's output that its forward makes probabilities
            probs = tuple(values.softmax_of(a.value) for a in positional)
            if any(probs):
                event.arg_probs = probs
            outputs = tuple(values.output_of(a.value) for a in positional)
            if any(outputs):
                event.arg_outputs = outputs

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
