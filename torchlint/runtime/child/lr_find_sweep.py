"""lr-find's sweep on the script's loop: the events, each step's lr set and put back, its loss."""

from __future__ import annotations

import math
import sys
from typing import TYPE_CHECKING, Any

import torch

from torchlint.runtime.child.captured import OptimizerInfo
from torchlint.runtime.child.losses import LossValue
from torchlint.runtime.child.lr_find_curve import BETA, diverged, sweep_lr
from torchlint.runtime.child.plugin import RL_MODULES, RunPlugin
from torchlint.runtime.child.thread_clock import thread_cpu_clock
from torchlint.runtime.envelope import finite_or_none

if TYPE_CHECKING:
    from torchlint.runtime.child.capture import Capture

DEFAULT_LR_MIN = 1e-7
DEFAULT_LR_MAX = 10.0
#: the sweep's length when --steps is not given: CPU seconds of the training thread, measured
#: per step over steps 1..AUTO_MEASURE_STEPS (step 0 carries the first-step checks) ...
AUTO_CPU_BUDGET = 30.0
AUTO_MEASURE_STEPS = 6
#: ... within these bounds
AUTO_MIN_STEPS = 100
AUTO_MAX_STEPS = 1000


def _lr_value(value: Any) -> float | None:
    if isinstance(value, torch.Tensor):
        value = float(value.detach().reshape(-1)[0]) if value.numel() else None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return finite_or_none(float(value))
    return None


def _option(options: dict[str, Any], key: str, default: float) -> float:
    value = options.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"lr-find: --{key.replace('_', '-')} must be a number, not {value!r}")
    return float(value)


class LrFindSweep(RunPlugin):
    """The plugin's events: the sweep's length, each step's lr and loss, where it diverged."""

    def __init__(self, capture: Capture, options: dict[str, Any]) -> None:
        super().__init__(capture, options)
        # Capture calls this before it replaces `target_steps` with `total_steps()`: it still
        # holds the requested number of steps
        requested = int(capture.target_steps)
        #: no --steps: the length is chosen from the measured step cost (see the module's doc)
        self.auto = requested <= 0
        self.steps = requested if requested > 0 else AUTO_MIN_STEPS
        self._clock = thread_cpu_clock()
        self._cpu_at_step1: float | None = None
        self._backwards_before_step = 0
        self.lr_min = _option(options, "lr_min", DEFAULT_LR_MIN)
        self.lr_max = _option(options, "lr_max", DEFAULT_LR_MAX)
        if not (math.isfinite(self.lr_min) and self.lr_min > 0):
            raise ValueError(f"lr-find: --lr-min must be positive, not {self.lr_min:g}")
        if not (math.isfinite(self.lr_max) and self.lr_max > self.lr_min):
            raise ValueError(
                f"lr-find: --lr-max ({self.lr_max:g}) must be above --lr-min ({self.lr_min:g})"
            )
        plot = options.get("plot")
        self.plot: str | None = str(plot) if plot else None
        self.lrs: list[float] = []
        #: per step of the sweep: the loss (NaN and infinity kept; None: no backward)
        self.losses: list[float | None] = []
        self._average = 0.0
        self._count = 0
        self.minimum: float | None = None
        self.diverged_at: int | None = None
        self.script_lr: float | None = None
        #: the highest lr the script set for a step of the sweep (a warm-up rising, ...)
        self.seen_lr: float | None = None
        self.unsweepable = False
        self._loss: torch.Tensor | None = None
        self._loss_step = -1
        self._saved: list[tuple[dict[str, Any], float]] = []
        self._criteria = 0

    def total_steps(self) -> int | None:
        return self.steps

    def framework_limits(self) -> dict[str, Any]:
        # a Trainer is configured before the sweep's length is chosen: room for the longest
        # (the sweep ends the run itself when it is done)
        return {"min_steps": (AUTO_MAX_STEPS if self.auto else self.steps) + 2}

    # ----------------------------------------------------------------------------------------
    # events

    def on_first_backward(self, loss: torch.Tensor) -> None:
        rl = next((name for name in RL_MODULES if name in sys.modules), None)
        if rl is not None:
            self.not_applicable(
                f"reinforcement learning ({rl} is loaded): an RL loss does not fall with a "
                "better learning rate the way a supervised loss does, so the sweep's curve "
                "cannot pick one",
                self.capture.backward_site,
            )

    def on_loss(self, value: LossValue) -> None:
        if value.grad_enabled:
            self._criteria += 1

    def on_manual_update(self, optimizer: OptimizerInfo) -> None:
        line = optimizer.site.line if optimizer.site else "?"
        self.not_applicable(
            f"the script updates its parameters itself (line {line}), without a torch.optim "
            "optimizer, so there is no learning rate torchlint can sweep; the lr is a number in "
            "the script's own update",
            optimizer.site,
        )

    def on_backward_start(self, loss: torch.Tensor) -> None:
        primary = self.capture.primary
        step = primary.steps if primary is not None else 0
        if step != self._loss_step:  # the first backward of the step
            self._loss_step = step
            self._loss = loss.detach().float().mean() if loss.numel() else None

    def on_step_start(self, optimizer: OptimizerInfo) -> None:
        if optimizer is self.capture.primary:
            self._backwards_before_step = self.capture.backward_calls
        if optimizer is not self.capture.primary or not self._sweeping(optimizer.steps):
            return
        groups = optimizer.optimizer.param_groups
        if optimizer.steps == 0:
            self.script_lr = self._script_lr(groups, optimizer.configured_lrs or [])
        if self.auto:
            self._choose_length(optimizer.steps)
        lr = sweep_lr(optimizer.steps, self.steps, self.lr_min, self.lr_max)
        self._saved = []
        for group in groups:
            current = group.get("lr")
            value = _lr_value(current)
            if value is None and not isinstance(current, (int, float, torch.Tensor)):
                continue
            self._saved.append((group, value if value is not None else math.nan))
            if isinstance(current, torch.Tensor):
                current.fill_(lr)
            else:
                group["lr"] = lr
        if not self._saved:
            self.unsweepable = True
            return
        self.lrs.append(lr)

    def on_step_end(self, optimizer: OptimizerInfo) -> None:
        capture = self.capture
        if capture.adversarial:
            winner, loser = capture.adversarial[0]
            self.not_applicable(
                f"adversarial training: the loss {winner.name} steps on also runs through the "
                f"parameters of {loser.name}, as in a GAN; such losses do not fall with a good "
                "learning rate, so the sweep cannot pick one",
                winner.site,
            )
        if optimizer is not capture.primary:
            return
        evaluations = capture.backward_calls - self._backwards_before_step
        if optimizer.closure and evaluations > 1:
            # LBFGS; a Lightning Trainer's closure evaluates the loss once, like a plain step
            self.not_applicable(
                f"{optimizer.name} steps with a closure that evaluated the loss {evaluations} "
                "times in one step (a line search), so a per-step sweep of its lr does not "
                "measure what one learning rate does",
                optimizer.site,
            )
        step = optimizer.steps - 1
        if not self._saved:
            return
        for group, saved in self._saved:  # the script's own lr, for its scheduler
            if math.isfinite(saved):
                self.seen_lr = max(self.seen_lr or 0.0, saved)
            current = group.get("lr")
            if isinstance(current, torch.Tensor):
                current.fill_(saved)
            else:
                group["lr"] = saved
        self._saved = []
        if len(self.lrs) != step + 1:
            return
        loss = self._loss if self._loss_step == step else None
        value = float(loss) if loss is not None else None  # the one host read of the step
        self.losses.append(value)
        if value is None:
            return
        if value < 0 and not self._criteria:
            self.not_applicable(
                f"the loss is not a criterion bounded below (it is {value:.4g}, and no loss "
                "function of torch.nn computed it): a larger learning rate lowers it faster "
                "for ever, so the sweep cannot pick one",
                self.capture.backward_site,
            )
        if not math.isfinite(value):
            self._diverge(step)
            return
        self._count += 1
        self._average = BETA * self._average + (1 - BETA) * value
        current = self._average / (1 - BETA**self._count)
        if self.minimum is None or current < self.minimum:
            self.minimum = current
        elif diverged(current, self.minimum):
            self._diverge(step)

    def _choose_length(self, step: int) -> None:
        """At step 1 start the clock; at step AUTO_MEASURE_STEPS fix the sweep's length."""
        if step == 1:
            self._cpu_at_step1 = self._clock()
        elif step == AUTO_MEASURE_STEPS and self._cpu_at_step1 is not None:
            per_step = (self._clock() - self._cpu_at_step1) / (AUTO_MEASURE_STEPS - 1)
            fits = int(AUTO_CPU_BUDGET / per_step) if per_step > 0 else AUTO_MAX_STEPS
            self.steps = min(AUTO_MAX_STEPS, max(AUTO_MIN_STEPS, fits))
            self.capture.target_steps = self.steps
            self.auto = False

    def _sweeping(self, step: int) -> bool:
        return step < self.steps and self.diverged_at is None and len(self.lrs) == step

    def _diverge(self, step: int) -> None:
        self.diverged_at = step
        if self.capture.stop_reason is None:
            self.capture.stop_reason = "diverged"

    @staticmethod
    def _script_lr(groups: list[dict[str, Any]], configured: list[float | None]) -> float | None:
        """The script's configured lr: the largest over its param groups of the lr it was
        constructed with, the lr at the first step, a scheduler's `initial_lr` (a warm-up
        starts below it) and OneCycleLR's `max_lr`."""
        values = [
            v
            for group in groups
            for key in ("lr", "initial_lr", "max_lr")
            if (v := _lr_value(group.get(key))) is not None
        ]
        values += [v for v in configured if v is not None and v > 0]
        return max(values) if values else None
