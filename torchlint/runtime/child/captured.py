"""What the launcher's hooks record about a run: the objects it found, the events it saw, and the
findings it made. Plain data; the hooks live in `capture` and its parts (`capture_*`), the loss
checks in `loss_checks`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch
from torch import nn
from torch.utils.data import DataLoader

from torchlint.runtime.codes import lookup
from torchlint.runtime.envelope import finite_or_none, plain_text
from torchlint.runtime.sites import Site


class StopRun(BaseException):
    """Ends the user's script: enough steps ran, or a check already failed for a reason that
    would make further steps meaningless (`reason` says which)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass
class Finding:
    """A runtime diagnostic before it is serialised: its registered code (the name and the
    default severity come from `torchlint.runtime.codes`), what was found, what to do about it,
    the user's line, and the evidence behind it."""

    code: str
    message: str
    site: Site | None
    evidence: dict[str, Any] = field(default_factory=dict)
    #: what to do about it, as its own sentence(s)
    advice: str = ""
    #: "" for the registry's severity
    severity: str = ""
    name: str = field(init=False)

    def __post_init__(self) -> None:
        registered = lookup(self.code)
        self.name = registered.name
        self.severity = self.severity or registered.severity

    def to_json(self) -> dict[str, Any]:
        """`message` is the whole text (what was found, then the advice) for readers that show
        one string; `advice` is the advice alone."""
        text = plain_text(self.message)
        if self.advice and self.advice not in text:
            text = f"{text.rstrip()} {self.advice}"
        return {
            "code": self.code,
            "name": self.name,
            "severity": self.severity,
            "message": text,
            "advice": self.advice or None,
            "filename": self.site.filename if self.site else None,
            "line": self.site.line if self.site else None,
            "evidence": self.evidence,
        }


@dataclass(eq=False)
class RootInfo:
    module: nn.Module
    forward_site: Site | None
    forwards: int = 0


def root_names(roots: list[RootInfo]) -> list[str]:
    """What each root model is called in a list of parameters of several: its class name, with
    its position among the roots of that class when two share it (a generator and a
    discriminator that are both `Sequential`)."""
    classes = [type(r.module).__name__ for r in roots]
    seen: dict[str, int] = {}
    names = []
    for cls in classes:
        index = seen.get(cls, 0)
        seen[cls] = index + 1
        names.append(f"{cls}[{index}]" if classes.count(cls) > 1 else cls)
    return names


@dataclass(eq=False)
class OptimizerInfo:
    """A torch.optim optimizer of the script, or (with `manual` set) the script's own update of
    its parameters, counted like one."""

    optimizer: Any
    site: Site | None
    step_site: Site | None = None
    steps: int = 0
    #: learning rate of each param group when the first step ran (after any scheduler or
    #: warm-up set it for that step)
    first_lrs: list[float | None] | None = None
    #: learning rate of each param group as the optimizer was constructed (the configured one)
    configured_lrs: list[float | None] | None = None
    #: the manual update this stands for (None: a torch.optim optimizer)
    manual: Any = None
    manual_params: list[torch.nn.Parameter] = field(default_factory=list)
    #: whether its last step got a closure (LBFGS)
    closure: bool = False
    #: the losses of the backward calls since its last step that reached its parameters
    pending: list[tuple[torch.Tensor | None, Any]] = field(default_factory=list)
    #: per step, its loss (detached, on the device; None when a backward had no scalar loss)
    step_losses: list[torch.Tensor | None] = field(default_factory=list)
    #: per step, the backward calls that made its gradient
    step_backwards: list[int] = field(default_factory=list)
    #: ids of the trainable parameters in no optimizer that the backward calls it stepped on
    #: reached (with several optimizers): the parameters its loss trains but it does not hold
    orphans_trained: set[int] = field(default_factory=set)
    _probe: torch.nn.Parameter | None = None

    @property
    def name(self) -> str:
        return type(self.optimizer).__name__ if self.manual is None else "manual update"

    def parameters(self) -> list[torch.nn.Parameter]:
        if self.manual is not None:
            return list(self.manual_params)
        return [p for group in self.optimizer.param_groups for p in group["params"]]

    def cleared(self) -> bool:
        """Whether its gradients were cleared (set to None) since a backward last reached it:
        one parameter that had a gradient then is watched."""
        probe = self._probe
        if probe is None:
            probe = next((p for p in self.parameters() if p.grad is not None), None)
            if probe is None:
                return True
            self._probe = probe
            return False
        return probe.grad is None


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
