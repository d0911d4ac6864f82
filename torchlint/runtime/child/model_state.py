"""The model's state around the explicit checks: a snapshot put back afterwards, its environment."""

from __future__ import annotations

import copy
from typing import Any

import torch
from torch import nn

from torchlint.runtime.child.batches import first_tensor
from torchlint.runtime.results import Environment


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
