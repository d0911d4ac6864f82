"""`torchlint run overfit`: can the model memorise one batch?

The script trains on one fixed batch (the training loader's first batch replayed as a fresh
copy, or, without a DataLoader, the first step's forward inputs and loss targets; full-batch
training already is one) until the loss converges or stops improving, within a step budget and
a time budget. The time budget is CPU time of the thread that trains (what a busy machine does
not stretch), so a verdict does not depend on the load; the wall clock (`--timeout`) is only a
hang guard, and running out of it is inconclusive, never a failure. What is judged is the
*reducible* part of the loss: each functional loss of the step minus its floor (the entropy
of soft targets, of label-smoothed targets), so a VAE's reconstruction term or a
label-smoothed classifier is judged against what it can reach; terms that no functional loss
computed (a KL regulariser) are reported apart. A classification loss
also needs the batch predicted: batch accuracy at least 0.9, over the targets that are not
`ignore_index`.

Four outcomes: **pass** (the reducible loss fell to a tenth of where it started, or to 1e-4);
**fail** with the cause (it did not fall, or a non-finite loss, or an error-level finding);
**inconclusive** with what would decide it (still falling at the budget, a plateau half way,
the script ended first); **not applicable** with why (adversarial optimizers, reinforcement
learning, a loss not bounded below).
"""

from __future__ import annotations

import math
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import torch

from torchlint.runtime.child.captured import Finding, OptimizerInfo, learning_rates
from torchlint.runtime.child.losses import CLASSIFICATION, LossValue
from torchlint.runtime.child.plugin import PluginResult, RunPlugin
from torchlint.runtime.envelope import finite_or_none

if TYPE_CHECKING:
    from torchlint.runtime.child.assemble import Outcome
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
#: a loss that kept this fraction of its start did not fall
BARELY_MOVED = 0.9
#: the modules of reinforcement-learning environments: a script that loaded one trains on its
#: own rollouts
RL_MODULES = ("gymnasium", "gym", "stable_baselines3", "pettingzoo", "envpool", "torchrl")
#: "other terms" of the loss (not computed by a functional loss) are reported when their share
#: of the first loss is above this
OTHER_TERMS_SHARE = 1e-3

_LOSS_NAMES = {"cross_entropy": "cross-entropy", "nll_loss": "negative log-likelihood"}


@dataclass
class _Step:
    """What one step of the primary optimizer computed, read to the host once."""

    total: float | None
    components: list[float] = field(default_factory=list)
    accuracy: float | None = None


class OverfitPlugin(RunPlugin):
    check = "overfit"
    replays_batch = True

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

    # the result ---------------------------------------------------------------------------------

    def result(self, outcome: Outcome) -> PluginResult:
        inapplicable = self.inapplicable_result()
        if inapplicable is not None:
            inapplicable.payload.update(self._payload())
            return inapplicable
        judged = self.judged()
        payload = self._payload()
        findings: list[Finding] = []
        verdict, reason = self._verdict(outcome, judged, findings)
        payload["stop"] = self.stop or self._ended(outcome)
        summary = self._summary(verdict, reason, payload)
        return PluginResult(verdict, summary, payload, findings, reason)

    def _ended(self, outcome: Outcome) -> str:
        if outcome.kind == "stopped":
            return outcome.reason or "stopped"
        return "script_ended"

    def _verdict(
        self, outcome: Outcome, judged: list[float | None], findings: list[Finding]
    ) -> tuple[str, str | None]:
        capture = self.capture
        steps = len(self.steps)
        site = capture.backward_site
        reference = self.reference(judged)
        window = [v for v in judged[-FINAL_WINDOW:] if v is not None]
        final = min(window) if window else None
        ratio = final / reference if final is not None and reference else None
        what = self._judged_name()
        if self.nan_step is not None:
            findings.append(
                Finding(
                    "TLR101",
                    f"the loss became non-finite at step {self.nan_step} while fitting one batch.",
                    site,
                    {"nan_step": self.nan_step},
                    advice="Check the learning rate, invalid values in the data (log of 0, "
                    "division by 0) and exploding gradients; `torchlint run grads` finds the "
                    "first parameter whose gradient went non-finite.",
                )
            )
            return "nan", f"the loss became non-finite at step {self.nan_step}"
        if steps == 0:
            return "inconclusive", "no optimizer step completed"
        if self.converged(judged):
            return "pass", None
        fell = (
            final is not None
            and reference is not None
            and (final <= ABSOLUTE_FLOOR or (reference > 0 and final <= TARGET_RATIO * reference))
        )
        accuracy = self.steps[-1].accuracy
        if fell and accuracy is not None:
            call = next((c for c in capture.loss_calls if c.function in CLASSIFICATION), None)
            findings.append(
                Finding(
                    "TLR110",
                    f"the {what} fell to {_g(ratio)} of its start, but the batch accuracy is "
                    f"only {accuracy:.2f} after {steps} steps: the model does not predict the "
                    "batch's classes yet.",
                    call.site if call is not None else site,
                    {"accuracy": accuracy, "ratio": ratio},
                    advice=f"Run more steps (--steps {2 * max(steps, self.budget)}); if the "
                    "accuracy stays low, check that the targets are the classes the outputs "
                    "index (ignore_index, label order).",
                )
            )
            return "inconclusive", (
                f"batch accuracy {accuracy:.2f} after {steps} steps although the loss fell; "
                f"more steps (--steps {2 * max(steps, self.budget)}) would decide"
            )
        ended_early = self.stop is None and outcome.kind in ("finished", "exit")
        if ended_early:
            return "inconclusive", (
                f"the script ended after {steps} step(s), before the loss converged or "
                f"stopped improving ({what} at {_g(ratio)} of its start); let it run longer "
                "(its own epochs or iterations) to decide"
            )
        if self.stop == "wall_clock":
            # the hang guard, not a budget: a busy machine stretches the wall clock, so what
            # ran out says nothing about the loop
            wall = self._wall_seconds or 0.0
            return "inconclusive", (
                f"ran out of wall time: the --timeout hang guard stopped training after "
                f"{wall:.0f} s and {steps} step(s) ({what} at {_g(ratio)} of its start), with "
                f"{self.cpu_seconds():.0f} of the {self._budget_seconds:g} CPU seconds of its "
                "time budget used (a busy machine or slow steps); a longer --timeout would "
                "decide"
            )
        values = [v for v in judged if v is not None]
        moved = bool(values) and max(values) > min(values)
        if self.stop == "time_budget" and steps < PLATEAU_MIN_STEPS and moved:
            # slow steps (a large model, a busy machine): too few to tell a loss that does not
            # fall from one that has not started to
            seconds = self._budget_seconds * PLATEAU_MIN_STEPS / max(1, steps)
            return "inconclusive", (
                f"the time budget ran out after {steps} step(s) ({what} at {_g(ratio)} of its "
                f"start), too few to judge; --time-budget {math.ceil(seconds)} (about "
                f"{PLATEAU_MIN_STEPS} steps) would decide"
            )
        frozen = [
            p for root in capture.roots for p in root.module.parameters() if not p.requires_grad
        ]
        if ratio is None or ratio >= BARELY_MOVED or (frozen and self.stop == "plateau"):
            start = judged[0] if judged else None
            below = (
                f" below a uniform prediction's ({_g(reference)}, log of the classes)"
                if reference is not None and start is not None and reference < start
                else ""
            )
            cause = (
                f"the {what} did not fall{below}: {_g(start)} -> {_g(final)} in {steps} steps"
                if ratio is None or ratio >= BARELY_MOVED
                else f"the {what} stopped improving at {_g(ratio)} of its start with "
                f"{len(frozen)} frozen parameter tensor(s)"
            )
            findings.append(self._failed(cause, steps, judged, final, ratio))
            return "fail", cause
        if self.stop in ("step_budget", "time_budget") and self._still_falling(judged):
            budget = "step budget" if self.stop == "step_budget" else "time budget"
            return "inconclusive", (
                f"still falling when the {budget} ran out ({what} at {_g(ratio)} of its start "
                f"after {steps} steps); --steps {2 * steps}"
                + (" and --time-budget" if self.stop == "time_budget" else "")
                + " would decide"
            )
        return "inconclusive", (
            f"the {what} fell to {_g(ratio)} of its start and stopped improving after {steps} "
            "steps: a model too small (or too regularised) to memorise this batch stops there "
            "too; a larger model, or `torchlint run grads`, would decide"
        )

    def _failed(
        self,
        cause: str,
        steps: int,
        judged: list[float | None],
        final: float | None,
        ratio: float | None,
    ) -> Finding:
        capture = self.capture
        primary = capture.primary
        schedule = ""
        if primary is not None and primary.manual is None and primary.first_lrs:
            now = learning_rates(primary.optimizer)
            if any(primary.first_lrs) and now and all(lr == 0 for lr in now):
                schedule = (
                    " The learning-rate schedule reached 0 during the check: it ran "
                    f"{steps} steps, more than the schedule plans for."
                )
        return Finding(
            "TLR100",
            f"the model did not fit a single batch: {cause} (ratio {_g(ratio)}; a pass needs "
            f"<= {TARGET_RATIO:g}). A model that cannot memorise one batch has a bug in the "
            f"loop, the loss, the optimizer or the model.{schedule}",
            capture.backward_site,
            {"initial": judged[0] if judged else None, "final": final, "ratio": ratio},
            advice="See the other findings; check that the loss is computed from the model's "
            "raw output and that the optimizer holds the model's parameters with a non-zero "
            "learning rate (`torchlint run grads`)."
            + (" Try a smaller --steps." if schedule else ""),
        )

    def _judged_name(self) -> str:
        if not self._floors:
            return "loss"
        names = list(dict.fromkeys(_LOSS_NAMES.get(v.name, v.name) for v in self._floors))
        reducible = any(v.floor is not None for v in self._floors)
        return ("reducible " if reducible else "") + " + ".join(names)

    def _summary(self, verdict: str, reason: str | None, payload: dict[str, Any]) -> str:
        head = {
            "pass": "overfit pass",
            "fail": "overfit fail",
            "nan": "overfit: loss became non-finite",
            "inconclusive": "overfit inconclusive",
        }.get(verdict, f"overfit {verdict}")
        numbers = (
            f"{payload['judged']} {_g(payload['initial_loss'])} -> {_g(payload['final_loss'])} "
            f"in {payload['steps_run']} steps"
        )
        text = f"{head}: {numbers}"
        if payload.get("final_accuracy") is not None:
            text += f"; batch accuracy {payload['final_accuracy']:.3f}"
        if reason:
            text += f"; {reason}"
        return text

    def _payload(self) -> dict[str, Any]:
        capture = self.capture
        judged = self.judged()
        reference = self.reference(judged)
        window = [v for v in judged[-FINAL_WINDOW:] if v is not None]
        final = min(window) if window else None
        ratio = final / reference if final is not None and reference else None
        totals = [s.total for s in self.steps]
        floors = self.floor_values()
        floor = sum(floors) if floors else None
        accuracies = [s.accuracy for s in self.steps if s.accuracy is not None]
        other = self._other_terms()
        primary = capture.primary
        uniform = self.uniform_loss()
        first_value = (
            self.steps[0].components[0] if self.steps and self.steps[0].components else None
        )
        vs_expected = first_value / uniform if uniform and first_value is not None else None
        return {
            "steps_requested": self.budget,
            "steps_run": len(self.steps),
            "loss_curve": [finite_or_none(v) for v in totals],
            "judged": self._judged_name(),
            "judged_curve": [finite_or_none(v) for v in judged],
            "initial_loss": finite_or_none(judged[0]) if judged else None,
            "final_loss": finite_or_none(final),
            "final_window": FINAL_WINDOW,
            "ratio": finite_or_none(ratio),
            "reference": finite_or_none(reference),
            "target_ratio": TARGET_RATIO,
            "absolute_floor": ABSOLUTE_FLOOR,
            "floor": finite_or_none(floor) if floor else None,
            "floor_reason": "; ".join(
                dict.fromkeys(v.floor_reason for v in self._floors if v.floor_reason)
            )
            or None,
            "other_terms": other,
            "nan_step": self.nan_step,
            "expected_initial_loss": finite_or_none(uniform),
            "initial_loss_vs_expected": finite_or_none(vs_expected),
            "initial_accuracy": finite_or_none(accuracies[0]) if accuracies else None,
            "final_accuracy": finite_or_none(accuracies[-1]) if accuracies else None,
            "accuracy_needed": ACCURACY_PASS if accuracies else None,
            "num_classes": self._classes(self._floors[0]) if self._floors else None,
            "loss_differentiable": capture.loss_differentiable,
            "backward_per_step": _per_step(primary),
            "batch_source": self._batch_source(),
            "budget": {
                "steps": self.budget,
                "seconds": self._budget_seconds,
                "clock": "cpu time of the training thread",
                "cpu_seconds_used": round(self.cpu_seconds(), 3),
                "wall_guard_seconds": finite_or_none(self._wall_seconds),
            },
            "curves": [self._curve(info) for info in capture.optimizers if info.steps],
            "final_loss_after": None,
            "source": None,
            "stop": self.stop,
        }

    def _other_terms(self) -> dict[str, Any] | None:
        """The loss minus what its functional losses computed, when it is more than a constant
        multiple of them (a loss divided by the accumulation steps is no other term)."""
        count = len(self._floors)
        pairs = [
            (s.total, sum(s.components[:count]))
            for s in self.steps
            if s.total is not None and count and len(s.components) >= count
        ]
        if not pairs or pairs[0][1] == 0:
            return None
        scale = pairs[0][0] / pairs[0][1]
        rest = [total - scale * part for total, part in pairs]
        tolerance = OTHER_TERMS_SHARE * max(abs(pairs[0][0]), 1e-12)
        if all(abs(r) <= tolerance for r in rest) and abs(scale - 1) > OTHER_TERMS_SHARE:
            return None  # a constant factor: the same loss, scaled
        rest = [total - part for total, part in pairs]
        if abs(rest[0]) <= tolerance and abs(rest[-1]) <= tolerance:
            return None
        return {"initial": finite_or_none(rest[0]), "final": finite_or_none(rest[-1])}

    def _batch_source(self) -> str:
        capture = self.capture
        train = capture.train_loader
        if train is not None:
            where = f"line {train.site.line}" if train.site else "an unknown line"
            return (
                f"first training batch (DataLoader created at {where}), cached after collation "
                "and replayed as a fresh copy every step, so shuffling and augmentation do not "
                "change it"
            )
        replay = capture.forward_replay
        if replay is not None and replay.full_batch:
            return "full batch: the script trains on the same tensors every step"
        if replay is not None and replay.has_batch:
            return (
                "the tensors passed to the model's forward and the targets passed to the loss "
                "in the first training step (no DataLoader), replayed as fresh copies every step"
            )
        return "no fixed batch could be recorded"

    def _curve(self, info: OptimizerInfo) -> dict[str, Any]:
        values = [v for v in info.step_losses[:10_000]]
        present = [v for v in values if v is not None]
        numbers = (
            torch.stack([v.float().reshape(()).cpu() for v in present]).tolist() if present else []
        )
        it = iter(numbers)
        curve = [finite_or_none(next(it)) if v is not None else None for v in values]
        return {
            "optimizer": info.name,
            "site": info.site.to_json() if info.site else None,
            "primary": info is self.capture.primary,
            "steps": info.steps,
            "initial_loss": curve[0] if curve else None,
            "final_loss": curve[-1] if curve else None,
            "loss_curve": curve if len(curve) <= 2000 else curve[:: max(1, len(curve) // 2000)],
        }


def thread_cpu_clock() -> Callable[[], float]:
    """The CPU clock of the calling thread, readable from any thread (the step hooks of a
    framework may run elsewhere); the process's CPU time where threads have no clock."""
    getter = getattr(time, "pthread_getcpuclockid", None)
    if getter is not None:
        try:
            clock = getter(threading.get_ident())
            time.clock_gettime(clock)
        except (OSError, OverflowError):
            pass
        else:
            return lambda: time.clock_gettime(clock)
    return time.process_time


def _per_step(info: OptimizerInfo | None) -> float | None:
    if info is None or not info.step_backwards:
        return None
    return sum(info.step_backwards) / len(info.step_backwards)


def _g(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4g}"


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
