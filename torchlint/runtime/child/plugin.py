"""Every runtime check is a plugin on the launcher's capture (the registry in
`torchlint.runtime.checks` names each check's plugin).

`Capture` finds the model, optimizers, loaders, loss and backward on its own (see `capture`);
a `RunPlugin` receives its events in program order and turns them into one check's result.
Every event method is a no-op here, so a plugin overrides only what it needs, and pays for
nothing else.

Events, in the order one training iteration produces them:

    on_loader_iter(loader)                 iter(loader): a new pass (an epoch) begins
    on_fetch_start(loader) / on_fetch_end(loader, batch)
    on_forward_start(root, training, grad) / on_forward_end(root)    root models only
    on_loss(value)                         a functional loss's value (`losses.LossValue`), when
                                           `wants_losses` or `replays_batch`
    on_backward_start(loss) / on_backward_end()
    on_step_start(optimizer) / on_step_end(optimizer)     every optimizer (and the script's own
                                                          update, as a "manual" optimizer);
                                                          `steps` already counts the finished
                                                          step at the end
    on_first_backward(loss)                the training step is known (decide early what does
                                           not apply)
    on_manual_update(optimizer)            the script updates its parameters by hand

Findings: what `result()` returns is reported only when the script completed (a verdict on a
run that crashed would blame the wrong thing); a finding that explains a crash (an anomaly, a
label out of range) is appended to `capture.findings` when it is made, and is always reported.

A plugin stops the script with `capture.request_stop(reason)` (the run then ends at the next
fetch from the training loader, or at the first root forward after the next step), or by
raising `captured.StopRun` from an event. `not_applicable(reason, site)` stops it at once with
that verdict. `total_steps()` bounds the run in steps of the primary
optimizer (None: the plugin stops it itself); `batch_limit(loader)` ends each pass over a loader
after that many batches (`--limit-batches`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import torch

from torchlint.runtime.child.captured import Finding, LoaderInfo, OptimizerInfo, RootInfo, StopRun
from torchlint.runtime.sites import Site

if TYPE_CHECKING:
    from torchlint.runtime.child.assemble import Outcome
    from torchlint.runtime.child.capture import Capture
    from torchlint.runtime.child.losses import LossValue

#: the modules of reinforcement-learning environments: a script that loaded one trains on its
#: own rollouts
RL_MODULES = ("gymnasium", "gym", "stable_baselines3", "pettingzoo", "envpool", "torchrl")


@dataclass
class PluginResult:
    """What a plugin contributes to the envelope of a completed run: its verdict, and `reason`:
    the cause of a fail, what would decide an inconclusive result, why a check does not
    apply."""

    verdict: str
    summary: str
    payload: dict[str, Any]
    findings: list[Finding] = field(default_factory=list)
    reason: str | None = None


class RunPlugin:
    #: the envelope's `check`
    check = ""
    #: observe the functional losses (cross_entropy, mse_loss, ...), for `on_loss`
    wants_losses = False
    #: train on one batch: the training loader's first batch, or a loop's first step's
    #: forward inputs and loss targets (with accuracies and loss floors observed)
    replays_batch = False

    def __init__(self, capture: Capture, options: dict[str, Any]) -> None:
        self.capture = capture
        self.options = options
        #: set by `not_applicable`: (why, the line that decides it)
        self.inapplicable: tuple[str, Site | None] | None = None

    def total_steps(self) -> int | None:
        return None

    def batch_limit(self, loader: LoaderInfo) -> int | None:
        return None

    def framework_limits(self) -> dict[str, Any]:
        """How a framework's Trainer should run for this check (`torchlint.integrations`):
        `min_steps` (train at least this many steps, longer than the script's own plan when
        that is shorter), or `epochs` with `limit_train_batches` / `limit_val_batches` (short
        epochs) and `validation` (after each). {}: as the script says."""
        steps = self.total_steps()
        return {"min_steps": steps + 2} if steps is not None else {}

    def not_applicable(self, reason: str, site: Site | None = None) -> None:
        """The check does not apply to this loop: say why and stop the script now."""
        if self.inapplicable is None:
            self.inapplicable = (reason, site)
        self.capture.request_stop("not_applicable")
        raise StopRun("not_applicable")

    def on_install(self) -> None:
        pass

    def on_uninstall(self) -> None:
        pass

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

    def on_loss(self, value: LossValue) -> None:
        pass

    def on_backward_start(self, loss: torch.Tensor) -> None:
        pass

    def on_backward_end(self) -> None:
        pass

    def on_step_start(self, optimizer: OptimizerInfo) -> None:
        pass

    def on_step_end(self, optimizer: OptimizerInfo) -> None:
        pass

    def on_first_backward(self, loss: torch.Tensor) -> None:
        pass

    def on_manual_update(self, optimizer: OptimizerInfo) -> None:
        pass

    def result(self, outcome: Outcome) -> PluginResult:
        raise NotImplementedError

    def inapplicable_result(self) -> PluginResult | None:
        """The result of a check that found it does not apply."""
        if self.inapplicable is None:
            return None
        reason, site = self.inapplicable
        finding = Finding("TLR006", f"{self.check} does not apply: {reason}", site, {})
        return PluginResult(
            "not_applicable", f"{self.check}: not applicable: {reason}", {}, [finding], reason
        )
