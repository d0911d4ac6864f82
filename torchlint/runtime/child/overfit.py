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

The run (its events, the steps read, when it stops) is overfit_run.py, the payload
overfit_payload.py; the plugin here gives the verdict, its findings and the summary.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from torchlint.runtime.child.captured import Finding, learning_rates
from torchlint.runtime.child.losses import CLASSIFICATION
from torchlint.runtime.child.overfit_payload import OverfitPayload
from torchlint.runtime.child.overfit_run import (
    ABSOLUTE_FLOOR,
    FINAL_WINDOW,
    PLATEAU_MIN_STEPS,
    TARGET_RATIO,
)
from torchlint.runtime.child.plugin import PluginResult

if TYPE_CHECKING:
    from torchlint.runtime.child.assemble import Outcome

#: a loss that kept this fraction of its start did not fall
BARELY_MOVED = 0.9


class OverfitPlugin(OverfitPayload):
    check = "overfit"
    replays_batch = True

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


def _g(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4g}"
