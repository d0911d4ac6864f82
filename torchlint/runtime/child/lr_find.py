"""`torchlint run lr-find`: a learning-rate range test on the user's own training loop.

At the start of each step k of the primary optimizer (after the script's scheduler set its lr,
so the sweep wins), every param group's learning rate is set to
``lr_min * (lr_max / lr_min) ** (k / (N - 1))``; the script's own value is put back at the end of
the step, so its scheduler keeps its course and the envelope shows the script's lr. The loss of
each step (the first loss passed to `backward()` in it) is read once per step, smoothed
exponentially (beta 0.98, bias-corrected), and the sweep stops when the smoothed loss exceeds 4x
its minimum or the loss is not finite.

N is `--steps` when given; by default it is chosen from what a step of the script costs: as many
steps as fit `AUTO_CPU_BUDGET` CPU seconds of the training thread (measured over its first
steps, at the bottom of the sweep where the lr changes nothing), between 100 and 1000. A small
language model with fresh batches needs hundreds of steps for its loss to move; a large model
whose step takes seconds gets the minimum. The child process ends after the sweep, and whatever
the script saved went to the run's scratch folder (sandbox/), so the user's model and
checkpoints are untouched.

The suggestion is one learning rate: the lr at the steepest descent of the smoothed loss against
log lr (the first 10% of the steps and everything after the loss's minimum left out), where the
loss fell fastest; none when the loss never fell clearly below its starting level. The script's
own lr, compared with it, is the one it was configured with (the optimizer's construction, a
scheduler's `initial_lr` or `max_lr`) or the highest it set during the sweep, not the first
value of a warm-up.

It does not apply to an update by hand (no optimizer lr), a closure that evaluates the loss
more than once per step (LBFGS's line search; a Lightning Trainer's closure is one), adversarial
optimizers or reinforcement learning, whose losses do not measure progress; it says so at once.
"""

from __future__ import annotations

import itertools
import math
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch

from torchlint.runtime.child.captured import Finding, OptimizerInfo
from torchlint.runtime.child.losses import LossValue
from torchlint.runtime.child.plugin import RL_MODULES, PluginResult, RunPlugin
from torchlint.runtime.child.thread_clock import thread_cpu_clock
from torchlint.runtime.envelope import finite_or_none

if TYPE_CHECKING:
    from torchlint.runtime.child.assemble import Outcome
    from torchlint.runtime.child.capture import Capture

DEFAULT_LR_MIN = 1e-7
DEFAULT_LR_MAX = 10.0
#: exponential smoothing of the loss (with bias correction), as in fastai's LR finder
BETA = 0.98
#: the sweep stops when the smoothed loss exceeds this many times its minimum
DIVERGENCE_FACTOR = 4.0
#: the first steps left out of the steepest-descent search, as a fraction of the steps run
SKIP_START_FRACTION = 0.1
#: a descent is meaningful when the smoothed loss falls below its starting level by at least
#: this fraction of it and by this many times the step-to-step noise of the raw loss
MIN_RELATIVE_DROP = 0.05
NOISE_FACTOR = 2.0
#: a loss that diverges at or below this lr has a problem other than the learning rate
TINY_LR = 1e-5
#: fewer steps than this cannot show a descent
MIN_SWEEP_STEPS = 10
#: the sweep's length when --steps is not given: CPU seconds of the training thread, measured
#: per step over steps 1..AUTO_MEASURE_STEPS (step 0 carries the first-step checks) ...
AUTO_CPU_BUDGET = 30.0
AUTO_MEASURE_STEPS = 6
#: ... within these bounds
AUTO_MIN_STEPS = 100
AUTO_MAX_STEPS = 1000
#: the script's lr is flagged above this multiple of the lr where the sweep diverged ...
TOO_HIGH_FACTOR = 10.0
#: ... or below the lower suggestion divided by this
TOO_LOW_FACTOR = 100.0

WEIGHTS = "discarded with the child process"
METHOD = (
    "LR range test on the script's own loop: the primary optimizer's learning rate rises "
    "exponentially from lr_min to lr_max over the requested steps on successive batches, each "
    "step's loss is smoothed exponentially (beta 0.98, bias-corrected), and the sweep stops when "
    "the smoothed loss exceeds 4x its minimum or the loss is not finite."
)


def sweep_lr(step: int, steps: int, lr_min: float, lr_max: float) -> float:
    """The learning rate of step `step` (0-based) of a sweep of `steps` steps."""
    if steps <= 1:
        return lr_min
    return float(lr_min * (lr_max / lr_min) ** (step / (steps - 1)))


def smooth(losses: list[float | None], beta: float = BETA) -> list[float | None]:
    """Bias-corrected exponential moving average of the finite losses. A step without a loss
    (None) keeps the average; from the first non-finite loss on, every value is None."""
    smoothed: list[float | None] = []
    average, count, broken = 0.0, 0, False
    for loss in losses:
        if loss is not None and not math.isfinite(loss):
            broken = True
        if broken or (loss is None and count == 0):
            smoothed.append(None)
            continue
        if loss is not None:
            count += 1
            average = beta * average + (1 - beta) * loss
        smoothed.append(average / (1 - beta**count))
    return smoothed


def diverged(smoothed: float, minimum: float) -> bool:
    """fastai's rule, 4x the minimum, written as a rise above the minimum of 3x its magnitude
    so that it also means something for a loss whose minimum is negative."""
    return smoothed > minimum + (DIVERGENCE_FACTOR - 1) * abs(minimum)


def _noise(values: list[float]) -> float:
    """The step-to-step noise of a series (sigma, from the median absolute first difference,
    which a slow trend hardly moves)."""
    if len(values) < 4:
        return 0.0
    steps = sorted(abs(b - a) for a, b in itertools.pairwise(values))
    return steps[len(steps) // 2] / (0.6745 * math.sqrt(2))


@dataclass
class Suggestion:
    """What the curve says: the suggested lrs and the steps they come from, or why none."""

    skip: int = 0
    steepest_step: int | None = None
    min_step: int | None = None
    start_level: float | None = None
    min_level: float | None = None
    noise: float | None = None
    reason: str | None = None
    #: the kind of "no suggestion": no_descent, diverged_at_start, too_few_steps, no_loss
    kind: str | None = None


def analyse(
    lrs: list[float],
    losses: list[float | None],
    smoothed: list[float | None],
    diverged_at: int | None = None,
) -> Suggestion:
    """The steepest descent of the smoothed loss against log lr, between the first 10% of the
    steps and the minimum; or why there is no suggestion. `losses` are the raw losses (NaN and
    infinity kept, None for a step without one)."""
    n = len(smoothed)
    broken = next((k for k, v in enumerate(losses) if v is not None and not math.isfinite(v)), n)
    points = [k for k in range(min(broken, n)) if smoothed[k] is not None]
    result = Suggestion()
    if len(points) < MIN_SWEEP_STEPS:
        if broken < n:
            result.kind = "diverged_at_start"
            result.reason = (
                f"the loss was not finite at step {broken} (lr {lrs[broken]:.3g}), after "
                f"{len(points)} step(s) with a finite loss: too early to show a descent"
            )
        elif not points:
            result.kind = "no_loss"
            result.reason = "no scalar loss was passed to backward() during the sweep"
        else:
            result.kind = "too_few_steps"
            result.reason = (
                f"only {len(points)} step(s) with a loss ran; a sweep needs at least "
                f"{MIN_SWEEP_STEPS}"
            )
        return result
    values = [v for k in points if (v := smoothed[k]) is not None]
    skip = min(max(1, round(SKIP_START_FRACTION * len(points))), len(points) - 2)
    lowest = min(range(skip, len(points)), key=lambda i: values[i])
    result.skip = points[skip]
    result.min_step = points[lowest]
    result.start_level = values[skip]
    result.min_level = values[lowest]
    raw = [v for v in losses[: points[lowest] + 1] if v is not None and math.isfinite(v)]
    result.noise = _noise(raw)
    drop = values[skip] - values[lowest]
    needed = max(MIN_RELATIVE_DROP * abs(values[skip]), NOISE_FACTOR * result.noise)
    if drop < needed or lowest == skip:
        if lowest == skip and diverged_at is not None:
            result.kind = "diverged_at_start"
            result.reason = (
                f"the smoothed loss rose from the first steps and diverged at step "
                f"{diverged_at} (lr {lrs[diverged_at]:.3g}): the range starts too high"
            )
        else:
            result.kind = "no_descent"
            result.reason = (
                f"the smoothed loss never fell clearly below its starting level "
                f"({values[skip]:.4g}, lowest {values[lowest]:.4g}; a descent needs "
                f"{needed:.2g}: 5% of the level and twice the step-to-step noise) over lr "
                f"{lrs[points[0]]:.3g} to {lrs[points[-1]]:.3g}"
            )
        return result
    logs = [math.log10(lrs[k]) for k in points]
    best: tuple[float, int] | None = None
    for i in range(skip, min(lowest, len(points) - 2) + 1):
        span = logs[i + 1] - logs[i - 1]
        if span > 0:
            slope = (values[i + 1] - values[i - 1]) / span
            if best is None or slope < best[0]:
                best = (slope, i)
    if best is None or best[0] >= 0:
        result.kind = "no_descent"
        result.reason = "the smoothed loss has no descending stretch after the first steps"
        return result
    result.steepest_step = points[best[1]]
    return result


def _lr_value(value: Any) -> float | None:
    if isinstance(value, torch.Tensor):
        value = float(value.detach().reshape(-1)[0]) if value.numel() else None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return finite_or_none(float(value))
    return None


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3g}"


def _option(options: dict[str, Any], key: str, default: float) -> float:
    value = options.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"lr-find: --{key.replace('_', '-')} must be a number, not {value!r}")
    return float(value)


class LrFindPlugin(RunPlugin):
    check = "lr-find"
    wants_losses = True  # a loss that no loss function computes may not be bounded below

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

    # ----------------------------------------------------------------------------------------
    # the result

    def result(self, outcome: Outcome) -> PluginResult:
        inapplicable = self.inapplicable_result()
        if inapplicable is not None:
            return inapplicable
        lrs = list(self.lrs)
        raw = self.losses[: len(lrs)]
        raw += [None] * (len(lrs) - len(raw))  # a step that ended the run before its end
        losses = [finite_or_none(v) for v in raw]
        smoothed = [finite_or_none(v) for v in smooth(raw)]
        suggestion = analyse(lrs, raw, smoothed, self.diverged_at)
        if self.unsweepable:
            suggestion.kind = "no_loss"
            suggestion.reason = "the optimizer's param groups have no numeric learning rate"
        suggested_lr = lrs[s] if (s := suggestion.steepest_step) is not None else None
        min_step = suggestion.min_step if suggested_lr is not None else None
        min_lr = lrs[min_step] if min_step is not None else None
        diverged_lr = lrs[self.diverged_at] if self.diverged_at is not None else None
        plot, plot_error = self._write_plot(lrs, losses, smoothed, suggested_lr, min_lr)
        payload: dict[str, Any] = {
            "method": METHOD,
            "lr_min": self.lr_min,
            "lr_max": self.lr_max,
            "steps_requested": self.steps,
            "steps_run": len(lrs),
            "lrs": lrs,
            "losses": losses,
            "smoothed": smoothed,
            "beta": BETA,
            "divergence_factor": DIVERGENCE_FACTOR,
            "skip_start": suggestion.skip,
            "suggested_lr": suggested_lr,
            "suggested_step": suggestion.steepest_step,
            "min_loss_lr": min_lr,
            "min_loss": finite_or_none(suggestion.min_level) if min_step is not None else None,
            "min_loss_step": min_step,
            "diverged_at_step": self.diverged_at,
            "diverged_lr": diverged_lr,
            "script_lr": self._reported_script_lr(),
            "suggestion_reason": self._suggestion_reason(suggested_lr, min_lr, diverged_lr),
            "optimizer": self._optimizer_name(),
            "sweep_end": self._sweep_end(outcome, len(lrs)),
            "no_suggestion_reason": None if suggested_lr is not None else suggestion.reason,
            "weights": WEIGHTS,
            "plot": plot,
            "plot_error": plot_error,
        }
        findings = self._findings(payload, suggestion, plot_error)
        if suggested_lr is not None:
            verdict = "suggested"
            summary = f"lr-find: suggested lr {_fmt(suggested_lr)}: {payload['suggestion_reason']}"
            script_lr = payload["script_lr"]
            if script_lr is not None:
                summary += f"; the script's lr {_fmt(script_lr)}"
            return PluginResult(verdict, summary, payload, findings)
        reason = suggestion.reason or "no loss was recorded"
        summary = f"lr-find: no suggestion: {reason}"
        return PluginResult("no_suggestion", summary, payload, findings, reason)

    def _reported_script_lr(self) -> float | None:
        """The configured lr, or the highest the script set when it is higher (a warm-up that
        got past its start)."""
        values = [v for v in (self.script_lr, self.seen_lr) if v is not None]
        return max(values) if values else None

    @staticmethod
    def _suggestion_reason(
        suggested: float | None, lowest: float | None, diverged: float | None
    ) -> str | None:
        if suggested is None:
            return None
        text = "where the smoothed loss fell fastest (the steepest descent of the sweep)"
        details = []
        if lowest is not None:
            details.append(f"lowest at lr {_fmt(lowest)}")
        if diverged is not None:
            details.append(f"diverged at lr {_fmt(diverged)}")
        return text + (f"; {', '.join(details)}" if details else "")

    def _optimizer_name(self) -> str | None:
        primary = self.capture.primary
        return primary.name if primary is not None else None

    def _sweep_end(self, outcome: Outcome, run: int) -> str:
        if self.diverged_at is not None:
            return "diverged"
        if run >= self.steps:
            return "completed"
        if outcome.kind == "stopped":
            return "stopped"
        return "script_ended"

    def _write_plot(
        self,
        lrs: list[float],
        losses: list[float | None],
        smoothed: list[float | None],
        suggested: float | None,
        min_lr: float | None,
    ) -> tuple[str | None, str | None]:
        if self.plot is None:
            return None, None
        from torchlint.runtime.svg_plot import Marker, Series, render_svg, write_svg

        # one marker: the two suggestions are often close, and their labels would overlap
        markers = [Marker(suggested, f"suggested {suggested:.3g}")] if suggested else []
        label = "smoothed loss"
        if min_lr is not None:
            label += f" (lowest at lr {min_lr:.3g}; / 10 = {min_lr / 10:.3g})"
        svg = render_svg(
            [Series("loss", lrs, losses), Series(label, lrs, smoothed)],
            title="lr-find: loss against learning rate",
            x_label="learning rate (log scale)",
            y_label="loss",
            log_x=True,
            markers=markers,
        )
        try:
            write_svg(self.plot, svg)
        except OSError as exc:
            return None, f"could not write {self.plot}: {exc.strerror or exc}"
        return self.plot, None

    # ----------------------------------------------------------------------------------------
    # findings

    def _findings(
        self, payload: dict[str, Any], suggestion: Suggestion, plot_error: str | None
    ) -> list[Finding]:
        capture = self.capture
        primary = capture.primary
        site = primary.site if primary is not None else None
        name = payload["optimizer"] or "the optimizer"
        findings: list[Finding] = []
        script_lr = payload["script_lr"]
        suggested = payload["suggested_lr"]
        diverged_lr = payload["diverged_lr"]
        if suggested is not None and script_lr is not None:
            beyond = diverged_lr is None and script_lr >= self.lr_max
            if (diverged_lr is not None and script_lr > TOO_HIGH_FACTOR * diverged_lr) or (
                beyond and script_lr > TOO_LOW_FACTOR * suggested
            ):
                where = (
                    f"{script_lr / diverged_lr:.0f}x the lr at which the sweep's loss diverged "
                    f"({diverged_lr:.3g})"
                    if diverged_lr is not None
                    else f"above the whole sweep (up to {self.lr_max:g}) and "
                    f"{script_lr / suggested:.0f}x its suggestion"
                )
                findings.append(
                    Finding(
                        "TLR501",
                        f"the script trains {name} with lr {script_lr:.3g}, {where}: training "
                        "at this rate is likely to blow up.",
                        site,
                        {
                            "script_lr": script_lr,
                            "diverged_lr": diverged_lr,
                            "suggested_lr": suggested,
                        },
                        advice=f"Lower the learning rate, to about {suggested:.3g} (where the "
                        "sweep's loss fell fastest).",
                    )
                )
            if 0 < script_lr < suggested / TOO_LOW_FACTOR:
                findings.append(
                    Finding(
                        "TLR502",
                        f"the script trains {name} with lr {script_lr:.3g}, "
                        f"{suggested / script_lr:.0f}x below the sweep's suggestion "
                        f"({suggested:.3g}): training will be much slower than it needs to be.",
                        site,
                        {"script_lr": script_lr, "suggested_lr": suggested},
                        advice=f"Try a learning rate near {suggested:.3g}.",
                    )
                )
        if suggested is None:
            findings += self._no_suggestion_findings(payload, suggestion, site)
        for info in capture.optimizers:
            if info is not primary and info.steps > 0:
                findings.append(
                    Finding(
                        "TLR506",
                        f"{info.name} also stepped during the sweep with "
                        f"its own learning rate: only {name} (the first optimizer that "
                        "stepped) is swept, so the curve shows its lr with the other one fixed.",
                        info.site,
                        {"steps": info.steps},
                    )
                )
        if plot_error is not None:
            findings.append(
                Finding(
                    "TLR507",
                    f"the plot was not written: {plot_error}. Check that the folder exists "
                    "and is writable.",
                    None,
                    {"plot": self.plot},
                )
            )
        return findings

    def _no_suggestion_findings(
        self, payload: dict[str, Any], suggestion: Suggestion, site: Any
    ) -> list[Finding]:
        backward = self.capture.backward_site
        reason = suggestion.reason or "no loss was recorded"
        evidence = {
            "steps_run": payload["steps_run"],
            "lr_min": self.lr_min,
            "lr_max": self.lr_max,
        }
        if suggestion.kind == "no_descent":
            return [
                Finding(
                    "TLR503",
                    f"no learning rate could be suggested: {reason}. Check that the loss "
                    "depends on the parameters the optimizer holds (`torchlint run grads`); "
                    f"if it does, raise --lr-max (now {self.lr_max:g}) or run more --steps.",
                    backward,
                    {
                        **evidence,
                        "start_level": finite_or_none(suggestion.start_level),
                        "lowest": finite_or_none(suggestion.min_level),
                        "noise": finite_or_none(suggestion.noise),
                    },
                )
            ]
        if suggestion.kind == "diverged_at_start":
            at = self.diverged_at
            tiny = at is not None and at < len(self.lrs) and self.lrs[at] <= TINY_LR
            advice = (
                "A loss that is not finite at so small a learning rate is not a learning-rate "
                "problem: look at the data and the loss (`torchlint run overfit` reports the "
                "step)."
                if tiny
                else f"Lower --lr-min (now {self.lr_min:g}) so that the sweep starts where the "
                "loss still falls."
            )
            return [
                Finding(
                    "TLR504",
                    f"no learning rate could be suggested: {reason}. " + advice,
                    backward,
                    evidence,
                )
            ]
        if suggestion.kind == "too_few_steps":
            return [
                Finding(
                    "TLR505",
                    f"no learning rate could be suggested: {reason}. Run with at least --steps 100 "
                    "(without --steps the sweep takes 100 to 1000), and make sure the script "
                    "trains for that many steps.",
                    self.capture.primary.step_site if self.capture.primary else site,
                    evidence,
                )
            ]
        return []
