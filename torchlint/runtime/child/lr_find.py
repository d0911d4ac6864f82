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

The sweep (its events, each step's lr and loss) is lr_find_sweep.py, the curve and its
suggestion lr_find_curve.py; the plugin here gives the result: payload, plot and findings.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from torchlint.runtime.child.captured import Finding
from torchlint.runtime.child.lr_find_curve import (
    BETA,
    DIVERGENCE_FACTOR,
    Suggestion,
    analyse,
    smooth,
)
from torchlint.runtime.child.lr_find_sweep import LrFindSweep
from torchlint.runtime.child.plugin import PluginResult
from torchlint.runtime.envelope import finite_or_none

if TYPE_CHECKING:
    from torchlint.runtime.child.assemble import Outcome

#: a loss that diverges at or below this lr has a problem other than the learning rate
TINY_LR = 1e-5
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


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3g}"


class LrFindPlugin(LrFindSweep):
    check = "lr-find"
    wants_losses = True  # a loss that no loss function computes may not be bounded below

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
