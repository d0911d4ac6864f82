"""overfit's run of the script: each step's losses read once, the value judged, when to stop."""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import torch

from torchlint.runtime.child.captured import OptimizerInfo
from torchlint.runtime.child.losses import CLASSIFICATION, LossValue
from torchlint.runtime.child.plugin import RL_MODULES, RunPlugin
from torchlint.runtime.child.thread_clock import thread_cpu_clock

if TYPE_CHECKING:
    from torchlint.runtime.child.capture import Capture

#: pass: the reducible loss at most this fraction of where it started ...
TARGET_RATIO = 0.1
#: ... or at most this (a loss that starts tiny cannot fall tenfold in a meaningful way)
ABSOLUTE_FLOOR = 1e-4
#: the judged value is the lowest of the last this many steps
FINAL_WINDOW = 5
#: a classification loss passes only when the batch is predicted this well
ACCURACY_PASS = 0.9
#: CPU seconds of the training thread, by default
DEFAULT_TIME_BUDGET = 90.0
#: the wall-clock hang guard stops training at this share of what is left of --timeout (the
#: rest is for the script to end and the report to be made)
WALL_SHARE = 0.75
#: a plateau: the best value improved less than this (relative) over the last `patience` steps
PLATEAU_IMPROVEMENT = 0.01
PLATEAU_MIN_STEPS = 100
#: the steps whose CPU cost sizes the default time budget (the first one, which warms up, not
#: counted)
SIZING_STEPS = 3
PLATEAU_PATIENCE = 50
#: still falling at the budget: the best value improved this much over the last fifth
STILL_FALLING = 0.05

_LOSS_NAMES = {"cross_entropy": "cross-entropy", "nll_loss": "negative log-likelihood"}


@dataclass
class _Step:
    """What one step of the primary optimizer computed, read to the host once."""

    total: float | None
    components: list[float] = field(default_factory=list)
    accuracy: float | None = None


class OverfitRun(RunPlugin):
    """The plugin's events: the steps it reads, what it judges of them, and when it stops."""

    def __init__(self, capture: Capture, options: dict[str, Any]) -> None:
        super().__init__(capture, options)
        self.budget = max(1, int(capture.requested_steps))
        limit = options.get("timeout")
        budget = options.get("time_budget")
        self.time_budget = float(budget) if isinstance(budget, (int, float)) else None
        self.timeout = float(limit) if isinstance(limit, (int, float)) else None
        self._cpu_clock: Callable[[], float] | None = None
        self._cpu_start = 0.0
        self._wall_deadline: float | None = None
        self._wall_seconds: float | None = None
        self._budget_seconds = (
            self.time_budget if self.time_budget is not None else DEFAULT_TIME_BUDGET
        )
        self._cpu_after_first: float | None = None  # CPU seconds at the end of the first step
        #: the functional losses computed with gradients since the last backward, and those of
        #: each backward since the last step of the primary optimizer
        self._pending: list[LossValue] = []
        self._groups: list[list[LossValue]] = []
        #: the losses of the first step (their floors are the batch's: it does not change)
        self._floors: list[LossValue] = []
        self.steps: list[_Step] = []
        self.stop: str | None = None
        self.nan_step: int | None = None

    def total_steps(self) -> int:
        return self.budget

    # events -----------------------------------------------------------------------------------

    def on_first_backward(self, loss: torch.Tensor) -> None:
        rl = next((name for name in RL_MODULES if name in sys.modules), None)
        if rl is not None:
            self.not_applicable(
                f"reinforcement learning ({rl} is loaded): the loss is computed from the "
                "policy's own actions and returns, so fitting one fixed batch does not test "
                "the loop; `torchlint run grads` and `profile` apply",
                self.capture.backward_site,
            )
        self._cpu_clock = thread_cpu_clock()
        self._cpu_start = self._cpu_clock()
        if self.timeout is not None:
            started = self.options.get("started")
            spent = (
                time.monotonic() - started
                if isinstance(started, (int, float))
                else self.capture.elapsed()
            )
            left = max(1.0, WALL_SHARE * (self.timeout - spent))
            self._wall_seconds = left
            self._wall_deadline = time.monotonic() + left

    def _size_budget(self) -> None:
        """Without `--time-budget`, the budget follows the step's measured cost (once, after
        `SIZING_STEPS` steps past the first): when the default would stop before
        `PLATEAU_MIN_STEPS` steps (a model that takes seconds per step), it grows to fit them,
        as far as the --timeout hang guard leaves room."""
        if self.time_budget is not None or self._cpu_after_first is None:
            return
        per_step = (self.cpu_seconds() - self._cpu_after_first) / SIZING_STEPS
        room = None
        if self._wall_deadline is not None:
            room = self.cpu_seconds() + max(0.0, self._wall_deadline - time.monotonic())
        self._budget_seconds = sized_budget(per_step, self.cpu_seconds(), room)

    def cpu_seconds(self) -> float:
        """CPU time the training thread spent since the first backward."""
        return self._cpu_clock() - self._cpu_start if self._cpu_clock is not None else 0.0

    def on_loss(self, value: LossValue) -> None:
        if value.grad_enabled and self.stop is None:
            self._pending.append(value)

    def on_backward_start(self, loss: torch.Tensor) -> None:
        self._groups.append(self._pending)
        self._pending = []

    def on_step_end(self, optimizer: OptimizerInfo) -> None:
        capture = self.capture
        if optimizer is not capture.primary:
            return
        groups, self._groups = self._groups, []
        values = [v for group in (groups[:1] if optimizer.closure else groups) for v in group]
        if len(self.steps) == 0:
            self._floors = values
            if capture.losses is not None:
                capture.losses.floors = False  # the batch is fixed: its floors do not change
        self._read_step(optimizer, values)
        if capture.adversarial:
            winner, loser = capture.adversarial[0]
            self.not_applicable(
                f"adversarial training: the loss {winner.name} steps on (created at line "
                f"{winner.site.line if winner.site else '?'}) also runs through the parameters "
                f"of {loser.name} (line {loser.site.line if loser.site else '?'}), whose "
                "gradients from it are discarded: as in a GAN, each model's loss depends on the "
                "other, so neither should fall to zero; each curve is reported",
                winner.site,
            )
        self._decide()

    def _read_step(self, optimizer: OptimizerInfo, values: list[LossValue]) -> None:
        """The step's loss, components and accuracy, with one transfer to the host."""
        losses = optimizer.step_losses
        total = losses[-1] if losses else None
        tensors = [v.value for v in values]
        accuracies = [v.accuracy for v in values if v.accuracy is not None]
        parts = [t for t in ([total] if total is not None else []) + tensors + accuracies[:1]]
        numbers = (
            torch.stack([p.float().reshape(()).to(parts[0].device) for p in parts]).tolist()
            if parts
            else []
        )
        at = 0
        step_total: float | None = None
        if total is not None:
            step_total, at = numbers[0], 1
        components = numbers[at : at + len(tensors)]
        accuracy = numbers[at + len(tensors)] if accuracies else None
        self.steps.append(_Step(step_total, components, accuracy))
        if len(self.steps) == 1:
            self._cpu_after_first = self.cpu_seconds()
        elif len(self.steps) == SIZING_STEPS + 1:
            self._size_budget()
        if self.nan_step is None and not all(
            math.isfinite(x) for x in ([step_total] if step_total is not None else []) + components
        ):
            self.nan_step = len(self.steps) - 1

    # deciding -----------------------------------------------------------------------------------

    def judged(self) -> list[float | None]:
        """Per step, the value judged: the sum of the functional losses minus their floors,
        or the loss itself when no functional loss computed it."""
        floors = self.floor_values()
        count = len(floors)
        out: list[float | None] = []
        for step in self.steps:
            if count and len(step.components) >= count:
                out.append(sum(c - f for c, f in zip(step.components[:count], floors, strict=True)))
            else:
                out.append(step.total)
        return out

    def floor_values(self) -> list[float]:
        """The floor of each functional loss of the first step (0 where it has none)."""
        if not self._floors:
            return []
        tensors = [v.floor for v in self._floors if v.floor is not None]
        numbers = (
            iter(torch.stack([t.float().reshape(()).cpu() for t in tensors]).tolist())
            if tensors
            else iter([])
        )
        return [next(numbers) if v.floor is not None else 0.0 for v in self._floors]

    def reference(self, judged: list[float | None]) -> float | None:
        """Where the judged value started: the first step's, or for a lone classification loss
        averaged over its targets the loss of a uniform prediction when that is lower (a
        confidently wrong initial layer must not make a pass easy)."""
        first = judged[0] if judged else None
        if first is None:
            return None
        uniform = self.uniform_loss()
        if uniform is not None and len(self._floors) == 1:
            floor = self.floor_values()[0]
            return min(first, uniform - floor) if uniform - floor > 0 else first
        return first

    def uniform_loss(self) -> float | None:
        """log C, for a lone mean-reduced classification loss over C classes."""
        if len(self._floors) != 1:
            return None
        value = self._floors[0]
        classes = self._classes(value)
        if value.name in CLASSIFICATION and value.reduction == "mean" and classes and classes > 1:
            return math.log(classes)
        return None

    def _classes(self, value: LossValue) -> int | None:
        call = next((c for c in self.capture.loss_calls if c.function == value.name), None)
        return call.num_classes if call is not None else None

    def converged(self, judged: list[float | None]) -> bool:
        window = [v for v in judged[-FINAL_WINDOW:] if v is not None]
        reference = self.reference(judged)
        if not window or reference is None:
            return False
        final = min(window)
        fell = final <= ABSOLUTE_FLOOR or (reference > 0 and final <= TARGET_RATIO * reference)
        return fell and self.accuracy_ok()

    def accuracy_ok(self) -> bool:
        accuracy = self.steps[-1].accuracy if self.steps else None
        return accuracy is None or accuracy >= ACCURACY_PASS

    def _decide(self) -> None:
        capture = self.capture
        judged = self.judged()
        steps = len(self.steps)
        if self.nan_step is not None:
            self._stop("nan")
        elif self._unbounded():
            self.not_applicable(
                "the loss is not a criterion bounded below: it went negative "
                f"({self._lowest():.4g}) and no loss function of torch.nn computed it, so "
                "'falls to a tenth of its start' says nothing about learning",
                capture.backward_site,
            )
        elif self.converged(judged):
            self._stop("converged")
        elif self._plateaued(judged):
            self._stop("plateau")
        elif steps >= self.budget:
            self._stop("step_budget")
        elif self.cpu_seconds() > self._budget_seconds:
            self._stop("time_budget")
        elif self._wall_deadline is not None and time.monotonic() > self._wall_deadline:
            self._stop("wall_clock")

    def _stop(self, why: str) -> None:
        self.stop = why
        self.capture.request_stop(why)

    def _unbounded(self) -> bool:
        if self._floors:
            return False
        totals = [s.total for s in self.steps if s.total is not None]
        return bool(totals) and min(totals) < 0

    def _lowest(self) -> float:
        return min((s.total for s in self.steps if s.total is not None), default=0.0)

    def _plateaued(self, judged: list[float | None]) -> bool:
        steps = len(judged)
        if steps < PLATEAU_MIN_STEPS:
            return False
        patience = max(PLATEAU_PATIENCE, steps // 4)
        values = [v for v in judged if v is not None]
        if len(values) <= patience:
            return False
        before = min(values[:-patience])
        recent = min(values[-patience:])
        scale = max(abs(before), 1e-12)
        return (before - recent) / scale < PLATEAU_IMPROVEMENT

    def _still_falling(self, judged: list[float | None]) -> bool:
        values = [v for v in judged if v is not None]
        if len(values) < 10:
            return True
        fifth = max(2, len(values) // 5)
        before = min(values[:-fifth])
        recent = min(values[-fifth:])
        return (before - recent) / max(abs(before), 1e-12) >= STILL_FALLING

    def _judged_name(self) -> str:
        if not self._floors:
            return "loss"
        names = list(dict.fromkeys(_LOSS_NAMES.get(v.name, v.name) for v in self._floors))
        reducible = any(v.floor is not None for v in self._floors)
        return ("reducible " if reducible else "") + " + ".join(names)


def sized_budget(per_step: float, spent: float, room: float | None) -> float:
    """The default CPU-time budget for steps that cost `per_step` CPU seconds each, `spent`
    seconds already used: the default `DEFAULT_TIME_BUDGET` when it fits `PLATEAU_MIN_STEPS`
    steps, else enough for them (a tenth more), never past `room` (what the hang guard leaves,
    in the same clock; None: no guard)."""
    needed = spent + per_step * PLATEAU_MIN_STEPS * 1.1
    budget = max(DEFAULT_TIME_BUDGET, needed)
    if room is not None:
        budget = min(budget, max(DEFAULT_TIME_BUDGET, room))
    return budget
