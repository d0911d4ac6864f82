"""fit's result: the per-epoch curves of both splits from the recorded values, the verdict, the
curve findings, the plot and the payload."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from torchlint.runtime.child.captured import Finding, LoaderInfo
from torchlint.runtime.child.fit_data_checks import DataChecks, split_key
from torchlint.runtime.child.fit_diagnosis import (
    CLASSIFICATION,
    MIN_EPOCHS,
    OVERFIT_EPOCHS_AFTER,
    OVERFIT_RISE,
    START_WINDOW,
    UNDERFIT_RATIO,
    UNDERFIT_VAL_RATIO,
    UNIFORM_FRACTION,
    Diagnosis,
    diagnose,
)
from torchlint.runtime.child.plugin import PluginResult
from torchlint.runtime.envelope import finite_or_none
from torchlint.runtime.sites import Site

if TYPE_CHECKING:
    from torchlint.runtime.child.assemble import Outcome
    from torchlint.runtime.child.fit import FitPlugin, Record

#: stop reasons of a run that fit (or the step bound) ended, as opposed to a first-step check
_OWN_STOPS = ("epochs_done", "nan", "steps_done")
_ANOMALY_ERROR = re.compile(r"Function '(\w+)' returned nan values")


def _line(site: Site | None) -> str:
    return str(site.line) if site is not None else "?"


def _to_floats(values: Sequence[torch.Tensor | None]) -> list[float | None]:
    """Tensors to floats with one transfer (per device); None stays None."""
    present = [(i, v) for i, v in enumerate(values) if v is not None]
    out: list[float | None] = [None] * len(values)
    by_device: dict[torch.device, list[tuple[int, torch.Tensor]]] = {}
    for i, v in present:
        by_device.setdefault(v.device, []).append((i, v))
    for items in by_device.values():
        numbers: list[float] = (
            torch.stack([v.detach().float().reshape(()) for _, v in items]).cpu().tolist()
        )
        for (i, _), number in zip(items, numbers, strict=True):
            out[i] = number
    return out


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


class Result(DataChecks):
    """Everything `result()` works out, in one place."""

    def __init__(self, plugin: FitPlugin, outcome: Outcome) -> None:
        self.plugin = plugin
        self.capture = plugin.capture
        self.outcome = outcome
        self.findings: list[Finding] = []

    def build(self) -> PluginResult:
        plugin = self.plugin
        records = plugin._records
        numbers = _to_floats([r.value for r in records])
        epochs = [run for run in plugin._passes if run.stepped][: plugin.epochs]
        epoch_of = {id(run): e for e, run in enumerate(epochs)}
        # training passes started before each pass: a validation pass follows epoch (count - 1)
        started = 0
        follows: dict[int, int] = {}
        for run in plugin._passes:
            follows[id(run)] = started - 1
            if run.stepped:
                started += 1
        trained_splits = {split_key(run.loader) for run in plugin._passes if run.trained}

        train_values = [
            (epoch_of[id(r.run)], n, r)
            for r, n in zip(records, numbers, strict=True)
            if r.name is not None and r.grad_enabled and id(r.run) in epoch_of
        ]
        names = [r.name for _, _, r in train_values if r.name is not None]
        function = max(dict.fromkeys(names), key=names.count) if names else None
        train_main = [(e, n) for e, n, r in train_values if r.name == function]
        backward = [
            (epoch_of[id(r.run)], n, r)
            for r, n in zip(records, numbers, strict=True)
            if r.name is None and id(r.run) in epoch_of
        ]

        leakage = self._leakage()
        training_split = {item["split"] for item in leakage if item["role"] == "train_eval"}
        other = [
            (r, n)
            for r, n in zip(records, numbers, strict=True)
            if r.name is not None
            and split_key(r.run.loader) not in trained_splits
            and split_key(r.run.loader) not in training_split
        ]
        val_loader, val_function = self._pick_validation(other, function)
        val_split = split_key(val_loader) if val_loader is not None else None
        for item in leakage:
            item["validation"] = item["split"] == val_split
        val_records = [
            (follows[id(r.run)], n, r)
            for r, n in other
            if split_key(r.run.loader) == val_split and r.name == function
        ]
        val_main = [(e, n) for e, n, _ in val_records]
        train_records = [r for _, _, r in train_values if r.name == function]
        scale = _scale(train_records, [r for _, _, r in val_records])
        count = len(epochs)
        train_loss, train_batches = _per_epoch(train_main, count)
        val_loss, val_batches = _per_epoch([(e, n) for e, n in val_main if e >= 0], count)
        before = [n for e, n in val_main if e < 0 and n is not None]
        steps = [n for _, n in train_main]
        classes = plugin.num_classes(mean_only=True) if function in CLASSIFICATION else None

        nan = self._first_nan(train_main, backward, [(e, n) for e, n in val_main if e >= 0])
        for item in leakage:
            item.pop("split")
        labels = self._labels()
        start = _mean([s for s in steps[:START_WINDOW] if s is not None and math.isfinite(s)])

        if nan is not None:
            where = f"epoch {nan['epoch']}" + (
                f", step {nan['step']}" if nan.get("step") is not None else ""
            )
            split = "validation" if nan["split"] == "validation" else "training"
            verdict = Diagnosis(
                "nan",
                f"The {split} loss became non-finite at {where}: numerical instability (too "
                "high a learning rate, invalid values in the data, or exploding gradients).",
            )
        elif count == 0:
            verdict = Diagnosis(
                "inconclusive",
                "No training epoch was recognised: no optimizer step ran during a pass over a "
                "torch.utils.data.DataLoader whose batches were trained on.",
            )
        elif function is None:
            verdict = Diagnosis(
                "inconclusive",
                "No training loss came from a torch.nn.functional loss (or an nn.*Loss "
                "module), so torchlint cannot read the same metric on both splits.",
            )
        elif val_loader is None and val_function is not None:
            verdict = Diagnosis(
                "inconclusive",
                f"The validation loop computes {val_function} and the training loop "
                f"{function}: the curves would compare different metrics.",
            )
        elif val_loader is not None and scale is None:
            verdict = Diagnosis(
                "inconclusive",
                "The two splits reduce the loss differently and one of them cannot be put on "
                "a per-element scale (class weights, or reduction='none' summed by hand), so "
                "their values are not comparable.",
            )
        elif val_loader is None:
            verdict = Diagnosis(
                "inconclusive",
                "No validation loss was recorded: no loss was computed on batches of a loader "
                "other than the training one.",
            )
        else:
            verdict = diagnose(train_loss, val_loss, start, classes)
            overlap = sum(item["overlap"] for item in leakage if item["validation"])
            if verdict.diagnosis == "healthy" and overlap:
                verdict = Diagnosis(
                    "inconclusive",
                    f"Both losses fell, but {overlap} validation sample(s) also appear in the "
                    "training data, so a falling validation loss does not show that the model "
                    "generalises.",
                    verdict.best_epoch,
                    verdict.evidence,
                )

        if self.outcome.kind != "stopped" or self.outcome.reason in _OWN_STOPS:
            # (a first-step check that stopped the run has said what matters)
            self._curve_findings(verdict, nan, val_loader, function, val_function)
        plot, plot_note = self._plot(verdict, train_loss, val_loss, function)
        train_info = self.capture.train_loader or plugin.own_train()
        train_site = train_info.site if train_info else None
        payload: dict[str, Any] = {
            "diagnosis": verdict.diagnosis,
            "reason": verdict.reason,
            "metric": self._metric(
                function, val_function, val_loader, scale, train_records, val_records
            ),
            "epochs_requested": plugin.epochs,
            "epochs_run": count,
            "limit_batches": plugin.limit_batches,
            "train_loss": [finite_or_none(v) for v in train_loss],
            "val_loss": [finite_or_none(v) for v in val_loss],
            "val_loss_before_training": finite_or_none(_mean(before)) if before else None,
            "train_batches": train_batches,
            "val_batches": val_batches,
            "train_loss_steps": [finite_or_none(v) for v in steps],
            "train_loss_start": finite_or_none(start),
            "best_epoch": verdict.best_epoch + 1 if verdict.best_epoch is not None else None,
            "nan": nan,
            "ended": self._ended(),
            "thresholds": {
                "min_epochs": MIN_EPOCHS,
                "overfit_rise": OVERFIT_RISE,
                "overfit_epochs_after": OVERFIT_EPOCHS_AFTER,
                "underfit_ratio": UNDERFIT_RATIO,
                "underfit_val_ratio": UNDERFIT_VAL_RATIO,
                "uniform_fraction": UNIFORM_FRACTION,
            },
            "num_classes": classes,
            "loaders": {
                "train": train_site.to_json() if train_site else None,
                "validation": val_loader.site.to_json() if val_loader and val_loader.site else None,
            },
            "data_checks": {"leakage": leakage, "labels": labels},
            "anomaly": self._anomaly(),
            "plot": plot,
            "plot_note": plot_note,
        }
        if plugin.own is not None:
            payload["reason"] = verdict.reason = (
                f"{verdict.reason} (no DataLoader: the validation loss is the script's own "
                f"evaluation at line {_line(plugin.own.val.site)}, an epoch the training "
                "steps between two of its evaluations)"
            )
        summary = f"fit: {verdict.diagnosis} after {count} epoch(s): {verdict.reason}"
        return PluginResult(verdict.diagnosis, summary, payload, self.findings)

    # parts ---------------------------------------------------------------------------------

    def _pick_validation(
        self, other: list[tuple[Record, float | None]], function: str | None
    ) -> tuple[LoaderInfo | None, str | None]:
        """The loader never trained on with the most values of the training loss function
        (ties: the first created); and, when none has any, the function the others used."""
        counts: dict[int, int] = {}
        first: dict[int, LoaderInfo] = {}
        others: list[str] = []
        for record, _ in other:
            if record.name == function:
                key = split_key(record.run.loader)
                counts[key] = counts.get(key, 0) + 1
                first.setdefault(key, record.run.loader)
            elif record.name is not None:
                others.append(record.name)
        if counts:
            order = {id(info): i for i, info in enumerate(self.capture.loaders)}
            chosen = max(counts, key=lambda k: (counts[k], -order.get(id(first[k]), 0)))
            return first[chosen], function
        return None, (max(set(others), key=others.count) if others else None)

    def _metric(
        self,
        function: str | None,
        val_function: str | None,
        val_loader: LoaderInfo | None,
        scale: str | None,
        train_records: list[Record],
        val_records: list[tuple[int, float | None, Record]],
    ) -> dict[str, Any]:
        same = function is not None and val_loader is not None and scale is not None
        train_reductions = sorted({str(r.reduction) for r in train_records})
        val_reductions = sorted({str(r.reduction) for _, _, r in val_records})
        if function is None:
            description = "no torch.nn.functional loss value was reported during training"
        elif val_loader is None:
            description = (
                f"mean of {function} over each epoch's training batches; no validation value "
                "of it was recorded"
            )
        elif scale == "per_element":
            description = (
                f"mean of {function} per loss element over each epoch's batches: the training "
                f"loop reduces it with {'/'.join(train_reductions)} and the validation loop "
                f"with {'/'.join(val_reductions)}, so each value was divided by the elements "
                "it summed before the splits were compared"
            )
        elif scale == "same":
            description = (
                f"mean of {function} over each epoch's batches, with reduction "
                f"{'/'.join(train_reductions)} on both splits (training: the batches of the "
                "epoch, as the model learns; validation: the validation batches after it)"
            )
        else:
            description = (
                f"{function} with reduction {'/'.join(train_reductions)} on training and "
                f"{'/'.join(val_reductions)} on validation: not comparable"
            )
        return {
            "function": function,
            "val_function": val_function if val_function != function else None,
            "aggregation": "mean_per_element_per_epoch"
            if scale == "per_element"
            else "mean_per_epoch",
            "same_on_both_splits": same,
            "reductions": {"train": train_reductions, "validation": val_reductions},
            "description": description,
        }

    def _first_nan(
        self,
        train: list[tuple[int, float | None]],
        backward: list[tuple[int, float | None, Record]],
        val: list[tuple[int, float | None]],
    ) -> dict[str, Any] | None:
        found: list[tuple[int, int, dict[str, Any]]] = []
        step = next(
            (k for k, (_, n) in enumerate(train) if n is not None and not math.isfinite(n)), None
        )
        if step is not None:
            epoch = train[step][0]
            found.append((epoch, 0, {"split": "train", "epoch": epoch + 1, "step": step}))
        index = next(
            (k for k, (_, n, _) in enumerate(backward) if n is not None and not math.isfinite(n)),
            None,
        )
        if index is not None:
            epoch = backward[index][0]
            found.append((epoch, 1, {"split": "train", "epoch": epoch + 1, "step": index}))
        epoch_val = next((e for e, n in val if n is not None and not math.isfinite(n)), None)
        if epoch_val is not None:
            where = {"split": "validation", "epoch": epoch_val + 1, "step": None}
            found.append((epoch_val, 2, where))
        if not found:
            return None
        return min(found, key=lambda item: (item[0], item[1]))[2]

    def _curve_findings(
        self,
        verdict: Diagnosis,
        nan: dict[str, Any] | None,
        val_loader: LoaderInfo | None,
        function: str | None,
        val_function: str | None,
    ) -> None:
        capture = self.capture
        train_site = self._loss_site(
            capture.train_loader or self.plugin.own_train(), function, True
        )
        val_site = self._loss_site(val_loader, function, None)
        if verdict.diagnosis == "nan" and nan is not None:
            where = f"epoch {nan['epoch']}" + (
                f", step {nan['step']}" if nan.get("step") is not None else ""
            )
            split = "validation" if nan["split"] == "validation" else "training"
            self.findings.append(
                Finding(
                    "TLR403",
                    f"the {split} loss became non-finite at {where}. Check the learning rate "
                    "(lower it, or warm it up), invalid values in the data (log of 0, division "
                    "by 0, NaN in the inputs) and exploding gradients (clip them); run again "
                    "with --detect-anomaly to name the operation that first produces NaN.",
                    capture.backward_site,
                    dict(nan),
                )
            )
        elif verdict.diagnosis == "overfitting":
            best = (verdict.best_epoch or 0) + 1
            self.findings.append(
                Finding(
                    "TLR401",
                    f"{verdict.reason} Add weight decay or dropout, augment the training "
                    f"data, or stop early (the lowest validation loss was at epoch {best}).",
                    val_site or (val_loader.site if val_loader else None),
                    dict(verdict.evidence),
                )
            )
        elif verdict.diagnosis == "underfitting":
            self.findings.append(
                Finding(
                    "TLR402",
                    f"{verdict.reason} Check the learning rate (too low to move, or so high "
                    "that the loss jumps), the model's capacity (a larger model), and that the "
                    "targets can be predicted from the inputs (aligned with them, correctly "
                    "encoded).",
                    train_site or capture.backward_site,
                    dict(verdict.evidence),
                )
            )
        elif (
            verdict.diagnosis == "inconclusive"
            and function is not None
            and (val_loader is None or val_function not in (None, function))
        ):
            if val_function is not None and val_function != function:
                message = (
                    f"the validation loop computes {val_function} and the training loop "
                    f"{function}, so their curves are not comparable: compute the training "
                    "loss function on the validation batches too."
                )
            else:
                message = (
                    "no validation loss was recorded, so fit cannot tell overfitting from "
                    "healthy training: compute the same loss function on the batches of a "
                    "validation DataLoader after each epoch."
                )
            site = train_site or (capture.train_loader.site if capture.train_loader else None)
            self.findings.append(
                Finding(
                    "TLR409",
                    message,
                    site,
                    {"train_function": function, "val_function": val_function},
                )
            )

    def _loss_site(
        self, loader: LoaderInfo | None, function: str | None, grad: bool | None
    ) -> Site | None:
        if loader is None or function is None:
            return None
        for (info, name, grad_enabled), site in self.plugin._loss_sites.items():
            if info is loader and name == function and (grad is None or grad == grad_enabled):
                return site
        return None

    def _plot(
        self,
        verdict: Diagnosis,
        train_loss: list[float | None],
        val_loss: list[float | None],
        function: str | None,
    ) -> tuple[str | None, str | None]:
        target = self.plugin.plot
        if target is None:
            return None, None
        from torchlint.runtime.svg_plot import Marker, Series, render_svg, write_svg

        path = Path(target)
        note: str | None = None
        if path.suffix.lower() != ".svg":
            path = path.with_suffix(".svg")
            note = f"fit draws SVG only: wrote {path.name} instead of {Path(target).name}"
        xs = [float(e + 1) for e in range(len(train_loss))]
        markers: list[Marker] = []
        if verdict.best_epoch is not None:
            markers.append(Marker(verdict.best_epoch + 1, "best validation"))
        svg = render_svg(
            [
                Series("train", xs, [finite_or_none(v) for v in train_loss]),
                Series("validation", xs, [finite_or_none(v) for v in val_loss]),
            ],
            title=f"torchlint fit: {verdict.diagnosis}",
            x_label="epoch",
            y_label=f"mean {function or 'loss'} per epoch",
            markers=markers,
        )
        try:
            write_svg(path, svg)
        except OSError as exc:
            return None, f"could not write {path}: {exc.strerror or exc}"
        return str(path), note

    def _anomaly(self) -> dict[str, Any] | None:
        plugin = self.plugin
        if not plugin.detect_anomaly:
            return None
        found = dict(plugin.anomaly) if plugin.anomaly is not None else None
        if found is None:
            match = _ANOMALY_ERROR.search(self.outcome.message or "")
            if match is None:
                return {
                    "enabled": True,
                    "operation": None,
                    "site": None,
                    "loss_was_finite": None,
                    "source": None,
                }
            # the forward traceback was not seen (warnings filtered): the error names the op
            found = {
                "operation": match.group(1),
                "site": None,
                "loss_was_finite": plugin._loss_finite,
                "source": "error message",
            }
        return {"enabled": True, **found}

    def _ended(self) -> str:
        outcome = self.outcome
        if outcome.kind == "stopped":
            return outcome.reason or "stopped"
        return {"finished": "script_finished", "exit": "script_exited"}.get(
            outcome.kind, "script_crashed"
        )


def _per_epoch(
    values: list[tuple[int, float | None]], count: int
) -> tuple[list[float | None], list[int]]:
    """Per epoch, the mean of its values (non-finite when any is) and how many there were."""
    sums: list[float] = [0.0] * count
    counts = [0] * count
    for epoch, value in values:
        if 0 <= epoch < count and value is not None:
            sums[epoch] += value
            counts[epoch] += 1
    return [s / n if n else None for s, n in zip(sums, counts, strict=True)], counts


def _scale(train: list[Record], val: list[Record]) -> str | None:
    """How the two splits' values are made comparable: "same" (one reduction on both sides,
    values as reported), "per_element" (each normalised to a mean over its elements), or None
    (the reductions differ and one side cannot be normalised)."""
    reductions = {r.reduction for r in train} | {r.reduction for r in val}
    if len(reductions) <= 1:
        return "same"
    if all(r.normalised for r in train + val):
        return "per_element"
    return None
