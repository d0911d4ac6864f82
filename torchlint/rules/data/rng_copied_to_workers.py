"""TL404: a dataset's own random generator is copied, in one state, into every loader worker."""

from __future__ import annotations

import re
from dataclasses import dataclass

import libcst as cst

from torchlint.analysis.apis import constructor_role
from torchlint.analysis.links import LoaderArgs
from torchlint.analysis.model import Scope, visible_from
from torchlint.analysis.names import ImportTable, dotted, expr_text
from torchlint.analysis.subtree import preorder
from torchlint.diagnostics import Severity
from torchlint.rules.base import Rule, RuleContext

# Constructors of generator objects whose state a worker process inherits as it was in the
# main process. (The global `np.random` / `random` / torch generators are not among them:
# PyTorch reseeds those in each worker since 1.9.)
_GENERATORS = {
    "numpy.random.default_rng": "numpy",
    "numpy.random.RandomState": "numpy",
    "numpy.random.Generator": "numpy",
    "random.Random": "random",
    "torch.Generator": "torch",
    "torch._C.Generator": "torch",
}
# The methods a loader's worker calls on the dataset, for each item or each stream.
_ENTRY_METHODS = ("__getitem__", "__getitems__", "__iter__", "__next__")
# Methods that set a generator's state again.
_RESEEDS = frozenset(("seed", "manual_seed", "set_state", "__setstate__", "bit_generator"))
# Names that show the class sets up each worker itself.
_PER_WORKER = frozenset(("get_worker_info", "worker_info", "initial_seed", "worker_id"))
_WORKER_INIT_INDEX = 10  # DataLoader(dataset, batch_size, ..., timeout, worker_init_fn, ...)
_WORKERS_INDEX = 5


@dataclass(frozen=True)
class _Generator:
    attribute: str  # `rng` for `self.rng`
    call: cst.Call  # `np.random.default_rng(seed)`
    scope: Scope  # the `__init__` that builds it
    draw: str  # the method that draws from it (`__getitem__`, `_augment`)


class RngCopiedToWorkers(Rule):
    code = "TL404"
    name = "rng-copied-to-workers"
    family = "data"
    severity = Severity.WARNING
    summary = (
        "A dataset draws from a random generator it built in `__init__` and is loaded by "
        "worker processes without a `worker_init_fn`: every worker gets a copy in the same "
        "state and draws the same numbers."
    )

    def check(self, ctx: RuleContext) -> None:
        if "DataLoader" not in ctx.facts.parsed.text:
            return
        scopes = {id(scope.node): scope for scope in ctx.facts.scopes}
        read: dict[int, _SelfUses] = {}  # each method read once per file, for every loader
        for site in ctx.facts.sites.calls:
            qual = ctx.facts.imports.qualify(site.call.func)
            if qual is None or constructor_role(qual) != "dataloader":
                continue
            args = LoaderArgs(site.call)
            if args.has_unpacking or not _has_workers(args):
                continue
            init = args.get("worker_init_fn", _WORKER_INIT_INDEX)
            if init is not None and not (isinstance(init, cst.Name) and init.value == "None"):
                continue
            scope = scopes.get(id(site.function), ctx.facts.module_scope)
            dataset = _dataset_class(ctx, args.dataset, scope, 0)
            if dataset is None:
                continue
            name, methods, construction = dataset
            if not _may_build_generators(ctx, methods):
                continue
            found = _shared_generator(methods, _ENTRY_METHODS, _Held(ctx, construction), read)
            if found is None:
                continue
            targets = ctx.facts.sites.targets.get(id(site.call))
            loader = f"`{targets[0]}`" if targets else "This `DataLoader`"
            self._report(ctx, site.call, loader, args, name, found)

    def _report(
        self,
        ctx: RuleContext,
        call: cst.Call,
        loader: str,
        args: LoaderArgs,
        class_name: str,
        found: _Generator,
    ) -> None:
        where = ctx.foreign_row(found.scope, found.call) or f"line {ctx.line_of(found.call)}"
        init = found.scope.display_name
        persistent = args.keyword("persistent_workers")
        epochs = (
            ""
            if persistent is not None and dotted(persistent) != "False"
            else " and, as the workers start again each epoch, every epoch repeats them"
        )
        workers = args.get("num_workers", _WORKERS_INDEX)
        count = f"`num_workers={expr_text(workers)}`" if workers is not None else "workers"
        ctx.report(
            call,
            f"{loader} loads `{class_name}` with {count} and no `worker_init_fn`, "
            f"but `{class_name}.{found.draw}` draws from `self.{found.attribute}`, a "
            f"generator {init} builds once in the main process (`{ctx.text(found.call)}` at "
            f"{where}): each worker gets a copy in the same state, so the workers draw the "
            f"same random numbers{epochs}; reseed it per worker in a `worker_init_fn` (from "
            "`torch.utils.data.get_worker_info().seed`).",
        )


# How a generator constructor is spelled, in any import style.
_GENERATOR_TEXT = re.compile(r"default_rng|RandomState|Random\(|Generator\(")


def _may_build_generators(ctx: RuleContext, methods: dict[str, Scope]) -> bool:
    """Whether the files that define the dataset's methods, or this one (which builds the
    objects handed to it), spell a generator constructor at all: reading the methods is the
    costly part, and most datasets have none. (A transform from a third file, handed to a
    dataset from a second, is left out by this.)"""
    if _GENERATOR_TEXT.search(ctx.facts.parsed.text):
        return True
    for scope in methods.values():
        owner = ctx.owner_of(scope.node)
        if owner is not None and _GENERATOR_TEXT.search(owner.file.facts.parsed.text):
            return True
    return False


def _has_workers(args: LoaderArgs) -> bool:
    workers = args.get("num_workers", _WORKERS_INDEX)
    if workers is None:
        return False  # the default, 0: no worker process
    return not (isinstance(workers, cst.Integer) and workers.value.strip("0_") == "")


def _dataset_class(
    ctx: RuleContext,
    dataset: cst.BaseExpression | None,
    scope: Scope,
    depth: int,
) -> tuple[str, dict[str, Scope], cst.Call | None] | None:
    """The class the loader's dataset is an instance of, with its methods (its own and its
    bases', of this file or another project file) and the call that built it, when the file
    shows them."""
    if dataset is None or depth > 3:
        return None
    if isinstance(dataset, cst.Call):
        qual = ctx.facts.imports.qualify(dataset.func)
        if qual is not None and constructor_role(qual) == "subset" and dataset.args:
            return _dataset_class(ctx, dataset.args[0].value, scope, depth + 1)
        found = _class_of(ctx, dataset, ctx.facts.imports)
        return (*found, dataset) if found is not None else None
    text = dotted(dataset)
    if text is None:
        return None
    for obj in reversed(ctx.facts.constructed):
        if obj.target != text or not visible_from(obj, scope):
            continue
        if obj.role == "subset" and obj.node.args:
            return _dataset_class(ctx, obj.node.args[0].value, obj.scope, depth + 1)
        if obj.role != "instance":
            return None
        if obj.qualname in ctx.facts.classes:
            return obj.qualname, _local_methods(ctx, obj.qualname, 0), obj.node
        found = _project_methods(ctx, obj.qualname)
        return (*found, obj.node) if found is not None else None
    return None


def _class_of(
    ctx: RuleContext, call: cst.Call, imports: ImportTable
) -> tuple[str, dict[str, Scope]] | None:
    """The class `call` builds, when it is one of this file (read with this file's imports) or
    of another project file."""
    name = dotted(call.func)
    if imports is ctx.facts.imports and name is not None and name in ctx.facts.classes:
        return name, _local_methods(ctx, name, 0)
    qual = imports.qualify(call.func)
    return _project_methods(ctx, qual) if qual is not None else None


@dataclass(frozen=True)
class _Held:
    """Finds the objects a dataset holds: built in its set-up, or handed to its constructor
    (`CropDataset(files, transform=Augment(seed=0))`)."""

    ctx: RuleContext
    construction: cst.Call | None

    def built_by(
        self, value: cst.BaseExpression, method: Scope
    ) -> tuple[str, dict[str, Scope]] | None:
        imports = method.module_imports
        if isinstance(value, cst.Name) and self.construction is not None:
            argument = _argument(self.construction, method.node, value.value)
            if isinstance(argument, cst.Call):
                return _class_of(self.ctx, argument, self.ctx.facts.imports)
            return None
        if isinstance(value, cst.Call) and imports is not None:
            return _class_of(self.ctx, value, imports)
        return None


def _argument(call: cst.Call, function: cst.CSTNode, name: str) -> cst.BaseExpression | None:
    """The argument `call` passes for the parameter `name` of `function` (an `__init__`)."""
    if not isinstance(function, cst.FunctionDef):
        return None
    params = [p.name.value for p in function.params.params][1:]  # after `self`
    if name not in params:
        return None
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg.value
    positional = [a.value for a in call.args if a.keyword is None and not a.star]
    index = params.index(name)
    return positional[index] if index < len(positional) else None


def _local_methods(ctx: RuleContext, name: str, depth: int) -> dict[str, Scope]:
    info = ctx.facts.classes.get(name)
    if info is None or depth > 4:
        return {}
    methods = dict(info.methods)
    for base in info.bases:
        inherited: dict[str, Scope] = {}
        if base in ctx.facts.classes:
            inherited = _local_methods(ctx, base, depth + 1)
        else:
            qual = ctx.facts.imports.qualify_text(base)
            found = _project_methods(ctx, qual) if qual is not None else None
            inherited = found[1] if found is not None else {}
        for method, scope in inherited.items():
            if method.startswith("__init__") and "__init__" in methods:
                # A base's `__init__` runs too (through `super().__init__()`): kept apart.
                method = f"__init__#{sum(m.startswith('__init__') for m in methods)}"
            methods.setdefault(method, scope)
    return methods


def _project_methods(ctx: RuleContext, qual: str) -> tuple[str, dict[str, Scope]] | None:
    view = ctx.file_context
    if view is None or "." not in qual:
        return None
    names = view.class_methods(qual)
    if not names:
        return None
    methods: dict[str, Scope] = {}
    for method in names:
        scope = view.method_scope(qual, method)
        if scope is not None:
            methods[method] = scope
    return qual.rsplit(".", 1)[-1], methods


def _shared_generator(
    methods: dict[str, Scope],
    entries: tuple[str, ...],
    held: _Held | None,
    read: dict[int, _SelfUses],
) -> _Generator | None:
    """A generator `__init__` stores on the object that a worker's entry method (or a method
    it calls) draws from, which no other method seeds or builds again, in a class that does
    not set up its workers itself (`get_worker_info()`). Methods are read only as the search
    needs them: most datasets build no generator, and their other methods are never read."""
    init = methods.get("__init__")
    if init is None or not isinstance(init.node, cst.FunctionDef):
        return None
    uses = _Uses(methods, read)
    # What `__init__` builds, itself or through the methods it calls (`self.seed(seed)` ->
    # `self.setup_rngs()`): those run once, in the main process.
    setup = _reached_methods(uses, tuple(n for n in methods if n.startswith("__init__")))
    built: dict[str, tuple[cst.Call, Scope]] = {}
    for name in setup:
        for attribute, call in _built_generators(methods[name], uses[name], built).items():
            built.setdefault(attribute, (call, methods[name]))
    found: _Generator | None = None
    if built:
        reached = _reached_methods(uses, entries)
        # Methods that may set a generator again after the copy: any the worker calls, and
        # any other than set-up (a `worker_init_fn` or the training script may call it).
        later = set(reached) | (set(uses.names) - set(setup))
        for attribute, (call, scope) in built.items():
            if any(attribute in uses[n].reseeded for n in later):
                continue
            draw = next((n for n in reached if attribute in uses[n].reads), None)
            if draw is not None:
                found = _Generator(attribute, call, scope, draw)
                break
    if found is None and held is not None:
        found = _held_generator(methods, uses, setup, entries, held, read)
    if found is None or any(uses[n].per_worker for n in uses.names):
        return None
    return found


class _Uses:
    """Each method's `_SelfUses`, read the first time any loader's search asks for it (`read`,
    by the method's node, lives as long as the file's check)."""

    def __init__(self, methods: dict[str, Scope], read: dict[int, _SelfUses]) -> None:
        self.nodes = {n: s.node for n, s in methods.items() if isinstance(s.node, cst.FunctionDef)}
        self.names = list(self.nodes)
        self._read = read

    def __contains__(self, name: str) -> bool:
        return name in self.nodes

    def __getitem__(self, name: str) -> _SelfUses:
        node = self.nodes[name]
        uses = self._read.get(id(node))
        if uses is None:
            uses = self._read[id(node)] = _SelfUses.of(node)
        return uses


# What a worker calls on an object the dataset holds (a transform, an augmentation pipeline).
_HELD_ENTRIES = ("__call__", "forward", "apply")


def _held_generator(
    methods: dict[str, Scope],
    uses: _Uses,
    setup: list[str],
    entries: tuple[str, ...],
    held: _Held,
    read: dict[int, _SelfUses],
) -> _Generator | None:
    """A generator that an object the dataset holds builds and draws from when the worker
    calls it (`self.transform(image)`, the transform's `self.rng`)."""
    reached: list[str] | None = None
    for name in setup:
        for attribute, value in uses[name].assigned:
            found = held.built_by(value, methods[name])
            if found is None:
                continue
            inner = _shared_generator(found[1], _HELD_ENTRIES, None, read)
            if inner is None:
                continue
            if reached is None:
                reached = _reached_methods(uses, entries)
            draw = next((n for n in reached if attribute in uses[n].reads), None)
            if draw is not None:
                return _Generator(f"{attribute}.{inner.attribute}", inner.call, inner.scope, draw)
    return None


def _reached_methods(uses: _Uses, entries: tuple[str, ...]) -> list[str]:
    """The entry methods and the methods they call on `self`, in that order."""
    order = [name for name in entries if name in uses]
    seen = set(order)
    index = 0
    while index < len(order):
        for called in uses[order[index]].calls:
            if called in uses and called not in seen and called != "__init__":
                seen.add(called)
                order.append(called)
        index += 1
    return order


def _built_generators(
    method: Scope, uses: _SelfUses, known: dict[str, tuple[cst.Call, Scope]]
) -> dict[str, cst.Call]:
    """`self.<attribute>` -> the generator constructor the method assigns it (or another
    attribute that holds one: `self.random_generator = self.np_rng`)."""
    imports = method.module_imports
    if imports is None:
        return {}
    found: dict[str, cst.Call] = {}
    for attribute, value in uses.assigned:
        call = _generator_call(value, imports, uses.locals)
        if call is None:
            held = uses.attribute_of(value)
            if held in found:
                call = found[held]
            elif held in known:
                call = known[held][0]
        if call is not None:
            found.setdefault(attribute, call)
    return found


def _generator_call(
    value: cst.BaseExpression, imports: ImportTable, local: dict[str, cst.BaseExpression]
) -> cst.Call | None:
    """The generator constructor `value` evaluates to: the call itself, one chained with
    `.manual_seed(...)`, either side of a conditional, or a local name assigned one."""
    if isinstance(value, cst.Name) and value.value in local:
        value = local[value.value]
    if isinstance(value, cst.IfExp):
        return _generator_call(value.body, imports, {}) or _generator_call(
            value.orelse, imports, {}
        )
    if isinstance(value, cst.BooleanOperation):
        return _generator_call(value.right, imports, {})
    if not isinstance(value, cst.Call):
        return None
    func = value.func
    if (
        isinstance(func, cst.Attribute)
        and func.attr.value == "manual_seed"
        and isinstance(func.value, cst.Call)
    ):
        return _generator_call(func.value, imports, {})
    qual = imports.qualify(func)
    return value if qual in _GENERATORS else None


class _SelfUses:
    """What one method does with `self`: attributes assigned (with their values), read,
    reseeded, methods called, and whether it sets up workers itself."""

    def __init__(self, self_name: str) -> None:
        self.self_name = self_name
        self.assigned: list[tuple[str, cst.BaseExpression]] = []
        self.reseeded: set[str] = set()
        self.reads: set[str] = set()
        self.calls: set[str] = set()
        self.locals: dict[str, cst.BaseExpression] = {}
        self.per_worker = False
        self._targets: set[int] = set()

    @classmethod
    def of(cls, function: cst.FunctionDef) -> _SelfUses:
        params = function.params.params
        uses = cls(params[0].name.value if params else "self")
        for statement in function.body.body:
            preorder(statement, uses._enter)
        return uses

    def _enter(self, node: cst.CSTNode) -> bool:
        """Read one node (parents before their parts); whether to read its parts."""
        if type(node) is cst.Attribute:
            return self._read_attribute(node)
        if type(node) is cst.Name:
            if node.value in _PER_WORKER:
                self.per_worker = True
        elif type(node) is cst.Call:
            self._call(node)
        elif type(node) is cst.Assign:
            for target in node.targets:
                self._target(target.target, node.value)
        elif type(node) is cst.AnnAssign:
            if node.value is not None:
                self._target(node.target, node.value)
        elif type(node) is cst.AugAssign:
            self._target(node.target, node.value)
        elif type(node) is cst.FunctionDef or type(node) is cst.ClassDef:
            return False  # a nested function is another scope
        return True

    def _attribute(self, node: cst.BaseExpression) -> str | None:
        """`rng` for `self.rng` and anything under it (`self.rng.bit_generator`)."""
        while isinstance(node, cst.Attribute):
            if isinstance(node.value, cst.Name) and node.value.value == self.self_name:
                return node.attr.value
            node = node.value
        return None

    def attribute_of(self, node: cst.BaseExpression) -> str | None:
        """`np_rng` for exactly `self.np_rng`."""
        if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name):
            return node.attr.value if node.value.value == self.self_name else None
        return None

    def _target(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        if isinstance(target, cst.Name):
            self.locals[target.value] = value
            return
        attribute = self._attribute(target)
        if attribute is None:
            return
        self._targets.add(id(target))
        if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name):
            self.assigned.append((attribute, value))
        self.reseeded.add(attribute)

    def _read_attribute(self, node: cst.Attribute) -> bool:
        if id(node) in self._targets:
            return True
        if node.attr.value in _PER_WORKER:
            self.per_worker = True
        attribute = self._attribute(node)
        if attribute is not None:
            self.reads.add(attribute)
            return False
        return True

    def _call(self, node: cst.Call) -> None:
        func = node.func
        if not isinstance(func, cst.Attribute):
            return
        attribute = self._attribute(func.value)
        if attribute is not None and func.attr.value in _RESEEDS:
            self.reseeded.add(attribute)
        if isinstance(func.value, cst.Name) and func.value.value == self.self_name:
            self.calls.add(func.attr.value)
