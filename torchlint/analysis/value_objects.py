"""The object queries of a scope's values: which object (a model, an optimizer, a loader, a
reference to resolve later) an expression evaluates to; mixed into `Values` (values.py)."""

from __future__ import annotations

import libcst as cst

from torchlint.analysis.apis import (
    FRAMEWORK_SETUP,
    MODULE_WRAPPERS,
    RETURNS_SELF,
    constructor_role,
)
from torchlint.analysis.names import (
    dotted,
    looks_like_framework,
)
from torchlint.analysis.value import (
    INDEX_TEXT,
    ITERATING,
    NONE,
    PYTHON_BUILTINS,
    UNKNOWN,
    Value,
    ValueScope,
    What,
    element_of,
    join,
    key_of,
    reference,
)


class ObjectQueries(ValueScope):
    """Questions about objects, asked of the values bound so far."""

    # --- objects ----------------------------------------------------------------------------

    def object_of(self, node: cst.BaseExpression, depth: int = 0) -> Value:
        """The object `node` evaluates to, as far as the walk can tell now (a reference where
        it cannot: see `Ref`)."""
        if depth > 8:
            return UNKNOWN
        kind = type(node)
        if kind is cst.Name and node.value == "None":  # type: ignore[attr-defined]
            return NONE
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
                if type(e) is cst.DictElement and (k := key_of(e.key)) is not None
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
        if (wrapper in ITERATING or wrapper.endswith(".tqdm")) and node.args:
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
            index = INDEX_TEXT.fullmatch(text)
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
        key = key_of(index.value) if type(index) is cst.Index else None
        if container.what is What.REF and key is not None:
            return reference("item", container, key)  # `self.loaders["train"]`
        if container.what is not What.CONTAINER:
            return UNKNOWN
        return element_of(container, key)


def _constructed(role: str, node: cst.Call, qual: str, values: ObjectQueries, depth: int) -> Value:
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


def _owner(node: cst.Call, values: ObjectQueries, depth: int) -> Value | None:
    """The module an optimizer updates: `model` in `SGD(model.parameters())`."""
    if not node.args:
        return None
    first = node.args[0].value
    func = first.func if type(first) is cst.Call else None
    if type(func) is cst.Attribute and func.attr.value in ("parameters", "named_parameters"):
        return values.object_of(func.value, depth + 1)
    return None
