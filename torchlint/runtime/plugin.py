"""Checks that ride on the launcher's capture: `profile`, `fit` and `lr-find`.

`Capture` finds the model, optimizers, loaders, loss and backward on its own (see `capture`);
a `RunPlugin` receives its events in program order and turns them into one check's result.
Every event method is a no-op here, so a plugin overrides only what it needs, and a run without
a plugin pays for none of it.

Events, in the order one training iteration produces them:

    on_loader_iter(loader)                 iter(loader): a new pass (an epoch) begins
    on_fetch_start(loader) / on_fetch_end(loader, batch)
    on_forward_start(root, training, grad) / on_forward_end(root)    root models only
    on_loss(name, value, grad_enabled)     only when `wants_losses` (functional losses patched)
    on_backward_start(loss) / on_backward_end()
    on_step_start(optimizer) / on_step_end(optimizer)     every optimizer; `steps` already
                                                          counts the finished step at the end

Findings: what `result()` returns is reported only when the script completed (a verdict on a
run that crashed would blame the wrong thing); a finding that explains a crash (an anomaly, a
label out of range) is appended to `capture.findings` when it is made, and is always reported.

A plugin stops the script by setting `capture.stop_reason` (the run then ends at the next fetch
from the training loader, or a few steps later at a root forward), or by raising
`captured.StopRun` from an event. `total_steps()` bounds the run in steps of the primary
optimizer (None: the plugin stops it itself); `batch_limit(loader)` ends each pass over a loader
after that many batches (`--limit-batches`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import torch

from torchlint.runtime.captured import Finding, LoaderInfo, OptimizerInfo, RootInfo

if TYPE_CHECKING:
    from torchlint.runtime.assemble import Outcome
    from torchlint.runtime.capture import Capture


@dataclass
class PluginResult:
    """What a plugin contributes to the envelope of a completed run."""

    verdict: str
    summary: str
    payload: dict[str, Any]
    findings: list[Finding] = field(default_factory=list)


class RunPlugin:
    #: the envelope's `check`
    check = ""
    #: patch the functional losses (cross_entropy, mse_loss, ...) to report each value
    wants_losses = False

    def __init__(self, capture: Capture, options: dict[str, Any]) -> None:
        self.capture = capture
        self.options = options

    def total_steps(self) -> int | None:
        return None

    def batch_limit(self, loader: LoaderInfo) -> int | None:
        return None

    def on_loader_iter(self, loader: LoaderInfo) -> None:
        pass

    def on_fetch_start(self, loader: LoaderInfo) -> None:
        pass

    def on_fetch_end(self, loader: LoaderInfo, batch: Any) -> None:
        pass

    def on_forward_start(self, root: RootInfo, training: bool, grad: bool) -> None:
        pass

    def on_forward_end(self, root: RootInfo) -> None:
        pass

    def on_loss(self, name: str, value: torch.Tensor, grad_enabled: bool) -> None:
        pass

    def on_backward_start(self, loss: torch.Tensor) -> None:
        pass

    def on_backward_end(self) -> None:
        pass

    def on_step_start(self, optimizer: OptimizerInfo) -> None:
        pass

    def on_step_end(self, optimizer: OptimizerInfo) -> None:
        pass

    def result(self, outcome: Outcome) -> PluginResult:
        raise NotImplementedError


def make_plugin(check: str, capture: Capture, options: dict[str, Any]) -> RunPlugin | None:
    """The plugin of `check`, or None for the checks `Capture` does itself (overfit, grads)."""
    if check == "profile":
        from torchlint.runtime.profile import ProfilePlugin

        return ProfilePlugin(capture, options)
    if check == "fit":
        from torchlint.runtime.fit import FitPlugin

        return FitPlugin(capture, options)
    if check == "lr-find":
        from torchlint.runtime.lr_find import LrFindPlugin

        return LrFindPlugin(capture, options)
    return None
