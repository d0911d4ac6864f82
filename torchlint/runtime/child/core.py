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
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from torchlint.runtime.results import (
    DepthVerdict,
    Environment,
    GradFinding,
    GradScanResult,
    OverfitResult,
    OverfitVerdict,
    ParamGrad,
)

LossFn = Callable[[Any, Any], torch.Tensor]
BatchFn = Callable[[nn.Module, Any], Any]

#: overfit passes when min(last FINAL_WINDOW losses) <= TARGET_RATIO * initial loss ...
TARGET_RATIO = 0.1
FINAL_WINDOW = 5
#: ... or when that loss is at most ABSOLUTE_FLOOR (a loss that starts tiny cannot fall 10x
#: in a meaningful way).
ABSOLUTE_FLOOR = 1e-4
#: grad_scan depth verdict thresholds on (mean ratio of the first third) / (of the last third).
VANISHING_BELOW = 1e-3
EXPLODING_ABOVE = 1e3
#: with layer depths known (the runtime check), the depth verdict needs this many distinct
#: depths: three layers per branch (PPO's actor and critic) are no deep stack
MIN_DEPTH_LEVELS = 6
#: how many parameter names `largest` / `smallest` list.
TOP_K = 3


# --------------------------------------------------------------------------------------------
# batches


def map_tensors(batch: Any, fn: Callable[[torch.Tensor], torch.Tensor]) -> Any:
    """Apply `fn` to every tensor in a nested tuple/list/dict batch, rebuilding the containers."""
    if isinstance(batch, torch.Tensor):
        return fn(batch)
    if isinstance(batch, dict):
        return type(batch)((k, map_tensors(v, fn)) for k, v in batch.items())
    if isinstance(batch, tuple) and hasattr(batch, "_fields"):  # namedtuple
        return type(batch)(*(map_tensors(v, fn) for v in batch))
    if isinstance(batch, (list, tuple)):
        return type(batch)(map_tensors(v, fn) for v in batch)
    return batch


def first_tensor(batch: Any) -> torch.Tensor | None:
    if isinstance(batch, torch.Tensor):
        return batch
    values: Iterable[Any] = ()
    if isinstance(batch, dict):
        values = batch.values()
    elif isinstance(batch, (list, tuple)):
        values = batch
    for value in values:
        found = first_tensor(value)
        if found is not None:
            return found
    return None


def _prepare(batch: Any, device: torch.device | None) -> Any:
    """Detach and copy a batch (onto `device` when given), so later steps cannot see the
    loader's tensors or any in-place change a step makes to them."""

    def copy_tensor(t: torch.Tensor) -> torch.Tensor:
        t = t.detach()
        return t.to(device).clone() if device is not None else t.clone()

    return map_tensors(batch, copy_tensor)


@dataclass
class _Step:
    loss: torch.Tensor
    outputs: Any = None
    targets: Any = None


def _run_batch(
    model: nn.Module, batch: Any, loss_fn: LossFn | None, batch_fn: BatchFn | None
) -> _Step:
    if batch_fn is not None:
        out = batch_fn(model, batch)
        if isinstance(out, tuple) and len(out) == 3:
            return _Step(out[0], out[1], out[2])
        if not isinstance(out, torch.Tensor):
            raise TypeError(
                "batch_fn must return the loss tensor or a (loss, outputs, targets) tuple, "
                f"got {type(out).__name__}"
            )
        return _Step(out)
    if loss_fn is None:
        raise ValueError("pass loss_fn, or batch_fn(model, batch) -> loss")
    if isinstance(batch, (tuple, list)) and len(batch) == 2:
        inputs, targets = batch
        outputs = model(inputs)
        return _Step(loss_fn(outputs, targets), outputs, targets)
    raise TypeError(
        f"a {type(batch).__name__} batch is not an (inputs, targets) pair; "
        "pass batch_fn(model, batch) -> loss to say how to run it"
    )


# --------------------------------------------------------------------------------------------
# state


def _model_device(model: nn.Module) -> torch.device | None:
    for param in model.parameters():
        return param.device
    for buffer in model.buffers():
        return buffer.device
    return None


class _Snapshot:
    """Deep copies of everything a few training steps change, put back by `restore()`."""

    def __init__(self, model: nn.Module, optimizer: torch.optim.Optimizer) -> None:
        self.model = model
        self.optimizer = optimizer
        self.device = _model_device(model)
        self.model_state = copy.deepcopy(model.state_dict())
        self.optimizer_state = copy.deepcopy(optimizer.state_dict())
        self.modes = [(m, m.training) for m in model.modules()]
        params = list(model.parameters())
        params_ids = {id(p) for p in params}
        for group in optimizer.param_groups:
            params.extend(p for p in group["params"] if id(p) not in params_ids)
        self.params = [
            (p, p.requires_grad, None if p.grad is None else p.grad.detach().clone())
            for p in params
        ]

    def restore(self) -> None:
        if self.device is not None:
            self.model.to(self.device)
        self.model.load_state_dict(self.model_state)
        for module, training in self.modes:
            module.training = training
        with torch.no_grad():
            for param, requires_grad, grad in self.params:
                param.requires_grad_(requires_grad)
                param.grad = None if grad is None else grad.to(param.device)
        self.optimizer.load_state_dict(self.optimizer_state)


def _environment(model: nn.Module, batch: Any) -> Environment:
    param = next(
        (p for p in model.parameters() if p.is_floating_point()),
        next(iter(model.parameters()), None),
    )
    first = first_tensor(batch)
    batch_size = int(first.shape[0]) if first is not None and first.dim() > 0 else None
    return Environment(
        torch=str(torch.__version__),
        device=str(param.device) if param is not None else "n/a",
        dtype=str(param.dtype).removeprefix("torch.") if param is not None else "n/a",
        batch_size=batch_size,
        model_mode="train" if model.training else "eval",
    )


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


def by_depth(pairs: list[tuple[int | None, float]]) -> list[float]:
    """Per layer depth, deepest first, the mean of the values at that depth."""
    levels: dict[int, list[float]] = {}
    for depth, value in pairs:
        if depth is not None:
            levels.setdefault(depth, []).append(value)
    return [sum(levels[d]) / len(levels[d]) for d in sorted(levels, reverse=True)]


def layer_depths(loss: torch.Tensor) -> dict[int, int]:
    """id(parameter) -> how many layers lie between it and the loss in the autograd graph: 0
    for the layer that produced the loss's input, one more for each operation with parameters
    on the way back (views, activations and the loss's own arithmetic are free). A layer's depth
    is that of the longest way back to it, so a residual stack (`x = x + block(x)`) counts its
    blocks one by one instead of reaching every block in one step through the skip path;
    parallel branches get the same depths. A parameter used in several places (tied weights)
    gets the smallest of its depths."""
    root = loss.grad_fn
    if root is None:
        return {}
    # the reachable graph: each node's children, whether it runs a layer, how many parents
    children: dict[int, list[Any]] = {}
    holders: dict[int, list[Any]] = {}
    parents: dict[int, int] = {id(root): 0}
    nodes: dict[int, Any] = {id(root): root}  # keeps the wrappers alive: their ids stay unique
    todo = [root]
    while todo:
        node = todo.pop()
        kids = [c for c, _ in getattr(node, "next_functions", ()) if c is not None]
        held = [c for c in kids if _parameter_leaf(c) is not None]
        held += [c for c in kids if c not in held and _holds_only_parameters(c)]
        holders[id(node)] = held
        children[id(node)] = [c for c in kids if c not in held]
        for child in children[id(node)]:
            key = id(child)
            parents[key] = parents.get(key, 0) + 1
            if key not in nodes:
                nodes[key] = child
                todo.append(child)
    # longest path from the loss, in topological order (the graph has no cycles)
    depth = {id(root): 0}
    found: dict[int, int] = {}
    ready = [root]
    while ready:
        node = ready.pop()
        here = depth[id(node)]
        held = holders[id(node)]
        for child in held:
            for leaf in [child, *(g for g, _ in getattr(child, "next_functions", ()))]:
                param = _parameter_leaf(leaf) if leaf is not None else None
                if param is not None:
                    found[id(param)] = min(here, found.get(id(param), here))
        below = here + (1 if held else 0)
        for child in children[id(node)]:
            key = id(child)
            depth[key] = max(below, depth.get(key, below))
            parents[key] -= 1
            if parents[key] == 0:
                ready.append(child)
    return found


def _parameter_leaf(node: Any) -> nn.Parameter | None:
    variable = getattr(node, "variable", None)
    return variable if isinstance(variable, nn.Parameter) else None


def _holds_only_parameters(node: Any) -> bool:
    """A transpose or view of parameters only (the weight of a Linear layer under `mm`)."""
    children = [child for child, _ in getattr(node, "next_functions", ()) if child is not None]
    return bool(children) and all(_parameter_leaf(c) is not None for c in children)


def summarise_grads(
    environment: Environment,
    steps: int,
    names: list[str],
    params: list[nn.Parameter],
    optimizer_ids: set[int],
    foreign: int,
    losses: list[torch.Tensor],
    grad_rows: list[torch.Tensor],
    weight_rows: list[torch.Tensor],
    present_rows: list[torch.Tensor],
    loss_differentiable: bool,
    depths: list[int | None] | None = None,
) -> GradScanResult:
    """The scan's summary. `depths`, when given, is each parameter's layer depth from the loss
    (`layer_depths`): the depth verdict then compares the deepest third of the depths with the
    shallowest third, averaging parallel branches at one depth instead of comparing them;
    without it, the first third of the parameters in registration order with the last."""
    count = len(params)
    # the one host transfer of the scan: (K, P) grad norms, weight norms, and K losses
    grads = torch.stack(grad_rows).cpu() if grad_rows else torch.zeros(0, count)
    weights = torch.stack(weight_rows).cpu() if weight_rows else torch.zeros(0, count)
    loss_values: list[float] = torch.stack(losses).cpu().tolist() if losses else []
    present = torch.stack(present_rows) if present_rows else torch.zeros(0, count, dtype=torch.bool)
    grad_list: list[list[float]] = grads.tolist()
    present_list: list[list[bool]] = present.tolist()
    weight0: list[float] = weights[0].tolist() if len(weight_rows) else [math.nan] * count
    with torch.no_grad():
        ratios = torch.where(weights > 0, grads / weights, torch.full_like(grads, math.nan))
        mean_ratio = (
            torch.nanmean(ratios, dim=0) if len(grad_rows) else torch.full((count,), math.nan)
        )
        mean_grad = (
            torch.nanmean(grads, dim=0) if len(grad_rows) else torch.full((count,), math.nan)
        )
    ratio_list: list[float] = mean_ratio.tolist()
    mean_grad_list: list[float] = mean_grad.tolist()
    # a parameter whose optimizer did not step within the scan (a GAN's generator while its
    # discriminator takes its first steps) was never looked at: no finding either way
    scanned: list[bool] = (
        (~torch.isnan(weights)).any(dim=0).tolist() if len(weight_rows) else [False] * count
    )

    findings: list[GradFinding] = []
    rows: list[ParamGrad] = []
    never: list[str] = []
    zero: list[str] = []
    frozen: list[str] = []
    missing: list[str] = []
    first_nonfinite: tuple[int, str] | None = None
    nonfinite: list[str] = []
    for j, (name, param) in enumerate(zip(names, params, strict=True)):
        per_step: list[float | None] = [
            grad_list[k][j] if present_list[k][j] else None for k in range(len(grad_list))
        ]
        had = [v for v in per_step if v is not None]
        in_opt = id(param) in optimizer_ids
        status = "ok"
        if not param.requires_grad:
            status = "frozen"
            frozen.append(name)
        elif not had and not scanned[j] and id(param) in optimizer_ids:
            status = "not_scanned"
        elif not had:
            status = "none"
            never.append(name)
        elif any(not math.isfinite(v) for v in had):
            status = "nonfinite"
            nonfinite.append(name)
            k = next(k for k, v in enumerate(per_step) if v is not None and not math.isfinite(v))
            if first_nonfinite is None or k < first_nonfinite[0]:
                first_nonfinite = (k, name)
        elif all(v == 0 for v in had):
            status = "zero"
            zero.append(name)
        if param.requires_grad and not in_opt:
            missing.append(name)
            if status == "ok":
                status = "not_in_optimizer"
        rows.append(
            ParamGrad(
                name=name,
                shape=list(param.shape),
                numel=param.numel(),
                requires_grad=param.requires_grad,
                in_optimizer=in_opt,
                grad_norm=per_step,
                weight_norm=weight0[j],
                ratio=ratio_list[j] if had else None,
                status=status,
            )
        )

    if not loss_differentiable:
        findings.append(
            GradFinding(
                "loss_not_differentiable",
                "error",
                "the loss does not require grad (computed from detached tensors or under "
                "no_grad), so backward was skipped and no parameter can learn",
            )
        )
    if never:
        findings.append(
            GradFinding(
                "never_gradient",
                "error",
                f"{len(never)} trainable parameter(s) never got a gradient (grad is None after "
                "backward): they are not connected to the loss (detached, unused, or a "
                "no_grad/.data path)",
                never,
            )
        )
    if zero:
        findings.append(
            GradFinding(
                "zero_gradient",
                "warning",
                f"{len(zero)} parameter(s) got an all-zero gradient at every step",
                zero,
            )
        )
    if first_nonfinite is not None:
        step, name = first_nonfinite
        findings.append(
            GradFinding(
                "nonfinite_gradient",
                "error",
                f"non-finite gradient first at step {step} in {name}",
                nonfinite,
                step,
            )
        )
    if frozen:
        findings.append(
            GradFinding(
                "frozen",
                "info",
                f"{len(frozen)} parameter(s) are frozen (requires_grad=False)",
                frozen,
            )
        )
    if missing:
        findings.append(
            GradFinding(
                "not_in_optimizer",
                "error",
                f"{len(missing)} trainable parameter(s) are in no optimizer param group: "
                "they get gradients but never change",
                missing,
            )
        )
    if foreign:
        findings.append(
            GradFinding(
                "optimizer_params_not_in_model",
                "warning",
                f"the optimizer holds {foreign} tensor(s) that are not parameters of this model",
            )
        )

    ranked = [
        (mean_grad_list[j], names[j])
        for j in range(count)
        if rows[j].status in ("ok", "not_in_optimizer", "zero")
    ]
    ranked.sort()
    largest = [name for _, name in reversed(ranked[-TOP_K:])]
    smallest = [name for _, name in ranked[:TOP_K]]

    depth_verdict: DepthVerdict = "insufficient"
    first_ratio: float | None = None
    last_ratio: float | None = None
    usable_at = [
        j
        for j in range(count)
        if rows[j].status in ("ok", "not_in_optimizer", "zero")
        and math.isfinite(ratio_list[j])
        and weight0[j] > 0
    ]
    usable = [ratio_list[j] for j in usable_at]
    if depths is not None:
        usable = by_depth([(depths[j], ratio_list[j]) for j in usable_at])
    if len(usable) >= (3 if depths is None else MIN_DEPTH_LEVELS):
        third = len(usable) // 3
        first_ratio = sum(usable[:third]) / third
        last_ratio = sum(usable[-third:]) / third
        if last_ratio > 0 and first_ratio / last_ratio < VANISHING_BELOW:
            depth_verdict = "vanishing"
        elif last_ratio > 0 and first_ratio / last_ratio > EXPLODING_ABOVE:
            depth_verdict = "exploding"
        else:
            depth_verdict = "ok"
        if depth_verdict != "ok":
            findings.append(
                GradFinding(
                    depth_verdict,
                    "warning",
                    f"{depth_verdict} gradients by depth: mean grad/weight ratio "
                    f"{first_ratio:.3g} in the first third of "
                    + (
                        f"parameters vs {last_ratio:.3g} in the last third"
                        if depths is None
                        else f"the {len(usable)} layer depths (farthest from the loss) vs "
                        f"{last_ratio:.3g} in the third nearest the loss"
                    ),
                )
            )

    global_norm = torch.sqrt(torch.nansum(grads.to(torch.float64) ** 2, dim=1)).tolist()
    nonfinite_steps = {
        k
        for k in range(len(grad_list))
        if any(present_list[k][j] and not math.isfinite(grad_list[k][j]) for j in range(count))
    }
    global_list: list[float | None] = [
        None if k in nonfinite_steps else v for k, v in enumerate(global_norm)
    ]
    problems = any(f.severity in ("error", "warning") for f in findings)
    return GradScanResult(
        verdict="problems" if problems else "healthy",
        environment=environment,
        steps_requested=steps,
        steps_run=len(grad_rows),
        losses=list(loss_values),
        global_grad_norm=global_list,
        params=rows,
        findings=findings,
        largest=largest,
        smallest=smallest,
        depth_verdict=depth_verdict,
        depth_first_ratio=first_ratio,
        depth_last_ratio=last_ratio,
        vanishing_below=VANISHING_BELOW,
        exploding_above=EXPLODING_ABOVE,
    )
