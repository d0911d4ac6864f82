"""The walk of simple statements: assignments (what each name now holds), returns, imports."""

from __future__ import annotations

import libcst as cst

from torchlint.analysis.apis import constructor_role
from torchlint.analysis.conversions import CONVERSIONS, discarded_conversion
from torchlint.analysis.facts import ApiUse
from torchlint.analysis.model import Kind, LoopFrame
from torchlint.analysis.names import dotted, expr_text, looks_like_scaler
from torchlint.analysis.recognise import FUNCTIONAL_LOSSES
from torchlint.analysis.syntax import method_name, target_names
from torchlint.analysis.value import UNKNOWN, What, iterates_data
from torchlint.analysis.walk_expressions import ExpressionWalker


class SimpleStatementWalker(ExpressionWalker):
    """Walks simple statements: expressions, assignments, returns, imports."""

    def small(self, node: cst.BaseSmallStatement) -> None:
        self.anchor_at(node)
        if type(node) is cst.Expr:
            self.expr(node.value)
            if type(node.value) is cst.Call:
                self.conversion_statement(node.value)
        elif type(node) is cst.Assign:
            self.expr(node.value)
            for target in node.targets:
                self.sites.bind(self.scope_key(), target.target, node.value)
                self.assign(target.target, node.value)
        elif type(node) is cst.AnnAssign:
            if node.value is not None:
                self.expr(node.value)
                self.sites.bind(self.scope_key(), node.target, node.value)
                self.assign(node.target, node.value)
        elif type(node) is cst.AugAssign:
            self.expr(node.value)
            self.expr(node.target)
            text = dotted(node.target)
            if text is None and type(node.target) is cst.Subscript:
                self.recognise.accumulation(
                    node, expr_text(node.target), node.value
                )  # stats["loss"]
            if text is not None:
                if type(node.operator) is cst.ModuloAssign:
                    self.wraps[text] = f"{text} % {self.condition_text(node.value)}"
                self.recognise.accumulation(node, text, node.value)
                if self.values.is_tensor(node.value):
                    self.values.mark_device_tensor(text)
        elif type(node) is cst.Return:
            if node.value is not None:
                self.expr(node.value)
                self.scope.return_values.append(self.values.object_of(node.value))
                self.scope.return_nodes.append(node.value)
                self.scope.return_no_grad.append(self.under_no_grad())
                self.scope.return_reach |= self.values.reach_of(node.value)
                self.scope.return_graphs.append(self.values.graph_of(node.value))
                self.scope.returns.append(self.values.softmax_of(node.value))
                returned = node.value
                if type(returned) is cst.Tuple:
                    items = tuple(self.values.softmax_of(e.value) for e in returned.elements)
                    self.scope.return_items.append(items)
                else:
                    self.scope.return_items.append(None)
                value = node.value
                qual = self.imports.qualify(value.func) if type(value) is cst.Call else None
                self.scope.returned_roles.append(constructor_role(qual) if qual else None)
        elif type(node) is cst.Assert:
            self.expr(node.test)
        elif type(node) is cst.Raise:
            if node.exc is not None:
                self.expr(node.exc)
        elif type(node) is cst.Import:
            self.imports.add_import(node)
            if self.compat_depth:
                self.compat_names.update(_bound_names(node))
        elif type(node) is cst.ImportFrom:
            self.imports.add_import_from(node)
            if self.compat_depth:
                self.compat_names.update(_bound_names(node))
            module = node.module
            if type(module) is cst.Name and module.value == "functorch" and not node.relative:
                use = ApiUse("functorch", node, None, self.compat_depth > 0)
                self.facts.functorch_imports.append(use)

    def detached_entry(self, target: cst.Subscript, value: cst.BaseExpression) -> None:
        """`output["loss"] = output["loss"].detach()`: the entry whose backward was the evidence
        that `output` carries a graph no longer does (another entry may, unknown). The cheap
        tests first: most stores into a subscript (`config["lr"] = 0.1`) are into a container
        not known to carry a graph, and the scope's events are not read for them."""
        root = target.value
        if type(root) is not cst.Name or not self.values.is_graph(root):
            return
        if self.values.graph_of(value) is not False:
            return
        entry = expr_text(target)
        if any(e.kind is Kind.BACKWARD and e.receiver == entry for e in self.scope.events):
            self.values.forget_graph(root.value)

    def assign(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        self.anchors[id(target)] = self.anchor  # type: ignore[assignment]
        if type(target) is cst.Tuple or type(target) is cst.List:
            values: list[cst.BaseExpression] | None = None
            if (type(value) is cst.Tuple or type(value) is cst.List) and len(value.elements) == len(
                target.elements
            ):
                values = [el.value for el in value.elements]
            whole = self.values.object_of(value) if values is None else UNKNOWN
            for i, element in enumerate(target.elements):
                self.assign(element.value, values[i] if values is not None else value)
                text = dotted(element.value)
                if values is None and text is not None and type(value) is cst.Call:
                    self.values.set_unpacked(text, i)  # `validity, label = D(x)`
                if whole is not UNKNOWN and text is not None:
                    # `train_loader, val_loader = make_loaders()`: each name one item of it
                    self.values.put(text, self.values.item_of(text, whole, i))
                    self.values.mark_bound(text, element.value)
            return
        if (
            type(target) is cst.Attribute
            and target.attr.value == "require_grad"
            and self.holds_parameters(target.value)
        ):
            self.facts.require_grad_writes.append(target)
        if type(target) is cst.Attribute and target.attr.value == "grad":
            receiver = expr_text(target.value)
            if type(value) is cst.Name and value.value == "None":
                self.event(Kind.ZERO_GRAD, target, receiver=receiver, method="grad")
            else:
                self.event(Kind.GRAD_WRITE, target, receiver=receiver, method="grad")
            return
        text = dotted(target)
        if text is None:
            if type(target) is cst.Subscript:
                self.detached_entry(target, value)
            return
        # `model = model.TransformerModel(...)`: the value is read while `model` still names
        # the imported module; from here on the name is the instance
        rebinds_import = text in self.rebound_imports and self.scope.is_module
        if (
            type(value) is cst.BinaryOperation
            and type(value.operator) is cst.Add
            and dotted(value.left) == text
        ):
            self.recognise.accumulation(value, text, value.right)  # `total = total + loss`
        else:
            for names in self.loop_assigned:
                names.add(text)
        if type(value) is cst.Call:
            self.recognise.constructed(text, value)
        elif type(value) in (cst.Name, cst.Attribute):
            qual = self.imports.qualify(value)
            if qual in FUNCTIONAL_LOSSES:
                self.loss_aliases[self.alias_key(target)] = qual
        elif (type(value) is cst.Tuple or type(value) is cst.List) and value.elements:
            first = value.elements[0].value
            if type(first) is cst.Call:
                self.recognise.constructed(text, first)
        if type(value) in _CONDITIONS or type(value) is cst.Call:
            # `log_now = step % log_every == 0`, `= should_log(step)`; whether a call's result
            # is a flag is asked only when a condition reads it (see `definition`)
            self.flags[text] = value
        else:
            self.flags.pop(text, None)
        if type(value) is cst.BinaryOperation and type(value.operator) is cst.Modulo:
            self.wraps[text] = self.condition_text(value)
        else:
            self.wraps.pop(text, None)
        no_grad = self.under_no_grad() or self.recognise.calls_no_grad_function(value)
        bound = self.values.bind(text, value, under_no_grad=no_grad)
        if rebinds_import:
            self.rebound_here.add(text)
            self.imports.aliases.pop(text, None)
        if type(value) is cst.Call and bound.what is What.REF:
            self.values.mark_bound(text, target)  # `loader = build_loader(cfg)`
        if text.startswith("self.") and self.scope.class_name is not None:
            cls = self.facts.classes.get(self.scope.class_name)
            if cls is not None and bound is not UNKNOWN:
                cls.attributes.setdefault(text[5:], []).append(bound)
        if type(value) is cst.Call and method_name(value) == "scale":
            receiver = expr_text(value.func.value)  # type: ignore[attr-defined]
            if looks_like_scaler(receiver) or self.role_is(receiver, "scaler"):
                self.values.mark_scaled(text, True)

    def conversion_statement(self, call: cst.Call) -> None:
        func = call.func
        if type(func) is cst.Attribute and func.attr.value in _IN_PLACE_MOVES:
            text = dotted(func.value)
            if text is not None and self.values.get(text) is not None:
                self.values.mark_moved(text)  # `experience.to_device(device)` moves it in place
        if type(func) is not cst.Attribute or func.attr.value not in CONVERSIONS:
            return  # most statements are calls of something else: no closure for them
        key = self.scope_key()
        found = discarded_conversion(
            call,
            self.frames,
            self.imports.qualify,
            lambda name: self.sites.assigned.get((key, name), ()),
            iterates_data,
        )
        if found is not None:
            self.facts.discarded_conversions.append(found)

    def holds_parameters(self, receiver: cst.BaseExpression) -> bool:
        """`p` in `for p in model.parameters()`, `layer.weight`, a known tensor: something whose
        `requires_grad` matters (not a config object that happens to have such a field)."""
        text = dotted(receiver)
        if text is None:
            return False
        last = text.rsplit(".", 1)[-1].lower()
        if any(word in last for word in ("weight", "bias", "param", "embed")):
            return True
        if self.values.is_tensor(receiver):
            return True
        for frame in self.frames:
            if (
                isinstance(frame, LoopFrame)
                and type(frame.node) is cst.For
                and (frame.is_param_loop or "param" in frame.iter_text.lower())
                and text in target_names(frame.node.target)
            ):
                return True
        return False


# Methods of a batch object that move it to the device in place, called as a statement.
_IN_PLACE_MOVES = frozenset({"to_device", "move_to_device", "to_gpu", "cuda_"})


# --- helpers ------------------------------------------------------------------------------


def _bound_names(node: cst.Import | cst.ImportFrom) -> list[str]:
    """The local names an import statement binds."""
    if isinstance(node.names, cst.ImportStar):
        return []
    names = []
    for alias in node.names:
        if alias.asname is not None and type(alias.asname.name) is cst.Name:
            names.append(alias.asname.name.value)
        else:
            full = dotted(alias.name)
            if full is not None:
                names.append(full.split(".", 1)[0])
    return names


_CONDITIONS = frozenset((cst.Comparison, cst.BooleanOperation, cst.UnaryOperation))
