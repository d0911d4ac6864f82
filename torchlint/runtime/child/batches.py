"""A batch's tensors: mapped through nested containers, the first found, copied; run as a step."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

LossFn = Callable[[Any, Any], torch.Tensor]
BatchFn = Callable[[nn.Module, Any], Any]


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
