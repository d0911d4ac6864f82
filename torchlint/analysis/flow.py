"""Resolving the references the walk left in values (`values.Ref`), once the whole module is known:
a parameter through the arguments its callers pass (or its default), `self.x` through every
assignment of it in the class, a call through what the function returns, a module-level name
through its value at the end of the module, a function of another project file through its own
returns.

Resolution is bounded: references are followed `MAX_DEPTH` deep, at most `MAX_STEPS` times per
module, and a cycle (a function returning what it is given) resolves to unknown, so a file that
hits a bound is analysed with what is known."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from torchlint.analysis.facts import ModuleFacts
from torchlint.analysis.model import Event, Kind, Scope
from torchlint.analysis.protocol import ProjectView
from torchlint.analysis.value import UNKNOWN, Ref, Value, What, element_of, join

MAX_DEPTH = 10
MAX_STEPS = 20_000
MAX_CALLERS = 8  # call sites whose arguments are joined for a parameter

# A parameter binding for one expansion of a call: (id of the callee scope, parameter) -> value.
Binding = Mapping[tuple[int, str], Value]
NO_BINDING: Binding = MappingProxyType({})


class Flow:
    """Resolves the references in the values of one module (and of the project files its
    values lead into)."""

    def __init__(self, facts: ModuleFacts, project: ProjectView | None = None) -> None:
        self.facts = facts
        self.project = project
        self.steps = 0
        self._memo: dict[int, Value] = {}
        self._active: set[int] = set()
        self._callers: dict[int, list[Event]] | None = None

    def resolve(self, value: Value | None, binding: Binding = NO_BINDING, depth: int = 0) -> Value:
        """The value `value` stands for, references followed (unknown where they lead nowhere
        or past the bounds)."""
        if value is None:
            return UNKNOWN
        if value.what is not What.REF:
            return self._inner(value, binding, depth)
        key = id(value)
        cacheable = not binding
        if cacheable and key in self._memo:
            return self._memo[key]
        if depth > MAX_DEPTH or self.steps > MAX_STEPS or key in self._active:
            return UNKNOWN
        self.steps += 1
        self._active.add(key)
        try:
            assert value.ref is not None
            found = self._follow(value.ref, binding, depth + 1)
        finally:
            self._active.discard(key)
        if value.text is not None and found.text is None and found is not UNKNOWN:
            found = _named(found, value.text)
        if cacheable:
            self._memo[key] = found
        return found

    def _inner(self, value: Value, binding: Binding, depth: int) -> Value:
        """Resolve the references inside an object (an optimizer's module, a container's
        items), so that callers see plain values all the way down."""
        if value.what is What.CONTAINER or value.items:
            items = tuple(self.resolve(v, binding, depth + 1) for v in value.items)
            if any(a is not b for a, b in zip(items, value.items, strict=True)):
                return _with(value, items=items)
        if value.of is not None and value.of.what is What.REF:
            return _with(value, of=self.resolve(value.of, binding, depth + 1))
        return value

    def _follow(self, ref: Ref, binding: Binding, depth: int) -> Value:
        how = ref.how
        if how == "param":
            assert isinstance(ref.target, Scope)
            return self._param(ref.target, ref.name, binding, depth)
        if how == "attr":
            assert isinstance(ref.target, str)
            return self._attribute(ref.target, ref.name, binding, depth, set())
        if how in ("call", "call-named"):
            callee = self.facts.functions.get(str(ref.target)) if how == "call-named" else None
            if how == "call":
                assert isinstance(ref.target, Scope)
                callee = ref.target
            if callee is None:
                return UNKNOWN
            inner = dict(binding)
            for name, argument in _bound_arguments(callee, ref.args, ref.kwargs):
                inner[(id(callee), name)] = self.resolve(argument, binding, depth)
            return self._returns(callee, inner, depth)
        if how == "global":
            value = self._module_values(None).get(ref.name)
            return self.resolve(value, NO_BINDING, depth) if value is not None else UNKNOWN
        if how == "method":
            assert isinstance(ref.target, str)
            method = self.facts.find_method(self.facts.classes.get(ref.target), ref.name, set())
            return self._returns(method, binding, depth) if method is not None else UNKNOWN
        if how == "item":
            assert isinstance(ref.target, Value)
            whole = self.resolve(ref.target, binding, depth)
            if whole.what is not What.CONTAINER:
                return UNKNOWN
            return self.resolve(element_of(whole, ref.name), binding, depth)
        if how in ("member", "method-of", "called"):
            assert isinstance(ref.target, Value)
            base = self.resolve(ref.target, binding, depth)
            return self._of_object(how, base, ref.name, binding, depth)
        if how == "project":
            assert isinstance(ref.target, str)
            scope = self.project.function_scope(ref.target) if self.project is not None else None
            return self._returns(scope, NO_BINDING, depth) if scope is not None else UNKNOWN
        return UNKNOWN

    def _of_object(self, how: str, base: Value, name: str, binding: Binding, depth: int) -> Value:
        if base.what not in (What.INSTANCE, What.MODULE) or base.cls is None:
            return UNKNOWN
        cls = self.facts.classes.get(base.cls)
        if how == "member":
            if cls is not None:
                return self._attribute(base.cls, name, binding, depth, set())
            return UNKNOWN
        method_name = "__call__" if how == "called" else name
        if cls is not None:
            method = self.facts.find_method(cls, method_name, set())
        elif self.project is not None and "." in base.cls:
            method = self.project.method_scope(base.cls, method_name)
        else:
            method = None
        return self._returns(method, binding, depth) if method is not None else UNKNOWN

    def method_of(self, call: Event, binding: Binding = NO_BINDING) -> Scope | None:
        """The method a call of an object runs: `__call__` for `loss_scaler(...)`, `step` for
        `trainer.step()`, when the object is an instance of a known class."""
        ref = call.callee_ref
        if ref[:1] == ("name",):
            target, method = self.resolve(call.obj, binding), "__call__"
        elif ref[:1] == ("method",) and len(ref) == 3:
            target, method = self.resolve(call.obj, binding), ref[2]
        else:
            return None
        if target.what not in (What.INSTANCE, What.MODULE) or target.cls is None:
            return None
        cls = self.facts.classes.get(target.cls)
        if cls is not None:
            return self.facts.find_method(cls, method, set())
        if self.project is not None and "." in target.cls:
            return self.project.method_scope(target.cls, method)
        return None

    def runs(self, value: Value | None, binding: Binding = NO_BINDING) -> Scope | None:
        """What calling `value` runs: a function of this module, or the `__call__` (else the
        `forward`) of an instance of a class of this module or of the project."""
        target = self.resolve(value, binding)
        if target.what is What.CALLABLE:
            return target.scope
        if target.what not in (What.INSTANCE, What.MODULE) or target.cls is None:
            return None
        cls = self.facts.classes.get(target.cls)
        for method in ("__call__", "forward"):
            if cls is not None:
                found = self.facts.find_method(cls, method)
            elif self.project is not None and "." in target.cls:
                found = self.project.method_scope(target.cls, method)
            else:
                found = None
            if found is not None:
                return found
        return None

    # --- what a function gives -----------------------------------------------------------

    def _returns(self, scope: Scope | None, binding: Binding, depth: int) -> Value:
        if scope is None or not scope.return_values:
            return UNKNOWN
        return join([self.resolve(v, binding, depth) for v in scope.return_values])

    def _param(self, scope: Scope, name: str, binding: Binding, depth: int) -> Value:
        bound = binding.get((id(scope), name))
        if bound is not None:
            return bound
        found = []
        for site in self.callers_of(scope)[:MAX_CALLERS]:
            argument = argument_of(site, scope, name)
            if argument is None:
                continue
            found.append(self.resolve(argument, NO_BINDING, depth))
        default = scope.param_defaults.get(name)
        if default is not None:
            found.append(self.resolve(default, NO_BINDING, depth))
        return join(found) if found else UNKNOWN

    def relinked(self) -> None:
        """Calls were linked after values were resolved: forget what was resolved through the
        callers known then."""
        self._callers = None
        self._memo.clear()

    def callers_of(self, scope: Scope) -> list[Event]:
        if self._callers is None:
            self._callers = {}
            for each in self.facts.scopes:
                for event in each.events:
                    if event.kind is Kind.CALL and event.local_callee is not None:
                        self._callers.setdefault(id(event.local_callee), []).append(event)
        return self._callers.get(id(scope), [])

    # --- classes ---------------------------------------------------------------------------

    def _attribute(
        self, class_name: str, name: str, binding: Binding, depth: int, seen: set[str]
    ) -> Value:
        """`self.name` in a class of this module: every value it is assigned in the class (or,
        when it assigns none, in its bases)."""
        cls = self.facts.classes.get(class_name)
        if cls is None or class_name in seen:
            return UNKNOWN
        seen.add(class_name)
        assigned = cls.attributes.get(name)
        if assigned:
            return join([self.resolve(v, binding, depth) for v in assigned])
        for base in cls.bases:
            found = self._attribute(base, name, binding, depth, seen)
            if found is not UNKNOWN:
                return found
        return UNKNOWN

    def _module_values(self, scope: Scope | None) -> Mapping[str, Value]:
        return self.facts.module_values


def argument_of(site: Event, callee: Scope, name: str) -> Value | None:
    """The value the call `site` passes for parameter `name` of `callee`."""
    for key, value in site.kwarg_values:
        if key == name:
            return value
    params = list(callee.params)
    if callee.class_name is not None and params and site.callee_ref[:1] != ("name",):
        params = params[1:]  # self
    if name in params:
        index = params.index(name)
        if index < len(site.arg_values):
            return site.arg_values[index]
    return None


def _bound_arguments(
    callee: Scope, args: tuple[Value, ...], kwargs: tuple[tuple[str, Value], ...]
) -> list[tuple[str, Value]]:
    bound = list(zip(callee.params, args, strict=False))
    bound.extend((key, value) for key, value in kwargs if key in callee.params)
    return bound


def bind_call(
    site: Event, callee: Scope, flow: Flow, binding: Binding = NO_BINDING
) -> dict[tuple[int, str], Value]:
    """The binding of `callee`'s parameters to the values `site` passes (resolved in the
    caller's own binding), on top of `binding`."""
    result = dict(binding)
    for name in callee.params:
        argument = argument_of(site, callee, name)
        if argument is not None:
            result[(id(callee), name)] = flow.resolve(argument, binding)
    return result


def _named(value: Value, text: str) -> Value:
    return _with(value, text=text)


def _with(value: Value, **changes: object) -> Value:
    from dataclasses import replace

    return replace(value, **changes)  # type: ignore[arg-type]
