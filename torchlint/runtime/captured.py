"""What the launcher's hooks record about a run: the objects it found, the events it saw, and the
findings it made. Plain data; the hooks live in `capture`, the loss checks in `loss_checks`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch
from torch import nn
from torch.utils.data import DataLoader

from torchlint.runtime.results import finite_or_none
from torchlint.runtime.sites import Site


class StopRun(BaseException):
    """Ends the user's script: enough steps ran, or a check already failed for a reason that
    would make further steps meaningless (`reason` says which)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass
class Finding:
    """A runtime diagnostic before it is serialised: code, kebab-case name, severity, message,
    the user's line, and the evidence behind it."""

    code: str
    name: str
    severity: str
    message: str
    site: Site | None
    evidence: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "name": self.name,
            "severity": self.severity,
            "message": self.message,
            "filename": self.site.filename if self.site else None,
            "line": self.site.line if self.site else None,
            "evidence": self.evidence,
        }


@dataclass(eq=False)
class RootInfo:
    module: nn.Module
    forward_site: Site | None
    forwards: int = 0


@dataclass(eq=False)
class OptimizerInfo:
    optimizer: torch.optim.Optimizer
    site: Site | None
    step_site: Site | None = None
    steps: int = 0
    #: learning rate of each param group when the first step ran (before any scheduler moved it)
    first_lrs: list[float | None] | None = None


@dataclass(eq=False)
class LoaderInfo:
    loader: DataLoader[Any]
    site: Site | None
    iter_site: Site | None = None
    batches: int = 0
    role: str = "other"
    cached: Any = None  # a copy of the latest batch, until the training loader is known
    batch_size_seen: int | None = None  # dim 0 of the first tensor of the first batch


@dataclass(eq=False)
class ForwardEvent:
    root: RootInfo
    training: bool
    grad_enabled: bool
    loader: LoaderInfo | None
    site: Site | None
    backward_followed: bool = False


@dataclass(eq=False)
class LossCall:
    function: str
    site: Site | None
    phase: str  # "first" or "final"
    input_shape: list[int] | None
    target_shape: list[int] | None
    num_classes: int | None
    reduction: str | None
    value: torch.Tensor | None = None
    accuracy: torch.Tensor | None = None


def mode_dependent_layers(module: nn.Module) -> list[str]:
    """Names of the layers that behave differently in train and eval mode."""
    kinds = (
        nn.modules.dropout._DropoutNd,
        nn.modules.batchnorm._BatchNorm,
        nn.modules.instancenorm._InstanceNorm,
    )
    found: list[str] = []
    for name, sub in module.named_modules():
        if isinstance(sub, nn.modules.instancenorm._InstanceNorm) and not (sub.track_running_stats):
            continue
        if isinstance(sub, kinds):
            found.append(name or type(sub).__name__)
    return found


def learning_rates(optimizer: torch.optim.Optimizer) -> list[float | None]:
    """The learning rate of each param group (None where it is not a finite number)."""
    values: list[float | None] = []
    for group in optimizer.param_groups:
        lr = group.get("lr")
        if isinstance(lr, torch.Tensor):
            lr = float(lr)
        values.append(finite_or_none(lr) if isinstance(lr, (int, float)) else None)
    return values


def loader_settings(loader: Any) -> dict[str, Any]:
    """The settings of a DataLoader that matter for speed and correctness."""
    prefetch = getattr(loader, "prefetch_factor", None)
    size = getattr(loader, "batch_size", None)
    return {
        "batch_size": size if isinstance(size, int) else None,
        "num_workers": int(getattr(loader, "num_workers", 0) or 0),
        "pin_memory": bool(getattr(loader, "pin_memory", False)),
        "persistent_workers": bool(getattr(loader, "persistent_workers", False)),
        "prefetch_factor": prefetch if isinstance(prefetch, int) else None,
        "drop_last": bool(getattr(loader, "drop_last", False)),
    }
