"""The explicit runtime checks: `overfit_one_batch` and `grad_scan`.

Both take the user's own model, loader, loss function and optimizer, run a few real training
steps, and put everything back afterwards (parameters, buffers, gradients, optimizer state,
train/eval modes, `requires_grad` flags, and the model's device when `device` moved it), even when
a step raises. Usable from a user's pytest suite::

    result = overfit_one_batch(model, loader, nn.CrossEntropyLoss(), optimizer, steps=100)
    assert result.verdict == "pass", result.summary

Batches: a `(inputs, targets)` tuple or list is run as `loss_fn(model(inputs), targets)`. Anything
else (dicts, multi-input models) needs `batch_fn(model, batch)`, which returns the loss tensor, or
`(loss, outputs, targets)` to also get the initial-loss and accuracy checks.

Their parts: the batches (batches.py), the state put back (model_state.py), the scan's summary
(grad_summary.py).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from typing import Any

import torch
from torch import nn

from torchlint.runtime.child.batches import BatchFn, LossFn, _prepare, _run_batch

# the batches' helpers, imported from here by capture.py (map_tensors used here too)
from torchlint.runtime.child.batches import first_tensor as first_tensor
from torchlint.runtime.child.batches import map_tensors as map_tensors
from torchlint.runtime.child.grad_summary import summarise_grads
from torchlint.runtime.child.model_state import _environment, _model_device, _Snapshot
from torchlint.runtime.results import Environment, GradScanResult, OverfitResult, OverfitVerdict

#: overfit passes when min(last FINAL_WINDOW losses) <= TARGET_RATIO * initial loss ...
TARGET_RATIO = 0.1
FINAL_WINDOW = 5
#: ... or when that loss is at most ABSOLUTE_FLOOR (a loss that starts tiny cannot fall 10x
#: in a meaningful way).
ABSOLUTE_FLOOR = 1e-4


# --------------------------------------------------------------------------------------------
# overfit_one_batch


def _is_cross_entropy(loss_fn: Any) -> bool:
    if isinstance(loss_fn, nn.CrossEntropyLoss):
        return loss_fn.reduction == "mean"
    return loss_fn is torch.nn.functional.cross_entropy


def _expected_initial_loss(
    loss_fn: Any, outputs: Any, targets: Any
) -> tuple[float | None, str | None, int | None]:
    """(expected loss, why, number of classes) for a model that predicts uniformly."""
    if not isinstance(outputs, torch.Tensor) or outputs.dim() != 2 or outputs.shape[1] < 2:
        return None, None, None
    classes = int(outputs.shape[1])
    if _is_cross_entropy(loss_fn):
        return math.log(classes), f"log C for cross-entropy over C={classes} classes", classes
    if isinstance(targets, torch.Tensor) and targets.dim() == 1 and not targets.is_floating_point():
        return None, None, classes
    return None, None, None


def _accuracy(outputs: Any, targets: Any) -> float | None:
    """Top-1 accuracy for (N, C) logits against (N,) integer class targets."""
    if not isinstance(outputs, torch.Tensor) or not isinstance(targets, torch.Tensor):
        return None
    if outputs.dim() != 2 or outputs.shape[1] < 2 or targets.dim() != 1:
        return None
    if targets.is_floating_point() or targets.shape[0] != outputs.shape[0]:
        return None
    correct = outputs.detach().argmax(dim=1) == targets.to(outputs.device)
    return float(correct.float().mean())


def overfit_verdict(
    curve: list[float | None], nan_step: int | None, target_ratio: float = TARGET_RATIO
) -> tuple[OverfitVerdict, float | None, float | None, float | None]:
    """(verdict, initial loss, final loss, ratio) of an overfit loss curve, by the criterion in
    `overfit_one_batch`'s docstring; shared with the zero-config launcher."""
    initial = curve[0] if curve and curve[0] is not None else None
    window = [v for v in curve[-FINAL_WINDOW:] if v is not None]
    final = min(window) if window and nan_step is None else None
    ratio = final / initial if final is not None and initial is not None and initial > 0 else None
    verdict: OverfitVerdict
    if nan_step is not None:
        verdict = "nan"
    elif final is not None and (
        (ratio is not None and ratio <= target_ratio) or final <= ABSOLUTE_FLOOR
    ):
        verdict = "pass"
    else:
        verdict = "fail"
    return verdict, initial, final, ratio


def overfit_one_batch(
    model: nn.Module,
    loader: Iterable[Any],
    loss_fn: LossFn | None,
    optimizer: torch.optim.Optimizer,
    *,
    steps: int = 200,
    device: torch.device | str | None = None,
    batch_fn: BatchFn | None = None,
    target_ratio: float = TARGET_RATIO,
) -> OverfitResult:
    """Train on the first batch of `loader` for `steps` optimizer steps and report whether the
    loss falls to a small fraction of its start.

    Criterion: `final_loss` = min of the last `FINAL_WINDOW` (5) step losses; `pass` when
    `final_loss / initial_loss <= target_ratio` (default 0.1, i.e. a 10x drop) or
    `final_loss <= ABSOLUTE_FLOOR` (1e-4); `nan` (stopping at once) when a loss is not finite,
    with that step; `fail` otherwise. The model keeps the train/eval mode it was given (dropout
    stays on in train mode). Each step trains on a fresh copy of the same batch. Model and
    optimizer state are restored afterwards.
    """
    if steps < 1:
        raise ValueError("steps must be at least 1")
    dev = torch.device(device) if device is not None else None
    iterator = iter(loader)
    try:
        raw = next(iterator)
    except StopIteration:
        raise ValueError("the loader yielded no batch") from None
    del iterator
    batch0 = _prepare(raw, dev)
    del raw

    snapshot = _Snapshot(model, optimizer)
    try:
        if dev is not None:
            model.to(dev)
        environment = _environment(model, batch0)
        curve: list[float | None] = []
        nan_step: int | None = None
        expected: float | None = None
        reason: str | None = None
        classes: int | None = None
        initial_accuracy: float | None = None
        loss_differentiable = True
        for step in range(steps):
            optimizer.zero_grad(set_to_none=True)
            result = _run_batch(model, map_tensors(batch0, torch.Tensor.clone), loss_fn, batch_fn)
            value = float(result.loss.detach())
            if step == 0:
                expected, reason, classes = _expected_initial_loss(
                    loss_fn if batch_fn is None else None, result.outputs, result.targets
                )
                initial_accuracy = _accuracy(result.outputs, result.targets)
            if not math.isfinite(value):
                curve.append(None)
                nan_step = step
                break
            curve.append(value)
            if result.loss.requires_grad:
                torch.autograd.backward(result.loss)
            else:
                loss_differentiable = False
            optimizer.step()
        optimizer.zero_grad(set_to_none=True)

        final_loss_after: float | None = None
        final_accuracy: float | None = None
        if nan_step is None:
            with torch.no_grad():
                after = _run_batch(
                    model, map_tensors(batch0, torch.Tensor.clone), loss_fn, batch_fn
                )
            final_loss_after = float(after.loss)
            final_accuracy = _accuracy(after.outputs, after.targets)
    finally:
        snapshot.restore()

    verdict, initial, final, ratio = overfit_verdict(curve, nan_step, target_ratio)
    vs_expected = initial / expected if initial is not None and expected else None
    return OverfitResult(
        verdict=verdict,
        environment=environment,
        steps_requested=steps,
        steps_run=len(curve) if nan_step is None else nan_step,
        loss_curve=curve,
        initial_loss=initial,
        final_loss=final,
        final_window=FINAL_WINDOW,
        ratio=ratio,
        target_ratio=target_ratio,
        absolute_floor=ABSOLUTE_FLOOR,
        nan_step=nan_step,
        final_loss_after=final_loss_after,
        expected_initial_loss=expected,
        expected_initial_loss_reason=reason,
        initial_loss_vs_expected=vs_expected,
        initial_accuracy=initial_accuracy,
        final_accuracy=final_accuracy,
        num_classes=classes,
        loss_differentiable=loss_differentiable,
    )


# --------------------------------------------------------------------------------------------
# grad_scan


def foreach_norms(tensors: list[torch.Tensor], device: torch.device) -> torch.Tensor:
    """L2 norms of `tensors` as one float32 vector on `device`, from one `torch._foreach_norm`
    call (no per-tensor norm loop; no host sync, the values are read once at the end)."""
    if not tensors:
        return torch.zeros(0, device=device)
    norms = torch._foreach_norm(tensors)
    return torch.stack([n.to(device=device, dtype=torch.float32) for n in norms])


def grad_scan(
    model: nn.Module,
    loader: Iterable[Any],
    loss_fn: LossFn | None,
    optimizer: torch.optim.Optimizer,
    *,
    steps: int = 3,
    device: torch.device | str | None = None,
    batch_fn: BatchFn | None = None,
) -> GradScanResult:
    """Run `steps` training steps on successive batches of `loader` and scan the gradients.

    After each backward, the L2 norms of all present gradients (and of all parameters) are taken
    with one `torch._foreach_norm` call each; values stay as tensors until the end. Gradients of
    every model parameter are cleared before each step (not only the optimizer's), so a
    parameter outside the optimizer does not accumulate. Fewer steps run if the loader ends
    early. Model and optimizer state are restored afterwards.
    """
    if steps < 1:
        raise ValueError("steps must be at least 1")
    dev = torch.device(device) if device is not None else None
    named = list(model.named_parameters())
    names = [name for name, _ in named]
    params = [p for _, p in named]
    model_ids = {id(p) for p in params}
    optimizer_ids = {id(p) for group in optimizer.param_groups for p in group["params"]}
    foreign = sum(1 for pid in optimizer_ids if pid not in model_ids)
    trainable = [i for i, p in enumerate(params) if p.requires_grad]

    snapshot = _Snapshot(model, optimizer)
    environment: Environment | None = None
    losses: list[torch.Tensor] = []
    grad_rows: list[torch.Tensor] = []  # per step: (P,) grad norms, NaN where no gradient
    weight_rows: list[torch.Tensor] = []  # per step: (P,) weight norms before the update
    present_rows: list[torch.Tensor] = []  # per step: (P,) bool, gradient present
    loss_differentiable = True
    try:
        if dev is not None:
            model.to(dev)
        norm_device = _model_device(model) or torch.device("cpu")
        iterator: Iterator[Any] = iter(loader)
        for _ in range(steps):
            try:
                raw = next(iterator)
            except StopIteration:
                break
            batch = _prepare(raw, dev)
            if environment is None:
                environment = _environment(model, batch)
            optimizer.zero_grad(set_to_none=True)
            model.zero_grad(set_to_none=True)
            result = _run_batch(model, batch, loss_fn, batch_fn)
            if result.loss.requires_grad:
                torch.autograd.backward(result.loss)
            else:
                loss_differentiable = False
            with_grad = [i for i in trainable if params[i].grad is not None]
            grads: list[torch.Tensor] = [g for i in with_grad if (g := params[i].grad) is not None]
            row = torch.full((len(params),), math.nan, device=norm_device)
            if with_grad:
                index = torch.tensor(with_grad, dtype=torch.long, device=norm_device)
                row[index] = foreach_norms(grads, norm_device)
            present = torch.zeros(len(params), dtype=torch.bool)
            present[with_grad] = True
            grad_rows.append(row)
            present_rows.append(present)
            weight_rows.append(foreach_norms([p.detach() for p in params], norm_device))
            losses.append(result.loss.detach().to(device=norm_device, dtype=torch.float32))
            optimizer.step()
        del iterator
        if environment is None:
            raise ValueError("the loader yielded no batch")
    finally:
        snapshot.restore()

    return summarise_grads(
        environment,
        steps,
        names,
        params,
        optimizer_ids,
        foreign,
        losses,
        grad_rows,
        weight_rows,
        present_rows,
        loss_differentiable,
    )
