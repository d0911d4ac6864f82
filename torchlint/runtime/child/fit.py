"""`torchlint run fit`: the user's own loop for a few short epochs, its train and validation loss
curves, and what they say (healthy, overfitting, underfitting, NaN), plus two data checks on the
first batches: train/validation overlap and the label distribution.

The metric is the value of the functional loss the script calls (`F.cross_entropy`, or an
`nn.*Loss` module, which calls it), reported by `Capture` through `on_loss`. Each value belongs
to the split of the loader whose batch was fetched last: the training split is every loader a
backward followed (the values computed with gradients enabled), the validation split the loader
never trained on that reported the most values of the same function. Per epoch, each split's
value is the mean over its batches of that one function: the same metric and the same
aggregation on both splits.

Without a DataLoader, the script's own evaluation stands in for the loaders when it has one that
names its splits (nanoGPT's `estimate_loss`: `for split in ['train', 'val']`, before the first
training step and every `eval_interval` steps): the values of a loss computed without gradients
while a local variable of the calling code names a validation split are the validation split;
the training steps between two evaluations are an epoch.

An epoch is a pass over a training loader (`iter(loader)`) during which the primary optimizer
stepped. After `epochs` of them the run stops at the first fetch of the next training pass, so
the validation that follows the last epoch is still recorded. Values stay detached tensors on
their device until `result()`, which converts them in one go; the only other synchronisation is
one finiteness check of the last epoch's losses when the next epoch starts (to stop at a NaN).

The curve diagnosis is fit_diagnosis.py, what the data checks read from a batch fit_batches.py,
the result fit_result.py (with the data checks' findings, fit_data_checks.py).
"""

from __future__ import annotations

import re
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch

from torchlint.runtime.child.captured import Finding, LoaderInfo, OptimizerInfo, StopRun
from torchlint.runtime.child.fit_batches import class_labels, sample_hashes
from torchlint.runtime.child.fit_data_checks import EXAMPLES, IGNORE_INDEX
from torchlint.runtime.child.fit_diagnosis import CLASSIFICATION

# the curve diagnosis, imported from here by its tests
from torchlint.runtime.child.fit_diagnosis import MIN_EPOCHS as MIN_EPOCHS
from torchlint.runtime.child.fit_diagnosis import OVERFIT_EPOCHS_AFTER as OVERFIT_EPOCHS_AFTER
from torchlint.runtime.child.fit_diagnosis import OVERFIT_RISE as OVERFIT_RISE
from torchlint.runtime.child.fit_diagnosis import UNDERFIT_RATIO as UNDERFIT_RATIO
from torchlint.runtime.child.fit_diagnosis import UNDERFIT_VAL_RATIO as UNDERFIT_VAL_RATIO
from torchlint.runtime.child.fit_diagnosis import UNIFORM_FRACTION as UNIFORM_FRACTION
from torchlint.runtime.child.fit_diagnosis import Diagnosis as Diagnosis
from torchlint.runtime.child.fit_diagnosis import diagnose as diagnose
from torchlint.runtime.child.fit_result import Result
from torchlint.runtime.child.losses import LossValue
from torchlint.runtime.child.plugin import RL_MODULES, PluginResult, RunPlugin
from torchlint.runtime.sites import Site

if TYPE_CHECKING:
    from torchlint.runtime.child.assemble import Outcome
    from torchlint.runtime.child.capture import Capture

DEFAULT_EPOCHS = 5
DEFAULT_LIMIT_BATCHES = 20

# data-check limits
#: per loader, batches of its first pass whose samples are hashed, and bytes hashed at most
HASH_BATCHES = 16
HASH_BYTES = 128 * 2**20
#: per loader, batches of its first pass whose labels are read, and labels kept at most
LABEL_BATCHES = 32
MAX_LABELS = 20_000

#: values kept (loss values and backward losses), far above epochs x batches
MAX_RECORDS = 200_000
#: the run is stopped after this many times epochs x limit_batches primary steps whatever the
#: epochs say (a loop that never starts a new pass over its loader, e.g. itertools.cycle)
SAFETY_FACTOR = 4

#: the words a local variable of an evaluation names its split with
VALIDATION_WORDS = frozenset({"val", "valid", "validation", "dev", "test", "eval", "holdout"})
TRAINING_WORDS = frozenset({"train", "training"})
#: user frames (innermost first) whose locals are read for a split's name
SPLIT_FRAMES = 4
#: the most training steps a run waits for the script's own evaluations
OWN_EVAL_MAX_STEPS = 5000
_SPLIT_WORDS = VALIDATION_WORDS | TRAINING_WORDS
_ANOMALY_PREFIX = "Error detected in "
_FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<function>\S+)')


@dataclass(eq=False)
class Pass:
    """One pass over one loader (one `iter(loader)`), in the order the passes started."""

    loader: LoaderInfo
    number: int  # 1-based pass over this loader
    index: int  # position among all passes
    trained: bool = False  # a backward followed one of its batches
    stepped: bool = False  # the primary optimizer stepped during it: a training epoch


@dataclass(eq=False)
class Record:
    """One reported loss value (or, with `name` None, one loss passed to backward): as a mean
    over the loss's elements when its reduction allows (`normalised`), else as reported."""

    run: Pass
    name: str | None
    value: torch.Tensor | None
    grad_enabled: bool
    reduction: str | None = None
    normalised: bool = False


class FitPlugin(RunPlugin):
    check = "fit"
    wants_losses = True

    def __init__(self, capture: Capture, options: dict[str, Any]) -> None:
        super().__init__(capture, options)
        self.epochs = _positive(options.get("epochs"), DEFAULT_EPOCHS)
        self.limit_batches = _positive(options.get("limit_batches"), DEFAULT_LIMIT_BATCHES)
        plot = options.get("plot")
        self.plot = str(plot) if isinstance(plot, str) and plot else None
        self.detect_anomaly = bool(options.get("detect_anomaly"))
        self._passes: list[Pass] = []
        self._current: dict[LoaderInfo, Pass] = {}
        self._records: list[Record] = []
        self._compacted = 0  # records before this index hold views of stacked tensors
        self._stepped = 0  # training passes (epochs) so far
        self._last_trained: Pass | None = None
        self._pending_stop: str | None = None
        self._checked_epochs = 0  # epochs whose losses were checked for NaN
        self._stop_cap = SAFETY_FACTOR * self.epochs * self.limit_batches
        self._loss_sites: dict[tuple[LoaderInfo, str, bool], Site | None] = {}
        #: without a DataLoader: the script's own evaluation (see the module's doc), as a
        #: training "loader" and a validation one that no fetch ever reports
        self.own: OwnSplits | None = None
        self._early_evals: list[tuple[str, LossValue, Site | None]] = []
        self._first_training: list[LossValue] = []
        # data checks, on the first pass of each loader
        self._hashes: dict[LoaderInfo, dict[bytes, int]] = {}
        self._hashed_samples: dict[LoaderInfo, int] = {}
        self._hash_budget: dict[LoaderInfo, int] = {}
        self._hash_batches: dict[LoaderInfo, int] = {}
        self._labels: dict[LoaderInfo, list[torch.Tensor]] = {}
        self._label_count: dict[LoaderInfo, int] = {}
        self._labels_checked = 0  # label batches of the training loader checked for range
        self._range_finding: Finding | None = None
        # --detect-anomaly
        self.anomaly: dict[str, Any] | None = None
        self._loss_finite: bool | None = None
        if self.detect_anomaly:
            torch.autograd.set_detect_anomaly(True)
            self._install_anomaly_listener()

    # the step bound ------------------------------------------------------------------------

    def total_steps(self) -> int | None:
        # `Capture` uses this both as the progress bar's total and as a step bound (it sets
        # stop_reason "steps_done" when the primary optimizer reaches it). epochs x batches is
        # the right total for a loader with at least `limit_batches` batches; a shorter one
        # ends its epochs sooner and the run stops before the bar is full. More than one step
        # per batch would reach it early, so `on_step_end` moves it one epoch further each
        # time the run gets there, up to SAFETY_FACTOR times the planned steps: past that the
        # bound is left to stop a loop that never starts a new pass over its loader.
        return self.epochs * self.limit_batches

    def batch_limit(self, loader: LoaderInfo) -> int | None:
        return self.limit_batches

    def framework_limits(self) -> dict[str, Any]:
        # one epoch more than asked: the run stops at the first fetch of the one after the
        # last, so the validation that follows the last epoch is recorded
        return {
            "epochs": self.epochs + 1,
            "limit_train_batches": self.limit_batches,
            "limit_val_batches": self.limit_batches,
            "validation": True,
        }

    # events --------------------------------------------------------------------------------

    def on_loader_iter(self, loader: LoaderInfo) -> None:
        self._compact()
        previous = self._current.get(loader)
        run = Pass(loader, previous.number + 1 if previous else 1, len(self._passes))
        self._passes.append(run)
        self._current[loader] = run
        if not self._trained_on(loader):
            return
        if self._stepped > self._checked_epochs:
            self._checked_epochs = self._stepped
            if self._last_epoch_went_nan():
                self._pending_stop = "nan"
        if self._stepped >= self.epochs:
            self._pending_stop = self._pending_stop or "epochs_done"

    def on_fetch_start(self, loader: LoaderInfo) -> None:
        # a pending stop ends the run at the first fetch of the next training pass; a pass over
        # the training loader under no_grad (an evaluation on training data) still runs
        if self._pending_stop is not None and torch.is_grad_enabled() and self._trained_on(loader):
            self.capture.stop_reason = self._pending_stop
            raise StopRun(self._pending_stop)

    def on_fetch_end(self, loader: LoaderInfo, batch: Any) -> None:
        run = self._current.get(loader)
        if run is None or run.number != 1:
            return
        try:
            self._hash(loader, batch)
            self._keep_labels(loader, batch)
            if loader is self.capture.train_loader:
                self._check_label_range()
        except Exception:  # the data checks must never break the user's run
            self._hash_budget[loader] = 0
            self._label_count[loader] = MAX_LABELS

    def on_first_backward(self, loss: torch.Tensor) -> None:
        capture = self.capture
        rl = next((name for name in RL_MODULES if name in sys.modules), None)
        if rl is not None:
            self.not_applicable(
                f"reinforcement learning ({rl} is loaded): the loss of an RL objective does not "
                "measure generalisation, and there is no validation split",
                capture.backward_site,
            )
        if capture.train_loader is None and self._start_own_evaluation():
            return
        if capture.train_loader is None:
            forward = next((f for f in capture.forwards if f.grad_enabled), None)
            where = (
                f" (its first training forward is at line {forward.site.line})"
                if (forward is not None and forward.site is not None)
                else ""
            )
            self.not_applicable(
                "fit reads epochs of a torch.utils.data.DataLoader, and this script builds its "
                f"batches itself{where}; `torchlint run overfit`, `grads` and `profile` apply",
                forward.site if forward is not None else capture.backward_site,
            )

    def on_loss(self, value: LossValue) -> None:
        capture = self.capture
        if capture.last_fetch is None and not value.grad_enabled:
            split, where = self._split_named()
            if self.own is None and not capture.backward_calls and split is not None:
                self._early_evals.append((split, value, where))
            elif self.own is not None and split in VALIDATION_WORDS:
                self._own_record(self.own.validation(self), value)
            return
        if value.grad_enabled and capture.last_fetch is None:
            if self.own is not None:
                self._own_record(self.own.training(self), value)
            elif not capture.backward_calls:
                self._first_training.append(value)  # the first step's, before the backward
            return
        loader = self.capture.last_fetch
        run = self._current.get(loader) if loader is not None else None
        if run is None or loader is None or len(self._records) >= MAX_RECORDS:
            return
        name, grad_enabled = value.name, value.grad_enabled
        per_element = value.per_element
        self._records.append(
            Record(
                run,
                name,
                per_element if per_element is not None else value.value,
                grad_enabled,
                value.reduction,
                per_element is not None,
            )
        )
        key = (loader, name, grad_enabled)
        if key not in self._loss_sites:
            self._loss_sites[key] = self.capture.finder.find()

    def on_backward_start(self, loss: torch.Tensor) -> None:
        loader = self.capture.last_fetch
        run = self._current.get(loader) if loader is not None else None
        if self.own is not None and loader is None:
            run = self.own_pass(self.own.train)
        if run is None:
            return
        run.trained = True
        if not run.stepped and self._stepped >= self.epochs:
            # a training pass that no fetch stopped (a loader created anew each epoch)
            self.capture.stop_reason = "epochs_done"
            raise StopRun("epochs_done")
        self._last_trained = run
        if len(self._records) < MAX_RECORDS:
            value = loss.detach().float().reshape(()) if loss.numel() == 1 else None
            self._records.append(Record(run, None, value, True))
        if self.detect_anomaly:
            self._loss_finite = bool(torch.isfinite(loss.detach()).all())

    def on_step_end(self, optimizer: OptimizerInfo) -> None:
        capture = self.capture
        if optimizer is not capture.primary:
            return
        run = self._last_trained
        if run is not None and not run.stepped:
            run.stepped = True
            self._stepped += 1
        if optimizer.steps >= capture.target_steps and capture.target_steps < self._stop_cap:
            capture.target_steps = min(self._stop_cap, optimizer.steps + self.limit_batches)

    # the script's own evaluation ----------------------------------------------------------

    def _split_named(self) -> tuple[str | None, Site | None]:
        """The split a local variable of the innermost user frames names ("val" from
        `for split in ['train', 'val']`), lowercased, and that frame's line; None when none
        does."""
        finder = self.capture.finder
        frame = sys._getframe(1)
        seen = 0
        while frame is not None and seen < SPLIT_FRAMES:
            if finder._kind(frame.f_code.co_filename) == 2:
                seen += 1
                for value in frame.f_locals.values():
                    if isinstance(value, str) and value.lower() in _SPLIT_WORDS:
                        code = frame.f_code
                        return value.lower(), Site(code.co_filename, frame.f_lineno, code.co_name)
            frame = frame.f_back  # type: ignore[assignment]
        return None, None

    def _start_own_evaluation(self) -> bool:
        """At the first backward without a DataLoader: use the script's own evaluation when it
        evaluated a validation split before training (the loss values are kept from there)."""
        validation = [
            (v, site) for split, v, site in self._early_evals if split in VALIDATION_WORDS
        ]
        self._early_evals = []
        if not validation:
            return False
        capture = self.capture
        forward = next((f for f in capture.forwards if f.grad_enabled), None)
        self.own = OwnSplits(
            LoaderInfo(_own_split("training steps"), forward.site if forward else None),
            LoaderInfo(_own_split("the script's own evaluation"), validation[0][1]),
        )
        # the evaluation before training: a validation pass before the first epoch
        run = self.own.validation(self)
        for value, _ in validation:
            self._own_record(run, value)
        run = self.own.training(self)
        for value in self._first_training:
            self._own_record(run, value)
        self._first_training = []
        self._stop_cap = max(self._stop_cap, OWN_EVAL_MAX_STEPS)
        capture.target_steps = max(capture.target_steps, OWN_EVAL_MAX_STEPS)
        return True

    def _own_record(self, run: Pass, value: LossValue) -> None:
        if len(self._records) >= MAX_RECORDS:
            return
        per_element = value.per_element
        self._records.append(
            Record(
                run,
                value.name,
                per_element if per_element is not None else value.value,
                value.grad_enabled,
                value.reduction,
                per_element is not None,
            )
        )
        key = (run.loader, value.name, value.grad_enabled)
        if key not in self._loss_sites:
            self._loss_sites[key] = self.capture.finder.find()

    def own_pass(self, loader: LoaderInfo) -> Pass:
        """The pass of the own evaluation's `loader` under way, or a new one (a training pass
        after an evaluation: the run stops there once the epochs are done)."""
        current = self._current.get(loader)
        if current is not None and self._passes and self._passes[-1] is current:
            return current
        if loader is self.own_train() and self._stepped >= self.epochs:
            self.capture.stop_reason = "epochs_done"
            raise StopRun("epochs_done")
        self._compact()
        run = Pass(loader, current.number + 1 if current else 1, len(self._passes))
        self._passes.append(run)
        self._current[loader] = run
        return run

    def own_train(self) -> LoaderInfo | None:
        return self.own.train if self.own is not None else None

    # helpers of the events -----------------------------------------------------------------

    def _compact(self) -> None:
        """Stack the values recorded since the last pass began into one tensor per device
        (asynchronous; each record keeps a view), so a long run holds a few allocations instead
        of one per value."""
        fresh = [r for r in self._records[self._compacted :] if r.value is not None]
        self._compacted = len(self._records)
        by_device: dict[torch.device, list[Record]] = {}
        for record in fresh:
            if record.value is not None:
                by_device.setdefault(record.value.device, []).append(record)
        for records in by_device.values():
            if len(records) < 2:
                continue
            with torch.no_grad():
                stacked = torch.stack(
                    [r.value.float().reshape(()) for r in records if r.value is not None]
                )
            for record, value in zip(records, stacked.unbind(), strict=True):
                record.value = value

    def _trained_on(self, loader: LoaderInfo) -> bool:
        return loader is self.capture.train_loader or any(
            run.trained for run in self._passes if run.loader is loader
        )

    def _last_epoch_went_nan(self) -> bool:
        """Whether a loss passed to backward in the last training pass was not finite (one
        synchronisation per epoch)."""
        last = next((run for run in reversed(self._passes) if run.stepped), None)
        values = [
            r.value
            for r in self._records
            if r.run is last and r.name is None and r.value is not None
        ]
        if not values:
            return False
        device = values[0].device
        stacked = torch.stack([v.to(device) for v in values])
        return not bool(torch.isfinite(stacked).all())

    def _hash(self, loader: LoaderInfo, batch: Any) -> None:
        done = self._hash_batches.get(loader, 0)
        budget = self._hash_budget.get(loader, HASH_BYTES)
        if done >= HASH_BATCHES or budget <= 0:
            return
        self._hash_batches[loader] = done + 1
        try:
            hashed = sample_hashes(batch, budget)
        except Exception:  # an exotic tensor type: the check is skipped, never the run
            hashed = None
        if hashed is None:
            self._hash_budget[loader] = 0  # nothing hashable: stop trying on this loader
            return
        hashes, used = hashed
        table = self._hashes.setdefault(loader, {})
        start = self._hashed_samples.get(loader, 0)
        for offset, digest in enumerate(hashes):
            table.setdefault(digest, start + offset)
        self._hashed_samples[loader] = start + len(hashes)
        self._hash_budget[loader] = budget - used

    def _keep_labels(self, loader: LoaderInfo, batch: Any) -> None:
        count = self._label_count.get(loader, 0)
        kept = self._labels.setdefault(loader, [])
        if len(kept) >= LABEL_BATCHES or count >= MAX_LABELS:
            return
        labels = class_labels(batch)
        if labels is None:
            return
        kept.append(labels.detach().clone())
        self._label_count[loader] = count + int(labels.shape[0])

    def num_classes(self, mean_only: bool = False) -> int | None:
        """C from the first classification loss call of the first training step (`mean_only`:
        only when that call averages, so log C is the loss of a uniform prediction)."""
        for call in self.capture.loss_calls:
            if call.function in CLASSIFICATION and call.num_classes:
                if mean_only and call.reduction != "mean":
                    return None
                return call.num_classes
        return None

    def _check_label_range(self) -> None:
        """Labels of the training loader's first batches outside 0..C-1: reported as soon as
        they are fetched, so the finding survives the crash they cause in the loss."""
        train = self.capture.train_loader
        if train is None or self._range_finding is not None:
            return
        if any(f.code == "TLR301" for f in self.capture.findings):
            return  # the first-step check already explained it
        classes = self.num_classes()
        batches = self._labels.get(train, [])
        if classes is None or self._labels_checked >= len(batches):
            return
        fresh = batches[self._labels_checked :]
        self._labels_checked = len(batches)
        labels = torch.cat([b.reshape(-1).to("cpu") for b in fresh])
        bad = labels[((labels < 0) & (labels != IGNORE_INDEX)) | (labels >= classes)]
        if bad.numel() == 0:
            return
        examples = sorted(set(bad.tolist()))[:EXAMPLES]
        finding = Finding(
            "TLR408",
            f"labels outside 0..{classes - 1} in the first batches of the training loader "
            f"created here ({bad.numel()} of them, e.g. {', '.join(map(str, examples))}), but "
            f"the model predicts {classes} classes: cross-entropy fails on them (on CUDA with "
            "an opaque device-side assert). Fix the labels (1-based labels need a `- 1`) or "
            "the number of outputs.",
            train.site,
            {"num_classes": classes, "examples": examples, "count": int(bad.numel())},
        )
        self._range_finding = finding
        self.capture.findings.append(finding)

    # --detect-anomaly ------------------------------------------------------------------------

    def _install_anomaly_listener(self) -> None:
        """Anomaly mode reports the forward traceback of the failing operation as a warning
        just before it raises: read it on its way to the user's stderr."""
        original: Callable[..., Any] = warnings.showwarning
        plugin = self

        def showwarning(message: Any, category: Any, *args: Any, **kwargs: Any) -> None:
            text = str(message)
            if text.startswith(_ANOMALY_PREFIX) and plugin.anomaly is None:
                plugin._on_anomaly(text)
            original(message, category, *args, **kwargs)

        warnings.showwarning = showwarning

    def _on_anomaly(self, text: str) -> None:
        operation = text[len(_ANOMALY_PREFIX) :].split(".", 1)[0].strip() or None
        site: Site | None = None
        for match in _FRAME.finditer(text):  # outermost first: the last user frame wins
            filename = match["file"]
            if self.capture.finder.is_user_file(filename):
                site = Site(filename, int(match["line"]), match["function"])
        self.anomaly = {
            "operation": operation,
            "site": site.to_json() if site is not None else None,
            "loss_was_finite": self._loss_finite,
            "source": "forward traceback" if site is not None else None,
        }
        if site is None:
            return
        if self._loss_finite is False:
            detail = (
                "the loss passed to backward was already non-finite, so the NaN arose in the "
                "forward pass, before this operation: anomaly mode names the first backward "
                "operation that returned NaN, downstream of the source. Check the values "
                "feeding this line in the forward pass."
            )
        else:
            detail = (
                "the forward values were finite, so this operation's gradient is where the NaN "
                "starts (a sqrt, log, division or norm at 0 or below, often behind a "
                "torch.where whose other branch hides it in the forward pass). Make its input "
                "safe in every branch, e.g. torch.sqrt(x.clamp_min(1e-12)) inside the where."
            )
        self.capture.findings.append(
            Finding(
                "TLR404",
                f"autograd anomaly detection: the backward of {operation} (from this line) "
                f"returned NaN; {detail}",
                site,
                {"operation": operation, "loss_was_finite": self._loss_finite},
            )
        )

    # the result ----------------------------------------------------------------------------

    def result(self, outcome: Outcome) -> PluginResult:
        return self.inapplicable_result() or Result(self, outcome).build()


class _OwnSplit:
    """Stands in for a DataLoader in the script's own evaluation (its own split key)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.dataset = self


def _own_split(name: str) -> Any:
    """A stand-in for a loader (typed as one: LoaderInfo reads only its `dataset`)."""
    return _OwnSplit(name)


@dataclass
class OwnSplits:
    train: LoaderInfo
    val: LoaderInfo

    def training(self, plugin: FitPlugin) -> Pass:
        return plugin.own_pass(self.train)

    def validation(self, plugin: FitPlugin) -> Pass:
        return plugin.own_pass(self.val)


def _positive(value: Any, default: int) -> int:
    return (
        value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else default
    )
