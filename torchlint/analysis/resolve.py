"""Decisions that need the whole module: which `.step()` is an optimizer's, and which calls lead
into functions and methods defined in the module."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import libcst as cst

from torchlint.analysis.apis import NO_GRAD_FUNCTIONS
from torchlint.analysis.facts import ModuleFacts
from torchlint.analysis.flow import NO_BINDING, Binding, Flow
from torchlint.analysis.model import (
    MODE_SWITCHES,
    ClassInfo,
    Event,
    ExternalCallee,
    Kind,
    Scope,
    WithKind,
)
from torchlint.analysis.names import (
    looks_like_optimizer,
    looks_like_scaler,
    looks_like_scheduler,
)
from torchlint.analysis.protocol import ProjectView
from torchlint.analysis.value import Value, What


class Roles:
    """What a receiver is (`optimizer`, `scheduler`, `scaler`, `dataloader`, `instance`): the
    object its value resolves to (see flow.py), else the objects the module constructs under
    that name, else what its name says."""

    def __init__(self, facts: ModuleFacts, flow: Flow | None = None) -> None:
        self.flow = flow if flow is not None else Flow(facts)
        self._by_target: dict[str, list[tuple[str, Scope]]] = {}
        self._owners: dict[str, str] = {}
        self._built_on: dict[int, str] = {}  # id of an optimizer's construction -> its model
        for obj in facts.constructed:
            self._by_target.setdefault(obj.target, []).append((obj.role, obj.scope))
            if obj.params_owner is not None:
                self._owners[obj.target] = obj.params_owner
                self._built_on[id(obj.node)] = obj.params_owner

    def optimizer_owner(self, optimizer: str | None) -> str | None:
        """The model whose parameters an optimizer was built on, when the module shows it."""
        return self._owners.get(optimizer) if optimizer else None

    def built_on(self, construction: cst.CSTNode | None) -> str | None:
        """The model whose parameters this very construction of an optimizer takes: unlike
        `optimizer_owner`, not confused by another function's optimizer of the same name."""
        return self._built_on.get(id(construction)) if construction is not None else None

    def targets_with_role(self, role: str) -> list[str]:
        return [t for t, entries in self._by_target.items() if any(r == role for r, _ in entries)]

    def constructed_role(self, text: str, scope: Scope | None = None) -> str | None:
        entries = self._by_target.get(text)
        if not entries:
            return None
        if text.startswith("self.") and scope is not None:
            for role, where in entries:
                if where.class_name == scope.class_name:
                    return role
            return None
        return entries[0][0]

    def object_of(self, event: Event, binding: Binding = NO_BINDING) -> Value:
        """The object an event's receiver holds, references resolved (in `binding`, the
        parameters of the calls through which a loop reaches the event)."""
        return self.flow.resolve(event.obj, binding)

    def event_role(
        self, event: Event, receiver: str | None, binding: Binding = NO_BINDING
    ) -> str | None:
        """The role of the object an event acts on: from its value when that is known, else
        from the receiver's text (`receiver`, in the loop's terms)."""
        value = self.object_of(event, binding)
        role = _ROLE_OF.get(value.what)
        if role is not None:
            return role
        role = self.role(receiver, event.scope)
        if role == "scheduler" and not _lr_step_arguments(event.node):
            return None  # `pp_schedule.step(inputs, target=labels)`: runs micro-batches
        return role

    def role(self, text: str | None, scope: Scope | None = None) -> str | None:
        if not text:
            return None
        known = self.constructed_role(text, scope)
        if known is None and "[" in text:
            known = self.constructed_role(text.split("[", 1)[0], scope)
        if known is not None:
            return known
        if looks_like_scaler(text):
            return "scaler"
        if looks_like_scheduler(text):
            return "scheduler"
        if looks_like_optimizer(text):
            return "optimizer"
        return None


def _lr_step_arguments(node: cst.CSTNode) -> bool:
    """Whether a `.step(...)` call could be an LR scheduler's: `step()`, `step(epoch)`,
    `step(val_loss)` (`ReduceLROnPlateau`), timm's `step(epoch, metric)`, `step(epoch=...)`; not a
    pipeline-parallel schedule's `step(*inputs, target=..., losses=...)`."""
    if type(node) is not cst.Call:
        return True
    positional = [a for a in node.args if a.keyword is None]
    if len(positional) > 2 or any(a.star for a in node.args):
        return False
    return all(a.keyword.value in ("epoch", "metrics") for a in node.args if a.keyword is not None)


_ROLE_OF = {
    What.OPTIMIZER: "optimizer",
    What.SCHEDULER: "scheduler",
    What.SCALER: "scaler",
    What.LOADER: "dataloader",
}


def resolve(facts: ModuleFacts, project: ProjectView | None = None) -> Roles:
    roles = Roles(facts, Flow(facts, project))
    for scope in facts.scopes:
        for frame in scope.decorators:
            node = frame.node
            if (
                frame.kind is WithKind.OTHER
                and type(node) is cst.Decorator
                and applies_no_grad(node.decorator, scope.parent or scope, facts, project)
            ):
                frame.kind = WithKind.NO_GRAD  # `@smart_inference_mode()`
    for scope in facts.scopes:  # every call linked first: parameters resolve through them
        for event in scope.events:
            if event.kind is Kind.CALL:
                event.local_callee = _resolve_call(event, facts, roles)
                if event.local_callee is not None:
                    event.tensor_params = _tensor_params(event, event.local_callee)
                elif project is not None:
                    event.external = _external_callee(event, facts, project)
    if _dispatch_mode_calls(facts, roles, project):
        roles.flow.relinked()
    for scope in facts.scopes:
        for event in scope.events:
            if event.kind is Kind.MAYBE_STEP:
                _classify_step(event, roles)
    return roles


def _dispatch_mode_calls(facts: ModuleFacts, roles: Roles, project: ProjectView | None) -> bool:
    """`trainer.train(loader)` on an instance of a project class whose own `train` runs an
    epoch (a trainer, not an nn.Module) is a call of that method, not a mode switch."""
    changed = False
    for scope in facts.scopes:
        for event in scope.events:
            if event.kind not in MODE_SWITCHES or event.callee_ref[:1] != ("method",):
                continue
            qualname = _instance_class(event, facts, roles)
            if qualname is None:
                continue
            method = event.callee_ref[-1]
            cls = facts.classes.get(qualname)
            if cls is not None:
                found = facts.find_method(cls, method)
                if found is None or _module_like(facts, cls) or _switches_mode(found):
                    continue
                event.local_callee = found
            elif project is not None and "." in qualname:
                found = project.method_scope(qualname, method)
                if found is None or _switches_mode(found):
                    continue
                event.external = ExternalCallee(
                    partial(project.method_scope, qualname, method), project.generation
                )
            else:
                continue
            event.tensor_params = _tensor_params(event, found)
            event.kind = Kind.CALL
            changed = True
    return changed


def _instance_class(event: Event, facts: ModuleFacts, roles: Roles) -> str | None:
    """The class of the object a method is called on, when it is a project class: `self`'s,
    the one constructed under the receiver's name, else the one its value resolves to."""
    receiver = event.callee_ref[1]
    if receiver == "self":
        return event.scope.class_name
    built = _constructed_classes(facts, receiver)
    if built:
        return built[-1]  # the latest construction under that name
    value = roles.flow.resolve(event.obj)
    return value.cls if value.what is What.INSTANCE and value.cls else None


def _module_like(facts: ModuleFacts, cls: ClassInfo, depth: int = 0) -> bool:
    """A class with a base (of its own or of its local bases) named like a module:
    `nn.Module`, `LightningModule`, `Module`."""
    if depth > 4:
        return True
    for base in cls.bases:
        parent = facts.classes.get(base)
        if parent is not None:
            if _module_like(facts, parent, depth + 1):
                return True
        elif base.rsplit(".", 1)[-1].endswith("Module"):
            return True
    return False


def _switches_mode(method: Scope) -> bool:
    """A `train` / `eval` that is still a mode switch: `train(self, mode=True)`, or one that
    calls the base class's (a module that freezes its batch norms after `super().train()`)."""
    params = method.params[1:2] if method.class_name is not None else method.params[:1]
    if params == ("mode",):
        return True
    name = method.name.rsplit(".", 1)[-1]
    return any(e.callee_ref[:1] == ("super",) and e.callee_ref[-1] == name for e in method.events)


def applies_no_grad(
    expr: cst.BaseExpression,
    where: Scope,
    facts: ModuleFacts,
    project: ProjectView | None,
    depth: int = 0,
) -> bool:
    """Whether the decorator `expr` (written in `where`) turns gradients off for the function
    it decorates: `torch.no_grad()` itself, or a function of this module or the project that
    returns one (`(torch.inference_mode if new else torch.no_grad)()(fn)`), returns a wrapper
    that calls the function under one, or is such a factory's result."""
    if depth > 4:
        return False
    imports = where.module_imports or facts.imports
    if type(expr) is cst.IfExp:
        return applies_no_grad(expr.body, where, facts, project, depth + 1) and applies_no_grad(
            expr.orelse, where, facts, project, depth + 1
        )
    func = expr.func if type(expr) is cst.Call else expr
    qual = imports.qualify(func)
    if qual in NO_GRAD_FUNCTIONS:
        return True
    if type(expr) is cst.Call and isinstance(expr.func, cst.Call | cst.IfExp):
        return applies_no_grad(expr.func, where, facts, project, depth + 1)  # `no_grad()(fn)`
    function = _function_named(func, where, facts, project, qual)
    if function is None or not function.return_nodes:
        return False
    if all(function.return_no_grad):
        return True  # `with torch.no_grad(): return fn(*args)`
    for returned in function.return_nodes:
        inner = function.local_defs.get(returned.value) if type(returned) is cst.Name else None
        if inner is not None and inner.return_nodes and all(inner.return_no_grad):
            return True
        target = inner if inner is not None else function
        nodes = inner.return_nodes if inner is not None else [returned]
        if any(applies_no_grad(n, target, facts, project, depth + 1) for n in nodes):
            return True
    return False


def _function_named(
    func: cst.BaseExpression,
    where: Scope,
    facts: ModuleFacts,
    project: ProjectView | None,
    qual: str | None,
) -> Scope | None:
    """The function `func` names in `where`: a local or module function, or (for a scope of
    the module being resolved) a function of another project file it imports."""
    ours = _module_of(where) is facts.module_scope
    if type(func) is cst.Name:
        current: Scope | None = where
        while current is not None:
            if func.value in current.local_defs:
                return current.local_defs[func.value]
            current = current.parent
        if ours and func.value in facts.functions:
            return facts.functions[func.value]
    if ours and qual is not None and project is not None and project.is_project(qual):
        return project.function_scope(qual)
    return None


def _module_of(scope: Scope) -> Scope:
    while scope.parent is not None:
        scope = scope.parent
    return scope


def _external_callee(
    event: Event, facts: ModuleFacts, project: ProjectView
) -> ExternalCallee | None:
    """A call that runs a function or method of another project file: `evaluate(...)` after
    `from engine import evaluate`, `trainer.step(...)` on an imported class's instance, or an
    inherited method of a class whose base another file defines."""
    ref = event.callee_ref
    find: Callable[[], Scope | None] | None = None
    if ref[0] == "project":
        qualified = ref[1]
        find = partial(project.function_scope, qualified)
    elif ref[0] in ("method", "super"):
        method = ref[-1]
        receiver = ref[1] if ref[0] == "method" else "self"
        classes: list[str] = []
        if receiver == "self":
            classes = _foreign_bases(facts, facts.classes.get(event.scope.class_name or ""))
        else:
            classes = [
                obj.qualname
                for obj in facts.constructed
                if obj.role == "instance" and obj.target == receiver and "." in obj.qualname
            ][-1:]
        if classes:
            find = partial(_first_method, project, tuple(classes), method)
    if find is None:
        return None

    def found() -> Scope | None:
        assert find is not None
        scope = find()
        if scope is not None:
            event.tensor_params = _tensor_params(event, scope)
        return scope

    return ExternalCallee(found, project.generation)


def _foreign_bases(facts: ModuleFacts, cls: ClassInfo | None, depth: int = 0) -> list[str]:
    """The qualified names of the bases (of `cls` and its local bases) that are imported."""
    if cls is None or depth > 4:
        return []
    found: list[str] = []
    for base in cls.bases:
        if base in facts.classes:
            found.extend(_foreign_bases(facts, facts.classes[base], depth + 1))
            continue
        head, _, rest = base.partition(".")
        target = facts.imports.aliases.get(head)
        if target is not None:
            found.append(f"{target}.{rest}" if rest else target)
    return found


def _first_method(project: ProjectView, classes: tuple[str, ...], method: str) -> Scope | None:
    for qualified in classes:
        scope = project.method_scope(qualified, method)
        if scope is not None:
            return scope
    return None


def _classify_step(event: Event, roles: Roles) -> None:
    role = roles.event_role(event, event.receiver)
    if role == "optimizer":
        event.kind = Kind.STEP
        event.via = "optimizer"
    elif role == "scheduler":
        event.kind = Kind.SCHEDULER_STEP


def _resolve_call(event: Event, facts: ModuleFacts, roles: Roles) -> Scope | None:
    ref = event.callee_ref
    scope = event.scope
    if ref[0] == "name":
        name = ref[1]
        current: Scope | None = scope
        while current is not None:
            if name in current.local_defs:
                return current.local_defs[name]
            current = current.parent
        if name in facts.classes and name not in facts.functions:
            init = facts.find_method(facts.classes[name], "__init__")
            if init is not None:
                event.callee_ref = ("new", name)  # `Trainer(loader, model)`: its `__init__`
            return init
        return facts.functions.get(name)
    if ref[0] == "super":
        cls = facts.classes.get(scope.class_name or "")
        if cls is None:
            return None
        for base in cls.bases:
            found = facts.find_method(facts.classes.get(base), ref[1])
            if found is not None:
                return found
        return None
    if ref[0] == "method":
        receiver, method = ref[1], ref[2]
        if receiver == "self":
            own = facts.find_method(facts.classes.get(scope.class_name or ""), method)
            return own if own is not None else _in_subclass(facts, scope.class_name, method)
        built = _constructed_classes(facts, receiver)
        if built:
            return facts.find_method(facts.classes.get(built[0]), method)
    return None


def _constructed_classes(facts: ModuleFacts, receiver: str) -> list[str]:
    """The project classes constructed under `receiver`'s name (`trainer = Trainer(...)`), in
    the module's order."""
    return [
        obj.qualname
        for obj in facts.constructed
        if obj.role == "instance" and obj.target == receiver
    ]


def _in_subclass(facts: ModuleFacts, class_name: str | None, method: str) -> Scope | None:
    """`self._valid_epoch()` in a base class that leaves it to a subclass: the subclass's
    method, when exactly one class of the module derives from it and defines one."""
    if class_name is None:
        return None
    found: list[Scope] = []
    for cls in facts.classes.values():
        if cls.name != class_name and method in cls.methods and _derives(facts, cls, class_name):
            found.append(cls.methods[method])
    return found[0] if len(found) == 1 else None


def _derives(facts: ModuleFacts, cls: ClassInfo, base: str, depth: int = 0) -> bool:
    if depth > 6:
        return False
    for name in cls.bases:
        parent = facts.classes.get(name)
        if name == base or (parent is not None and _derives(facts, parent, base, depth + 1)):
            return True
    return False


def _tensor_params(event: Event, callee: Scope) -> frozenset[str]:
    return params_at(event.tensor_args, event, callee)


def params_at(keys: frozenset[int | str], event: Event, callee: Scope) -> frozenset[str]:
    """The parameters of `callee` that the call `event` passes at `keys` (argument positions
    and keywords, as `Event.tensor_args` / `Event.host_args` hold them)."""
    if not keys:
        return frozenset()
    params = list(callee.params)
    if callee.class_name is not None and params and event.callee_ref[0] != "name":
        params = params[1:]  # self
    result = set()
    for key in keys:
        if isinstance(key, int):
            if key < len(params):
                result.add(params[key])
        elif key in callee.params:
            result.add(key)
    return frozenset(result)


def call_binding(event: Event, callee: Scope) -> dict[str, str]:
    """Parameter name -> the caller's argument text, for simple arguments."""
    params = list(callee.params)
    binding: dict[str, str] = {}
    if callee.class_name is not None and params and event.callee_ref[0] != "name":
        self_param = params.pop(0)
        ref = event.callee_ref
        if ref[0] == "new":
            binding[self_param] = f"{ref[1]}()"  # the object being built, no name of the caller's
        else:
            binding[self_param] = ref[1] if ref[0] == "method" else "self"
    for param, text in zip(params, event.arg_texts, strict=False):
        if text:
            binding[param] = text
    for key, text in event.kwarg_texts:
        if text and key in callee.params:
            binding[key] = text
    return binding
