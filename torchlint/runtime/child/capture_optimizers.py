"""The capture's optimizer hooks: the steps, a manual update, and each step's loss."""

from __future__ import annotations

import time
from typing import Any

import torch
from torch import nn

from torchlint.runtime.child.accumulation import PROBE_STEPS
from torchlint.runtime.child.capture_state import CaptureState
from torchlint.runtime.child.captured import Finding, OptimizerInfo, learning_rates
from torchlint.runtime.sites import Site

#: backward losses kept per optimizer (the curves), far above any check's steps
MAX_STEP_LOSSES = 100_000


def _has_closure(args: Any, kwargs: Any) -> bool:
    """Whether `optimizer.step` got a closure; the hooks' `args` start with the optimizer."""
    return len(args) > 1 or bool(kwargs and kwargs.get("closure") is not None)


class OptimizerHooks(CaptureState):
    """The optimizer hooks of `Capture`: construction, step pre/post, manual updates."""

    def _register_optimizer(self, opt: Any, site: Site | None) -> OptimizerInfo:
        info = self._optimizers_by_id.get(id(opt))
        if info is None:
            info = OptimizerInfo(opt, site, configured_lrs=learning_rates(opt))
            self._optimizers_by_id[id(opt)] = info
            self.optimizers.append(info)
            self._reached = {}
        return info

    def _on_step_pre(self, opt: Any, args: Any, kwargs: Any) -> None:
        info = self._optimizers_by_id.get(id(opt)) or self._register_optimizer(opt, None)
        self.in_optimizer_step = True
        self.optimizer_stepped = True
        if self.update_watch.spy is not None:
            self._close_update_gap()
        if self.primary is None or self.primary.manual is not None:
            self.primary = info
        if info.step_site is None:
            info.step_site = self.finder.find()
        if info.first_lrs is None:
            info.first_lrs = learning_rates(info.optimizer)
        has_closure = _has_closure(args, kwargs)
        info.closure = has_closure
        if info is self.primary and not has_closure:
            if info.steps == 0:
                self._check_gradients_reach_model()
            self.probe.before_step(info.steps)
        self.plugin.on_step_start(info)

    def _on_step_post(self, opt: Any, args: Any, kwargs: Any) -> None:
        self.in_optimizer_step = False
        info = self._optimizers_by_id.get(id(opt))
        if info is None:
            return
        has_closure = _has_closure(args, kwargs)
        if info is self.primary and info.steps == 0 and has_closure:
            self._check_gradients_reach_model()
        self._take_step_loss(info)
        info.steps += 1
        self.plugin.on_step_end(info)
        if info is not self.primary:
            return
        step = info.steps
        if step == 1:
            self._switch_to_root_hooks()
            if not has_closure:
                self.probe.attach(self._probe_parameter(info))
        if not has_closure:
            self.probe.after_step(step)
        self._primary_step_done(step)

    def _primary_step_done(self, step: int) -> None:
        self.step_stamps.append(time.perf_counter())
        self._forward_after_step = True
        self._backward_since_step = False
        if self.forward_replay is not None:
            self.forward_replay.start_step()
        if step >= self.target_steps:
            self.request_stop("steps_done")
        self.emit({"event": "step", "step": step, "of": self.target_steps})

    def _manual_step(self) -> None:
        """A manual update ran since the last backward: one step of the manual optimizer."""
        info = self.primary
        if info is None or info.manual is None:
            return
        self.plugin.on_step_start(info)
        self._take_step_loss(info)
        info.steps += 1
        self.plugin.on_step_end(info)
        if info.steps == 1:
            self._switch_to_root_hooks()
        self._primary_step_done(info.steps)

    def _close_update_gap(self) -> None:
        found = self.update_watch.close_gap()
        if found is None or self.optimizer_stepped:
            return
        params = [p for root in self.roots for p in root.module.parameters()]
        info = OptimizerInfo(None, found.site, manual=found, step_site=found.site)
        info.manual_params = params
        self.optimizers.append(info)
        self.primary = info
        self._reached = {}
        self.findings.append(
            Finding(
                "TLR109",
                f"the script updates the parameters itself ({found.operation} on "
                f"{found.tensors} parameter tensor(s) here), without a torch.optim optimizer: "
                "each backward is counted as one step.",
                found.site,
                {"operation": found.operation, "tensors": found.tensors},
            )
        )
        if self.update_watch.changed is False:
            self.findings.append(
                Finding(
                    "TLR108",
                    f"the update here ({found.operation}) left the parameters exactly as they "
                    "were: a learning rate of 0, or an update applied to a copy of the "
                    "parameters instead of the parameters themselves.",
                    found.site,
                    {"operation": found.operation},
                    advice="Check the learning rate the update uses, and that it updates "
                    "`p.data` (or `p` under torch.no_grad()) of the model's own parameters.",
                )
            )
        self.plugin.on_manual_update(info)
        self._manual_step()

    def _take_step_loss(self, info: OptimizerInfo) -> None:
        """The loss of the step `info` just took: the sum of the losses of the backward calls
        that reached its parameters since its gradients were last cleared (the first of them
        for a closure, which calls backward many times on one loss)."""
        pending = info.pending
        values = [loss for loss, _ in pending]
        value: torch.Tensor | None = None
        if values and all(v is not None for v in values):
            if info.closure or len(values) == 1:
                value = values[0]
            else:
                value = torch.stack([v for v in values if v is not None]).sum()
        for _, entry in pending:
            entry.consumed_by.add(id(info))
            info.orphans_trained |= entry.orphans
        if len(info.step_losses) < MAX_STEP_LOSSES:
            info.step_losses.append(value)
            info.step_backwards.append(len(values))
        info.pending = []

    def _probe_parameter(self, info: OptimizerInfo) -> nn.Parameter | None:
        """The smallest trainable parameter of the roots that `info` optimizes (cheap to copy)."""
        owned = {id(p) for p in info.parameters()}
        candidates = [
            p
            for root in self.roots
            for p in root.module.parameters()
            if p.requires_grad and id(p) in owned and p.grad is not None
        ]
        return min(candidates, key=lambda p: p.numel()) if candidates else None

    def _check_gradients_reach_model(self) -> None:
        """At the first step: when no trainable parameter of any root model has a gradient,
        the loss is not connected to the model (a `.detach()` and a `requires_grad_()` that
        silenced the error, or a loss built from `.data`)."""
        trainable = [p for root in self.roots for p in root.module.parameters() if p.requires_grad]
        if trainable and all(p.grad is None for p in trainable):
            self._add_once(
                Finding(
                    "TLR106",
                    f"after the first backward, none of the model's {len(trainable)} trainable "
                    "parameter tensors has a gradient: the loss is not connected to the model "
                    "(detached outputs, `.data`, or a `requires_grad_()` on the loss that "
                    "silenced the error), so nothing can learn.",
                    self.backward_site,
                    {"trainable_parameters": len(trainable)},
                    advice="Compute the loss from the model's output without detaching it.",
                )
            )

    def gradients_accumulate_across_steps(self) -> None:
        primary = self.primary
        self._add_once(
            Finding(
                "TLR107",
                "the gradients are not cleared between optimizer steps: before each step the "
                "gradient holds the previous steps' gradients plus this batch's, so every "
                "update repeats all earlier ones.",
                primary.step_site if primary is not None else self.backward_site,
                {"checked_steps": PROBE_STEPS},
                advice="Call optimizer.zero_grad() once per optimizer step (after step(), or "
                "before the backward of the first micro-batch).",
            )
        )
