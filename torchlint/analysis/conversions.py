"""A tensor conversion written as a statement (`x.to(device)`, `x.cuda()`, `x.half()`): tensors
are not converted in place, so the statement does nothing. A module's `.to()` / `.cuda()` /
`.half()` do convert in place, and so do a PyTorch Geometric `Data`'s and a Hugging Face
`BatchEncoding`'s `.to()`, so a statement is recorded only with evidence that its receiver is a
plain tensor: an enclosing `torch.is_tensor(x)` / `isinstance(x, torch.Tensor)` test, every
earlier assignment of the name in the function building a tensor (`torch.zeros(...)`,
`torch.from_numpy(a).float()`), or an item of a loader's batch unpacked in the `for` target
(`for images, labels in loader:`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import libcst as cst

from torchlint.analysis.model import Frame, GuardFrame, LoopFrame
from torchlint.analysis.names import dotted
from torchlint.analysis.record import record

# Methods that return a converted copy of a tensor and leave the tensor itself as it was.
CONVERSIONS = frozenset(
    ("to", "cuda", "cpu", "half", "float", "double", "bfloat16", "long", "int", "bool")
)

# torch functions that always return a new tensor.
_TENSOR_FUNCTIONS = frozenset(
    (
        "tensor", "as_tensor", "from_numpy", "zeros", "ones", "empty", "full", "rand", "randn",
        "randint", "randperm", "arange", "linspace", "logspace", "eye", "zeros_like",
        "ones_like", "empty_like", "full_like", "rand_like", "randn_like", "randint_like",
        "cat", "concat", "stack", "where", "FloatTensor", "LongTensor", "Tensor",
    )
)  # fmt: skip

# Tensor methods whose result is a tensor again.
_TENSOR_METHODS = CONVERSIONS | {
    "view", "reshape", "unsqueeze", "squeeze", "permute", "transpose", "contiguous", "clone",
    "detach", "flatten", "expand", "repeat", "type_as", "t", "abs", "exp", "log", "sqrt",
    "sum", "mean", "softmax", "sigmoid",
}  # fmt: skip

_MAX_DEPTH = 4
_ELEMENTWISE = (
    cst.LessThan, cst.GreaterThan, cst.LessThanEqual, cst.GreaterThanEqual, cst.Equal,
    cst.NotEqual,
)  # fmt: skip


@record()
class DiscardedConversion:
    node: cst.Call  # the call, the whole statement
    receiver: str  # as written: `x`, `self.pe`
    method: str  # `to`, `cuda`, `half`, ...
    evidence: str  # "type-test" | "built-as-tensor" | "batch-item"


Qualify = Callable[[cst.BaseExpression], "str | None"]
Assigned = Callable[[str], Sequence[cst.BaseExpression]]


def discarded_conversion(
    call: cst.Call,
    frames: Sequence[Frame],
    qualify: Qualify,
    assigned: Assigned,
    iterates_data: Callable[[LoopFrame], bool],
) -> DiscardedConversion | None:
    """The conversion `call` (an expression statement) throws away, when its receiver is
    shown to be a tensor; None otherwise."""
    func = call.func
    if type(func) is not cst.Attribute or func.attr.value not in CONVERSIONS:
        return None
    receiver = dotted(func.value)
    if receiver is None or receiver in ("self", "cls"):
        return None
    evidence = None
    if any(_tests_tensor(frame, receiver, qualify) for frame in frames):
        evidence = "type-test"
    elif _built_as_tensor(receiver, qualify, assigned, 0):
        evidence = "built-as-tensor"
    elif "." not in receiver and any(
        isinstance(frame, LoopFrame) and _unpacks(frame, receiver) and iterates_data(frame)
        for frame in frames
    ):
        evidence = "batch-item"
    if evidence is None:
        return None
    return DiscardedConversion(call, receiver, func.attr.value, evidence)


def _tests_tensor(frame: Frame, receiver: str, qualify: Qualify) -> bool:
    """The body of `if torch.is_tensor(x):` / `if isinstance(x, torch.Tensor):`."""
    if not isinstance(frame, GuardFrame) or frame.branch != 0 or type(frame.node) is not cst.If:
        return False
    test = frame.node.test
    if type(test) is not cst.Call or not test.args or dotted(test.args[0].value) != receiver:
        return False
    name = qualify(test.func) or dotted(test.func)
    if name == "torch.is_tensor":
        return len(test.args) == 1
    if name != "isinstance" or len(test.args) != 2:
        return False
    kinds = test.args[1].value
    options = [e.value for e in kinds.elements] if type(kinds) is cst.Tuple else [kinds]
    return all(qualify(option) in ("torch.Tensor", "torch.nn.Parameter") for option in options)


def _built_as_tensor(name: str, qualify: Qualify, assigned: Assigned, depth: int) -> bool:
    return _name_is_tensor(name, qualify, assigned, depth, frozenset()) is True


def _name_is_tensor(
    name: str, qualify: Qualify, assigned: Assigned, depth: int, seen: frozenset[str]
) -> bool | None:
    """True when every assignment of `name` builds a tensor and one does so on its own; None
    when they only refer back to the name (`t = t.to(device)`)."""
    if name in seen:
        return None
    values = assigned(name)
    if not values or depth > _MAX_DEPTH:
        return False
    found: bool | None = None
    for value in values:
        verdict = _is_tensor_expr(value, qualify, assigned, depth + 1, seen | {name})
        if verdict is False:
            return False
        found = found or verdict
    return found


def _is_tensor_expr(
    node: cst.BaseExpression,
    qualify: Qualify,
    assigned: Assigned,
    depth: int,
    seen: frozenset[str],
) -> bool | None:
    kind = type(node)
    if kind is cst.Call:
        func = node.func  # type: ignore[attr-defined]
        qual = qualify(func)
        if qual is not None:
            return qual.startswith("torch.") and qual.rsplit(".", 1)[-1] in _TENSOR_FUNCTIONS
        if type(func) is cst.Attribute and func.attr.value in _TENSOR_METHODS:
            return _is_tensor_expr(func.value, qualify, assigned, depth + 1, seen)
        return False
    if kind is cst.Name:
        return _name_is_tensor(node.value, qualify, assigned, depth, seen)  # type: ignore[attr-defined]
    if kind is cst.Subscript:
        return _is_tensor_expr(node.value, qualify, assigned, depth + 1, seen)  # type: ignore[attr-defined]
    if (
        kind is cst.Comparison
        and len(node.comparisons) == 1  # type: ignore[attr-defined]
        and type(node.comparisons[0].operator) in _ELEMENTWISE  # type: ignore[attr-defined]
    ):
        return _is_tensor_expr(node.left, qualify, assigned, depth + 1, seen) is True  # type: ignore[attr-defined]
    if kind is cst.BinaryOperation:
        left = _is_tensor_expr(node.left, qualify, assigned, depth + 1, seen)  # type: ignore[attr-defined]
        right = _is_tensor_expr(node.right, qualify, assigned, depth + 1, seen)  # type: ignore[attr-defined]
        return True if (left or right) else (None if None in (left, right) else False)
    return False


def _unpacks(frame: LoopFrame, name: str) -> bool:
    """`for images, labels in loader:` (also under `enumerate`): `name` is one item of the
    batch tuple."""
    node = frame.node
    if type(node) is not cst.For:
        return False
    target: cst.BaseExpression = node.target
    if type(target) is cst.Tuple and len(target.elements) == 2:  # `for i, batch in enumerate`
        second = target.elements[1].value
        if type(second) in (cst.Tuple, cst.List):
            target = second
    if type(target) not in (cst.Tuple, cst.List):
        return False
    names = [dotted(e.value) for e in target.elements]  # type: ignore[attr-defined]
    if name not in names:
        return False
    iterable = node.iter
    if _calls(iterable, "zip") or (
        _calls(iterable, "enumerate") and iterable.args and _calls(iterable.args[0].value, "zip")  # type: ignore[attr-defined]
    ):
        return False  # `for a, b in zip(xs, ys)`: an item of each, whatever they hold
    if _calls(iterable, "enumerate") and target is node.target:
        return names.index(name) > 0 and len(names) > 2  # `for i, x in enumerate(...)`: x whole
    return True


def _calls(node: cst.BaseExpression, name: str) -> bool:
    return type(node) is cst.Call and dotted(node.func) == name
