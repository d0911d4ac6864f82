"""What collecting one module produces: its scopes with their events, the objects it constructs,
and the uses of watched APIs."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import libcst as cst

from torchlint.analysis.conversions import DiscardedConversion
from torchlint.analysis.model import ClassInfo, ConstructedObject, LoopFrame, Scope
from torchlint.analysis.names import ImportTable
from torchlint.analysis.positions import Anchor
from torchlint.analysis.sites import Sites
from torchlint.analysis.source import ParsedSource

if TYPE_CHECKING:
    from torchlint.analysis.value import Value


@dataclass(frozen=True)
class DeprecatedUse:
    """A reference to `torch.cuda.amp.autocast` / `torch.cuda.amp.GradScaler`."""

    qualname: str
    node: cst.CSTNode  # the Call when called, else the reference itself
    func: cst.BaseExpression
    # Under a version test or in an `except` handler (the modern call failed there): a
    # fallback for an older PyTorch, which TL204 leaves alone.
    compat: bool = False


@dataclass(frozen=True)
class ApiUse:
    """A use of a name the api rules watch: an entry of the deprecation table, `torch.load`..."""

    qualname: str
    node: cst.CSTNode  # the Call when called, else the reference; the ImportFrom for imports
    func: cst.BaseExpression | None
    # Under a version test or in an `except` handler (or through a name imported there): a
    # fallback for another PyTorch release, which the rules leave alone.
    compat: bool = False


@dataclass(frozen=True)
class CrossEntropyInput:
    """The first argument of a cross-entropy (or negative log-likelihood) call, and where it
    came from."""

    call: cst.Call
    value: cst.BaseExpression
    softmax: str | None  # "softmax" / "log_softmax" when the value is known to be one
    producer: str | None  # `model` when the value is `model(x)`'s output
    scope: Scope
    # None when the call is known to be a cross-entropy; else the called parameter's name,
    # which the rule resolves through the module's call sites (`criterion` passed in).
    criterion: str | None = None
    criterion_value: Value | None = None  # what the called object holds (see values.py)
    loss: str = "cross-entropy"  # or "nll": `F.nll_loss` / `nn.NLLLoss`, known as such
    # The item of the producer's result the value is (`label` after `validity, label =
    # D(x)`: 1), or None when it is the whole result.
    element: int | None = None
    # What the value is on the other paths: it was bound otherwise in the body of an `if`
    # (`branch`) whose `else` bound the value this record describes (branches.py).
    alternatives: tuple[CrossEntropyInput, ...] = ()
    branch: cst.If | None = None


@dataclass
class ModuleFacts:
    parsed: ParsedSource
    imports: ImportTable
    module_scope: Scope
    scopes: list[Scope] = field(default_factory=list)
    functions: dict[str, Scope] = field(default_factory=dict)
    classes: dict[str, ClassInfo] = field(default_factory=dict)
    constructed: list[ConstructedObject] = field(default_factory=list)
    deprecated_amp: list[DeprecatedUse] = field(default_factory=list)
    # For the api rules (TL501-TL507): uses of deprecated or removed APIs, `from functorch
    # import ...` statements, calls of `torch.load` & co., `<expr>.log()` method calls, and
    # `x.require_grad = ...` assignments (with how often `.require_grad` is read).
    api_uses: list[ApiUse] = field(default_factory=list)
    functorch_imports: list[ApiUse] = field(default_factory=list)
    watched_calls: list[ApiUse] = field(default_factory=list)
    log_calls: list[cst.Call] = field(default_factory=list)
    require_grad_writes: list[cst.Attribute] = field(default_factory=list)
    # `x.to(device)` as a statement on what is shown to be a tensor (TL508).
    discarded_conversions: list[DiscardedConversion] = field(default_factory=list)
    require_grad_reads: int = 0
    top_level_imports: list[cst.SimpleStatementLine] = field(default_factory=list)
    # For each expression walked: the statement or header it sits in (see positions.py).
    anchors: dict[int, Anchor] = field(default_factory=dict)

    ce_inputs: list[CrossEntropyInput] = field(default_factory=list)
    # What the module-level names hold at the end of the module (functions read them).
    module_values: dict[str, Value] = field(default_factory=dict)
    # Every call with its function, class and branches, and every assignment (sites.py).
    sites: Sites = field(default_factory=Sites)

    def find_method(
        self, cls: ClassInfo | None, method: str, seen: set[str] | None = None
    ) -> Scope | None:
        """The method `cls` (a class of this module) runs for `method`: its own, else the first
        of its bases' (in this module) that defines it."""
        seen = set() if seen is None else seen
        if cls is None or cls.name in seen:
            return None
        seen.add(cls.name)
        if method in cls.methods:
            return cls.methods[method]
        for base in cls.bases:
            found = self.find_method(self.classes.get(base), method, seen)
            if found is not None:
                return found
        return None

    @property
    def loops(self) -> list[LoopFrame]:
        return [loop for scope in self.scopes for loop in scope.loops]

    def release(self) -> None:
        """Break the reference cycles between scopes, events and loops, so that the module
        (a large tree) is freed by reference counting, without waiting for the cyclic garbage
        collector."""
        for scope in self.scopes:
            scope.events.clear()
            scope.loops.clear()
            scope.local_defs.clear()
            scope.parent = None
            # `def f(x): return x`: a return value refers back to its own scope
            scope.return_values.clear()
            scope.param_defaults.clear()
        for info in self.classes.values():
            info.attributes.clear()  # `self.x = ...` values may refer to the class's methods
            info.methods.clear()
        self.scopes.clear()
        self.functions.clear()
        self.classes.clear()
        self.constructed.clear()
        self.anchors.clear()
        self.module_values.clear()
        self.sites.clear()
