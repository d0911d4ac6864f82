"""What the capture's parts share: the state they read, and the methods they call of another."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from torchlint.runtime.child.captured import Finding

if TYPE_CHECKING:
    import weakref

    import torch
    from torch import nn

    from torchlint.runtime.child.accumulation import AccumulationProbe
    from torchlint.runtime.child.captured import ForwardEvent, LoaderInfo, OptimizerInfo, RootInfo
    from torchlint.runtime.child.hidden_hooks import HiddenHooks
    from torchlint.runtime.child.loss_checks import LossSpy
    from torchlint.runtime.child.plugin import RunPlugin
    from torchlint.runtime.child.replay import ForwardReplay
    from torchlint.runtime.child.updates import UpdateWatch
    from torchlint.runtime.sites import Site, SiteFinder

Emit = Callable[[dict[str, Any]], None]


class CaptureState:
    """The base of the capture's parts (`capture_modules.py`, `capture_optimizers.py`,
    `capture_backward.py`, `capture_loaders.py`), joined into `Capture` (capture.py), whose
    `__init__` sets the state declared here; the methods one part calls of another are declared
    here and defined in the module named."""

    target_steps: int
    finder: SiteFinder
    emit: Emit
    roots: list[RootInfo]
    _roots_by_id: dict[int, RootInfo]
    optimizers: list[OptimizerInfo]
    _optimizers_by_id: dict[int, OptimizerInfo]
    primary: OptimizerInfo | None
    loaders: list[LoaderInfo]
    _loaders_by_id: dict[int, LoaderInfo]
    train_loader: LoaderInfo | None
    last_fetch: LoaderInfo | None
    replay: Any
    forwards: list[ForwardEvent]
    findings: list[Finding]
    backward_site: Site | None
    backward_calls: int
    stop_reason: str | None
    loss_differentiable: bool
    autocast: str | None
    step_stamps: list[float]
    hidden: HiddenHooks
    module_sites: weakref.WeakKeyDictionary[nn.Module, Site]
    param_sites: weakref.WeakKeyDictionary[nn.Module, dict[str, Site]]
    spy: LossSpy | None
    update_watch: UpdateWatch
    in_optimizer_step: bool
    optimizer_stepped: bool
    _reached: dict[Site | None, tuple[frozenset[int], frozenset[int]]]
    adversarial: list[tuple[OptimizerInfo, OptimizerInfo]]
    _backward_since_step: bool
    _forward_after_step: bool
    forward_replay: ForwardReplay | None
    plugin: RunPlugin
    probe: AccumulationProbe
    _depth: int
    _global_handles: list[Any]
    _root_handles: list[Any]
    _registration_handles: list[Any]

    def _add_once(self, finding: Finding) -> None:
        if any(f.code == finding.code and f.site == finding.site for f in self.findings):
            return
        self.findings.append(finding)

    # --- what the parts call of each other (each defined in the module named) -----------------

    def request_stop(self, reason: str) -> None:  # capture.py
        raise NotImplementedError

    def freeze_site(self, param: torch.Tensor) -> Site | None:  # capture.py
        raise NotImplementedError

    def _unscaled_loss(self, loss: torch.Tensor) -> torch.Tensor:  # capture.py
        raise NotImplementedError

    def _start_spy(self, phase: str) -> None:  # capture.py
        raise NotImplementedError

    def _stop_spy(self) -> None:  # capture.py
        raise NotImplementedError

    def describe(self) -> str:  # capture.py
        raise NotImplementedError

    def _switch_to_root_hooks(self) -> None:  # capture_modules.py
        raise NotImplementedError

    def _manual_step(self) -> None:  # capture_optimizers.py
        raise NotImplementedError

    def _close_update_gap(self) -> None:  # capture_optimizers.py
        raise NotImplementedError
