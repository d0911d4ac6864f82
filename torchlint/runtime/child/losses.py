"""What each call of a functional loss computed: its value, its reduction and how many elements
it reduced, the batch accuracy of a classification loss (`ignore_index` honoured), and the
loss's floor, the lowest value it can reach on these targets (the entropy of soft targets or
of label-smoothed ones: a loss that sits at its floor has nothing left to learn).

`nn.*Loss` modules call these functions, so patching `torch.nn.functional` sees them too. The
values stay detached tensors on their device; nothing here synchronises with the device.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from torchlint.runtime.child.loss_checks import bind_arguments

#: the functional losses whose values are observed
OBSERVED_LOSSES = (
    "cross_entropy",
    "nll_loss",
    "mse_loss",
    "l1_loss",
    "smooth_l1_loss",
    "huber_loss",
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "kl_div",
)
CLASSIFICATION = ("cross_entropy", "nll_loss")
#: elements of a loss the floor computation reads at most (a floor is computed once a run)
MAX_FLOOR_ELEMENTS = 50_000_000


@dataclass(eq=False)
class LossValue:
    """One scalar value of a functional loss."""

    name: str
    value: torch.Tensor
    grad_enabled: bool
    reduction: str
    #: the elements the loss reduced (non-ignored targets for a classification loss, a 0-d
    #: tensor then, so that reading it never waits for the device): the divisor that makes a
    #: `sum` comparable with a `mean`; None when it cannot be known (class weights with a mean
    #: reduction divide by their sum)
    elements: int | torch.Tensor | None
    #: the batch's first dimension
    samples: int | None
    #: top-1 accuracy over the non-ignored targets (classification), as a 0-d tensor
    accuracy: torch.Tensor | None = None
    #: the loss's lowest reachable value on these targets (0-d tensor), None when it is 0 or
    #: cannot be computed
    floor: torch.Tensor | None = None
    #: why a floor was computed ("soft targets", "label smoothing 0.1"), for the report
    floor_reason: str | None = None
    target: torch.Tensor | None = None

    @property
    def per_element(self) -> torch.Tensor | None:
        """The value as a mean over the loss's elements, whatever its reduction; None when the
        divisor is unknown."""
        if self.reduction == "mean":
            return self.value
        if self.reduction == "sum" and self.elements is not None:
            return self.value / self.elements
        return None


Observer = Callable[[LossValue], None]


class LossObserver:
    """Patches the functional losses so each scalar value reaches `observer`; a loss that calls
    another (or a check that calls one again) reports once. `floors` asks for floors and
    accuracies (overfit); `keep_targets` keeps each call's target (the replay of a loop
    without a DataLoader)."""

    def __init__(self, observer: Observer, *, floors: bool = False, keep_targets: bool = False):
        self.observer = observer
        #: compute accuracies (classification) and floors; `floors` can be turned off once the
        #: batch is fixed (its floor does not change)
        self.accuracies = floors
        self.floors = floors
        self.keep_targets = keep_targets
        #: replaces a target before the loss runs (call index of the step -> tensor), or None
        self.substitute: Callable[[str, torch.Tensor], torch.Tensor] | None = None
        self._patches: list[tuple[str, Any]] = []
        self._busy = False

    def install(self) -> None:
        functional = torch.nn.functional
        for name in OBSERVED_LOSSES:
            original = getattr(functional, name, None)
            if original is not None:
                self._patches.append((name, original))
                setattr(functional, name, self._wrap(name, original))

    def uninstall(self) -> None:
        functional = torch.nn.functional
        for name, original in reversed(self._patches):
            setattr(functional, name, original)
        self._patches = []

    def _wrap(self, name: str, original: Callable[..., Any]) -> Callable[..., Any]:
        observer = self

        @functools.wraps(original)
        def loss(*args: Any, **kwargs: Any) -> Any:
            if observer._busy:
                return original(*args, **kwargs)
            observer._busy = True
            try:
                bound = bind_arguments(original, args, kwargs)
                target = bound.get("target")
                if observer.substitute is not None and isinstance(target, torch.Tensor):
                    replaced = observer.substitute(name, target)
                    if replaced is not target:
                        args, kwargs = _with_target(original, args, kwargs, replaced)
                        bound["target"] = target = replaced
                out = original(*args, **kwargs)
                if isinstance(out, torch.Tensor) and out.numel() == 1:
                    observer._observe(name, out, bound)
                return out
            finally:
                observer._busy = False

        return loss

    def _observe(self, name: str, out: torch.Tensor, bound: dict[str, Any]) -> None:
        inp, target = bound.get("input"), bound.get("target")
        reduction = bound.get("reduction", "mean")
        reduction = reduction if isinstance(reduction, str) else "mean"
        record = LossValue(
            name,
            out.detach().float().reshape(()),
            torch.is_grad_enabled(),
            reduction,
            None,
            int(inp.shape[0]) if isinstance(inp, torch.Tensor) and inp.dim() > 0 else None,
        )
        if isinstance(inp, torch.Tensor) and isinstance(target, torch.Tensor):
            try:
                with torch.no_grad():
                    record.elements = _elements(name, inp, target, bound)
                    if self.accuracies and name in CLASSIFICATION:
                        record.accuracy = accuracy(inp, target, bound.get("ignore_index"))
                    if self.floors:
                        record.floor, record.floor_reason = floor(name, inp, target, bound)
            except (RuntimeError, ValueError, TypeError, IndexError):
                pass  # an exotic call: no accuracy or floor, never a broken run
            if self.keep_targets and not target.requires_grad:
                record.target = target
        self.observer(record)


def _with_target(
    function: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], target: Any
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The call's arguments with its target replaced (the second positional, or `target=`)."""
    if "target" in kwargs:
        return args, {**kwargs, "target": target}
    if len(args) >= 2:
        return (args[0], target, *args[2:]), kwargs
    return args, {**kwargs, "target": target}


def _ignore_mask(target: torch.Tensor, ignore_index: Any) -> torch.Tensor | None:
    if isinstance(ignore_index, int) and not target.is_floating_point():
        return target != ignore_index
    return None


def _elements(
    name: str, inp: torch.Tensor, target: torch.Tensor, bound: dict[str, Any]
) -> int | torch.Tensor | None:
    """How many elements a mean reduction divides by (None: not a count)."""
    if name in CLASSIFICATION:
        if bound.get("weight") is not None:
            return None  # a weighted mean divides by the sum of the weights it used
        if target.is_floating_point():  # class probabilities: one element per sample position
            return int(target.numel() // max(1, target.shape[1] if target.dim() > 1 else 1))
        mask = _ignore_mask(target, bound.get("ignore_index", -100))
        return mask.sum().reshape(()) if mask is not None else int(target.numel())
    if name == "kl_div":
        return int(inp.numel())
    shape = torch.broadcast_shapes(inp.shape, target.shape)  # type: ignore[no-untyped-call]
    return int(math.prod(shape))


def accuracy(inp: torch.Tensor, target: torch.Tensor, ignore_index: Any) -> torch.Tensor | None:
    """Top-1 accuracy of (N, C, ...) scores against (N, ...) class targets, over the targets
    that are not `ignore_index` (-100 when not given); a 0-d tensor, None when the shapes are
    not those of a classification."""
    if target.is_floating_point() or inp.dim() < 2 or target.dim() != inp.dim() - 1:
        return None
    if target.shape[0] != inp.shape[0] or tuple(target.shape[1:]) != tuple(inp.shape[2:]):
        return None
    predicted = inp.detach().argmax(dim=1)
    mask = _ignore_mask(target, ignore_index if ignore_index is not None else -100)
    correct = (predicted == target).float()
    if mask is None:
        return correct.mean().reshape(())
    kept = mask.float()
    return ((correct * kept).sum() / kept.sum().clamp_min(1.0)).reshape(())


def _entropy(p: torch.Tensor, dim: int) -> torch.Tensor:
    """-sum p log p over `dim` (0 log 0 = 0)."""
    return -(p * torch.log(p.clamp_min(1e-12))).sum(dim=dim)


def _binary_entropy(t: torch.Tensor) -> torch.Tensor:
    t = t.clamp(0.0, 1.0)
    return -(t * torch.log(t.clamp_min(1e-12)) + (1 - t) * torch.log((1 - t).clamp_min(1e-12)))


def _reduce(values: torch.Tensor, reduction: str, count: torch.Tensor | int) -> torch.Tensor:
    total = values.sum()
    if reduction == "sum":
        return total
    return total / count


def floor(
    name: str, inp: torch.Tensor, target: torch.Tensor, bound: dict[str, Any]
) -> tuple[torch.Tensor | None, str | None]:
    """The loss's minimum over all possible outputs for these targets, as the loss reduces it:
    the entropy of soft (float) targets for binary cross-entropy, of probability targets or of
    label-smoothed targets for cross-entropy. (None, None) when it is 0 or cannot be computed
    (then the loss itself is judged)."""
    reduction = bound.get("reduction", "mean")
    if reduction not in ("mean", "sum") or target.numel() > MAX_FLOOR_ELEMENTS:
        return None, None
    t = target.detach().float()
    if name in ("binary_cross_entropy", "binary_cross_entropy_with_logits"):
        if not target.is_floating_point() or bool(((t == 0) | (t == 1)).all()):
            return None, None  # hard targets: the loss can reach 0
        pos_weight = bound.get("pos_weight") if name.endswith("logits") else None
        if isinstance(pos_weight, torch.Tensor):
            # the optimum of -(w t log p + (1 - t) log(1 - p)) is p = w t / (w t + 1 - t)
            w = pos_weight.detach().float()
            best = (w * t / (w * t + 1 - t).clamp_min(1e-12)).clamp(1e-12, 1 - 1e-12)
            values = -(w * t * torch.log(best) + (1 - t) * torch.log(1 - best))
        else:
            values = _binary_entropy(t)
        weight = bound.get("weight")
        if isinstance(weight, torch.Tensor):
            values = values * weight.detach().float()
        return _reduce(values, str(reduction), t.numel()).reshape(()), "soft targets"
    if name != "cross_entropy":
        return None, None
    if bound.get("weight") is not None:
        return None, None
    smoothing = bound.get("label_smoothing", 0.0)
    smoothing = float(smoothing) if isinstance(smoothing, (int, float)) else 0.0
    classes = int(inp.shape[1]) if inp.dim() >= 2 else int(inp.shape[0])
    if target.is_floating_point():  # class probabilities, (N, C, ...)
        probabilities = t * (1 - smoothing) + smoothing / classes
        values = _entropy(probabilities, dim=1 if t.dim() > 1 else 0)
        if not bool(values.abs().sum() > 1e-6):
            return None, None
        reason = "probability targets" + (f", label smoothing {smoothing:g}" if smoothing else "")
        return _reduce(values, str(reduction), values.numel()).reshape(()), reason
    if smoothing <= 0:
        return None, None
    high = 1 - smoothing + smoothing / classes
    low = smoothing / classes
    per_element = -(high * math.log(high) + (classes - 1) * low * math.log(low))
    reason = f"label smoothing {smoothing:g}"
    if reduction != "sum":
        return torch.tensor(per_element, device=inp.device), reason
    mask = _ignore_mask(target, bound.get("ignore_index", -100))
    count = mask.float().sum() if mask is not None else torch.tensor(float(target.numel()))
    return (count.to(inp.device) * per_element).reshape(()), reason
