"""The data the analyzer builds from one file: scopes, loops, context frames and events.

An *event* is one thing training code does that a rule may care about (a backward, an optimizer
step, a host sync, a call into a function of the same module, ...), recorded in program order
with the *frames* that surround it inside its scope: loops, `if` guards, `with` blocks and
exception handlers.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

import libcst as cst

from torchlint.analysis.record import record

if TYPE_CHECKING:
    from torchlint.analysis.names import ImportTable
    from torchlint.analysis.protocol import Origin
    from torchlint.analysis.sites import Branch
    from torchlint.analysis.value import Value


class Kind(enum.Enum):
    BACKWARD = "backward"
    STEP = "step"  # optimizer step (direct or through a GradScaler)
    MAYBE_STEP = "maybe-step"  # `.step()` on something we cannot classify
    SCHEDULER_STEP = "scheduler-step"
    ZERO_GRAD = "zero-grad"
    SCALER_UPDATE = "scaler-update"
    SCALER_UNSCALE = "scaler-unscale"
    MODE_TRAIN = "mode-train"
    MODE_EVAL = "mode-eval"
    MODE_UNKNOWN = "mode-unknown"  # `.train(flag)` with a flag we cannot read
    HOST_SYNC = "host-sync"
    GRAD_READ = "grad-read"  # reads `.grad` (manual updates, gradient inspection)
    GRAD_WRITE = "grad-write"  # sets gradients by hand: `p.grad = g`, `p.grad.copy_(g)`
    CLIP = "clip"  # torch.nn.utils.clip_grad_norm_ / clip_grad_value_
    DEVICE_SYNC = "device-sync"  # torch.cuda.synchronize() / torch.cuda.empty_cache()
    TIMING = "timing"  # time.perf_counter(), torch.cuda.Event(...): someone is measuring
    TRANSFER = "transfer"  # a loader batch moved to the device: `x.to(device)`, `x.cuda()`
    CREATE_MOVE = "create-move"  # `torch.zeros(n).to(device)`: built on the host, then moved
    ACCUMULATE = "accumulate"  # `total += loss`, `losses.append(loss)` across iterations
    CALL = "call"  # a call we may expand (project function or method) or that is opaque


# `net.train()`, `net.eval()`, `net.train(flag)`: the events that set a module's mode.
MODE_SWITCHES = frozenset((Kind.MODE_TRAIN, Kind.MODE_EVAL, Kind.MODE_UNKNOWN))


class GuardKind(enum.Enum):
    PERIODIC = "periodic"  # `step % N == 0`, `i == 0`: not every iteration
    RANK = "rank"  # `rank == 0`, `accelerator.is_main_process`: every iteration on that rank
    CONFIG = "config"  # `if writer is not None`, `if args.log`: a switch, usually on
    OTHER = "other"


class WithKind(enum.Enum):
    AUTOCAST = "autocast"
    AUTOCAST_OFF = "autocast-off"  # `autocast(..., enabled=False)` inside an autocast region
    NO_GRAD = "no-grad"
    ENABLE_GRAD = "enable-grad"
    PROFILE = "profile"
    ACCUMULATE = "accumulate"  # `accelerator.accumulate(model)`: steps every N micro-batches
    OTHER = "other"


@dataclass(eq=False)
class LoopFrame:
    node: cst.For | cst.While | cst.FunctionDef  # a function: see `runner`
    scope: Scope
    iter_text: str  # the iterable's source text ('' for while loops)
    is_param_loop: bool  # `for p in model.parameters()`: an inner detail, not a loop level
    # Frames of the scope that enclose the loop (outermost first).
    outer: tuple[Frame, ...] = ()
    order: int = 0  # position in the module, in walk order (compare with ConstructedObject)
    # What the loop iterates, in the scope's terms: `loader` for `enumerate(tqdm(loader))`,
    # both loaders of a `zip`, the loader behind `next(it)` when `it = iter(loader)`; and the
    # values they hold (a loader a factory returned: see values.py).
    sources: list[str] = field(default_factory=list)
    source_values: list[Value] = field(default_factory=list)
    # A function a training framework calls once per batch (`node` is its definition), read
    # as the body of the loop the framework runs: the framework's name ("Lightning"), and
    # whether the function steps the optimizers itself (manual optimization).
    runner: str = ""
    manual: bool = False

    @property
    def label(self) -> str:
        if self.runner:
            return f"loop {self.runner} runs `{self.scope.qualname}` in"
        return f"for-loop over `{self.iter_text}`" if self.iter_text else "while-loop"


@dataclass(eq=False)
class GuardFrame:
    """A branch of an `if` (or `except`, `case`). Its kind is first judged from the test; a
    flag-like test that reads a name its loop assigns is then data-dependent, not
    loop-invariant (the walker revises `kind` when the loop ends)."""

    node: cst.CSTNode  # the `if` (or `except`, `case`) deciding this branch
    branch: int  # 0: the body, 1: the else branch (or the code after `if cond: continue`)
    kind: GuardKind
    condition: str = ""  # the test as written: two `if use_amp:` blocks branch together
    reads: frozenset[str] = frozenset()  # the names (dotted) the test reads
    # What a flag test stands for, as written where it was assigned (`should_step = step %
    # accum == 0` ... `if should_step:` gives "step % accum == 0"); "" for any other test.
    defined: str = ""

    @property
    def counts_steps(self) -> bool:
        """The test is a step counter's modulo (`i % n == 0`), directly or through a flag."""
        return "%" in self.condition or "%" in self.defined


@dataclass(eq=False)
class WithFrame:
    """A `with` item, or a decorator. A decorator of the project that may apply `no_grad`
    (`@smart_inference_mode()`) is kept as OTHER during the walk, and set to NO_GRAD by
    resolution once the project's functions are known (the frames are shared by every event
    path, so the change reaches them all)."""

    node: cst.CSTNode  # the `with` statement or the decorator
    kind: WithKind
    text: str  # the context expression as written
    autocast_dtype: str | None = None  # "float16", "bfloat16", or None when not stated
    autocast_device: str | None = None  # "cuda", "cpu", ... or None when not stated


@record()
class CallFrame:
    """Marks where an expanded callee's events were entered from."""

    site: Event
    callee: Scope


Frame = LoopFrame | GuardFrame | WithFrame | CallFrame


@dataclass(eq=False)
class Event:
    kind: Kind
    node: cst.CSTNode  # what a finding about this event points at
    scope: Scope
    path: tuple[Frame, ...]  # enclosing frames inside the scope, outermost first
    receiver: str | None = None  # `optimizer`, `self.optimizer`, `optimizers[0]`, ...
    method: str | None = None  # the called method or function, as written
    # BACKWARD: "tensor" | "scaled" | "framework" | "autograd"; STEP: "optimizer" | "scaler"
    via: str | None = None
    scaler: str | None = None  # the GradScaler used by a scaled backward or a scaler step
    has_closure: bool = False  # `optimizer.step(closure)`
    subject: str | None = None  # HOST_SYNC: the value synchronised (its root name)
    subject_is_tensor: bool | None = None  # None: a parameter; the caller decides
    subject_on_host: bool = False  # the value is known to live on the host (a CPU batch)
    # HOST_SYNC: the call the synced value is handed to at once (`env.step` in
    # `env.step(action.item())`), when it is a direct argument of one.
    consumer: str | None = None
    # HOST_SYNC: the value was filled by a point-to-point receive (`dist.irecv(t, src)`).
    subject_received: bool = False
    # HOST_SYNC: the parameter the value was read from, not moved since (`batch` for
    # `batch.get("mask").sum().item()`): on the host when the caller passes a host value.
    subject_param: str | None = None
    # BACKWARD: the value was computed under no_grad / inference_mode (no graph to go back on).
    subject_no_grad: bool = False
    non_blocking: bool = False  # TRANSFER: `non_blocking=True` was passed
    value: cst.BaseExpression | None = None  # ACCUMULATE: what is added
    # ACCUMULATE: the variable whose call computed the added value (`model` for `out` after
    # `out = model(x)`), when the module shows one.
    producer: str | None = None
    # ACCUMULATE: the enclosing loops in whose iteration the total is (re)set, before or after.
    reset_in: tuple[LoopFrame, ...] = ()
    # CALL: the callee defined in this module (after the module is read), or one in another
    # project file (found when first asked), and how arguments bind to parameters.
    local_callee: Scope | None = None
    external: ExternalCallee | None = None
    # ("name", f) | ("method", receiver, m) | ("super", m) | ("qualified", q) | ("project", q)
    callee_ref: tuple[str, ...] = ()
    arg_texts: tuple[str, ...] = ()
    kwarg_texts: tuple[tuple[str, str], ...] = ()
    tensor_params: frozenset[str] = frozenset()  # filled on resolution: params bound to tensors
    tensor_args: frozenset[int | str] = frozenset()  # arg positions / keywords holding tensors
    # CALL: arg positions / keywords holding host values (a loader batch not yet moved).
    host_args: frozenset[int | str] = frozenset()
    # The object the receiver holds where the event happens (`optimizer` in `optimizer.step()`,
    # the callee of a call), and for calls the values of the arguments: see values.py.
    obj: Value | None = None
    # CALL: the literal arguments (`reduction="none"`), by position or keyword.
    arg_consts: tuple[tuple[int | str, object], ...] = ()
    # BACKWARD: the modules whose calls computed the loss (see Value.reach).
    reach: frozenset[str] = frozenset()
    arg_values: tuple[Value, ...] = ()
    kwarg_values: tuple[tuple[str, Value], ...] = ()
    # CALL of a function of this module: "softmax" / "log_softmax" for each positional
    # argument known to be one (`loss_fn(F.softmax(out, 1), y)`), else None; () for none.
    arg_probs: tuple[str | None, ...] = ()
    # CALL of a variable (an instance's `forward`: `focal(pred, y)`): for each positional
    # argument that is a model's output (through reshapes), that model's name and the item of
    # its tuple result (None: the whole result); () for none.
    arg_outputs: tuple[tuple[str, int | None] | None, ...] = ()

    @property
    def loops(self) -> tuple[LoopFrame, ...]:
        return tuple(f for f in self.path if isinstance(f, LoopFrame))

    @property
    def callee(self) -> Scope | None:
        """The function or method this call runs, in this module or another project file."""
        if self.local_callee is not None:
            return self.local_callee
        if self.external is not None:
            return self.external.scope()
        return None


class ExternalCallee:
    """A call into another project file, resolved when first asked (loading that file then) and
    again after the project changes (`generation` moves on)."""

    __slots__ = ("_current", "_find", "_generation", "_scope")

    def __init__(self, find: Callable[[], Scope | None], generation: Callable[[], int]) -> None:
        self._find = find
        self._generation = generation
        self._current = -1
        self._scope: Scope | None = None

    def scope(self) -> Scope | None:
        generation = self._generation()
        if generation != self._current:
            self._current = generation
            self._scope = self._find()
        return self._scope


@dataclass(eq=False)
class Scope:
    """A function, a method, or the module body, with its events in program order."""

    name: str
    qualname: str
    node: cst.CSTNode
    parent: Scope | None
    class_name: str | None = None  # for methods: the class that defines them
    params: tuple[str, ...] = ()
    decorators: tuple[WithFrame, ...] = ()
    events: list[Event] = field(default_factory=list)
    loops: list[LoopFrame] = field(default_factory=list)
    local_defs: dict[str, Scope] = field(default_factory=dict)  # nested functions
    # Names holding tensors computed on the device (model outputs, losses, `.to(device)`).
    # Flow-sensitive while collecting; this is the set at the end of the scope.
    tensor_names: set[str] = field(default_factory=set)
    # What each `return` gives: "softmax" / "log_softmax", or None for anything else.
    returns: list[str | None] = field(default_factory=list)
    # For each `return a, b`: the same for each item; None for a return of anything else.
    return_items: list[tuple[str | None, ...] | None] = field(default_factory=list)
    # For each `return Constructor(...)`: the constructed role (`tensor-dataset`), else None.
    returned_roles: list[str | None] = field(default_factory=list)
    # Set on the scopes of another project file collected for its callers (None: this file).
    source: Origin | None = None
    # The objects each `return` gives, and the defaults of parameters (see values.py).
    return_values: list[Value] = field(default_factory=list)
    param_defaults: dict[str, Value] = field(default_factory=dict)
    param_consts: dict[str, object] = field(default_factory=dict)  # literal defaults
    # What each `return` returns, and whether gradients are off there (for decorators that
    # wrap a function: `return torch.no_grad()(fn)`, `with torch.no_grad(): return fn(*a)`).
    return_nodes: list[cst.BaseExpression] = field(default_factory=list)
    return_no_grad: list[bool] = field(default_factory=list)
    imports: ImportTable | None = None  # module scopes: the module's imports
    # Functions: the names they bind themselves (not parameters): objects of their own.
    bound: frozenset[str] = frozenset()
    # The modules the returned tensors were computed by, as written in the function, and
    # whether each return carries the autograd graph (True / False / None: unknown).
    return_reach: frozenset[str] = frozenset()
    return_graphs: list[bool | None] = field(default_factory=list)

    @property
    def returns_softmax(self) -> str | None:
        """ "softmax" / "log_softmax" when every return gives one (a forward that returns
        probabilities only in eval mode returns logits while training)."""
        kinds = set(self.returns)
        if len(kinds) == 1:
            return next(iter(kinds))
        return None

    def returns_softmax_at(self, index: int) -> str | None:
        """ "softmax" / "log_softmax" when every `return` gives a tuple whose item `index` is
        one (`return self.adv(h), self.aux(h)` with `aux` ending in a softmax)."""
        items = self.return_items
        if not items or any(i is None or len(i) <= index for i in items):
            return None
        kinds = {i[index] for i in items if i is not None}
        return next(iter(kinds)) if len(kinds) == 1 else None

    @property
    def is_module(self) -> bool:
        return self.parent is None

    @property
    def outermost_function(self) -> Scope:
        """The top-level function (or method) this scope is nested in, itself for one; the
        module for the module."""
        outer = self
        while outer.parent is not None and not outer.parent.is_module:
            outer = outer.parent
        return outer

    @property
    def module_imports(self) -> ImportTable | None:
        """The imports of the module this scope belongs to."""
        scope: Scope | None = self
        while scope is not None and scope.parent is not None:
            scope = scope.parent
        return scope.imports if scope is not None else None

    @property
    def display_name(self) -> str:
        return "module level" if self.is_module else f"`{self.qualname}()`"


@dataclass(eq=False)
class ClassInfo:
    name: str
    node: cst.ClassDef
    bases: tuple[str, ...]
    methods: dict[str, Scope] = field(default_factory=dict)
    # `self.x = ...` anywhere in the class: every value `x` is assigned.
    attributes: dict[str, list[Value]] = field(default_factory=dict)


@dataclass(frozen=True)
class ConstructedObject:
    """`name = Something(...)` where Something is an optimizer, scheduler, scaler or loader."""

    role: str  # "optimizer" | "scheduler" | "scaler" | "dataloader" | "instance"
    target: str  # the assigned name as written: `opt`, `self.scaler`
    qualname: str  # what was called: `torch.optim.AdamW`, a project class name, ...
    node: cst.Call
    scope: Scope
    enabled: bool | None = True  # for scalers: False when built with enabled=False
    params_owner: str | None = None  # optimizers: `model` in `SGD(model.parameters(), ...)`
    order: int = 0  # position in the module, in walk order (compare with LoopFrame.order)
    value: Value | None = None  # loaders: what the construction evaluates to (its arguments)
    # Loaders found through values: where this module names them (a factory's result).
    named_at: cst.CSTNode | None = None
    # The `if` branches around the construction in its function (sites.py): constructions
    # of one name in exclusive branches are each what the name may hold after the `if`.
    branches: tuple[Branch, ...] = ()


class Placed(Protocol):
    """Anything that records the `if` branches around it (a construction, a call site)."""

    @property
    def branches(self) -> tuple[Branch, ...]: ...


def exclusive(a: Placed, b: Placed) -> bool:
    """Whether `a` and `b` are on different sides of one `if` (never both on a path)."""
    return any(x.node is y.node and x.branch != y.branch for x in a.branches for y in b.branches)


def one_per_path(built: Sequence[ConstructedObject]) -> list[ConstructedObject]:
    """Of the constructions that bound one name in turn, those that may have bound it last:
    the last, and before it those on other sides of an `if` than every later one."""
    chosen = [built[-1]]
    for obj in reversed(built[:-1]):
        if not all(exclusive(obj, other) for other in chosen):
            break
        chosen.append(obj)
    return chosen[::-1]


def visible_from(obj: ConstructedObject, scope: Scope) -> bool:
    """Whether the name `obj` was bound to is visible in `scope`: bound in it or an enclosing
    scope, or, for `self.x`, in a method of the same class."""
    if obj.target.startswith("self."):
        return obj.scope.class_name is not None and obj.scope.class_name == scope.class_name
    current: Scope | None = scope
    while current is not None:
        if obj.scope is current:
            return True
        current = current.parent
    return False


def grad_disabled(frames: Sequence[Frame]) -> bool:
    """Whether gradients are off at the innermost point of `frames`."""
    for frame in reversed(frames):
        if isinstance(frame, WithFrame):
            if frame.kind is WithKind.NO_GRAD:
                return True
            if frame.kind is WithKind.ENABLE_GRAD:
                return False
    return False
