"""What overfit's payload reports: the curves, the numbers judged, the batch, the budget."""

from __future__ import annotations

from typing import Any

import torch

from torchlint.runtime.child.captured import OptimizerInfo
from torchlint.runtime.child.overfit_run import (
    ABSOLUTE_FLOOR,
    ACCURACY_PASS,
    FINAL_WINDOW,
    TARGET_RATIO,
    OverfitRun,
)
from torchlint.runtime.envelope import finite_or_none

#: "other terms" of the loss (not computed by a functional loss) are reported when their share
#: of the first loss is above this
OTHER_TERMS_SHARE = 1e-3


class OverfitPayload(OverfitRun):
    """The payload of the result, from the steps the run read."""

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


def _per_step(info: OptimizerInfo | None) -> float | None:
    if info is None or not info.step_backwards:
        return None
    return sum(info.step_backwards) / len(info.step_backwards)
