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
"""

from __future__ import annotations

import ctypes
import hashlib
import linecache
import math
import re
import sys
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch
from torch.utils.data import Subset, SubsetRandomSampler

from torchlint.runtime.child.captured import Finding, LoaderInfo, OptimizerInfo, StopRun
from torchlint.runtime.child.core import first_tensor
from torchlint.runtime.child.losses import LossValue
from torchlint.runtime.child.overfit import RL_MODULES
from torchlint.runtime.child.plugin import PluginResult, RunPlugin
from torchlint.runtime.results import finite_or_none
from torchlint.runtime.sites import Site

if TYPE_CHECKING:
    from torchlint.runtime.child.assemble import Outcome
    from torchlint.runtime.child.capture import Capture

DEFAULT_EPOCHS = 5
DEFAULT_LIMIT_BATCHES = 20

# diagnosis thresholds (docs/runtime-fit.md)
#: epochs with both a training and a validation loss needed for any diagnosis but nan
MIN_EPOCHS = 2
#: overfitting: the last validation loss at least this much (relative) above its minimum ...
OVERFIT_RISE = 0.10
#: ... with at least this many epochs after the minimum, every one of them above it
OVERFIT_EPOCHS_AFTER = 2
#: underfitting: the last training loss is still at least this fraction of where it started ...
UNDERFIT_RATIO = 0.90
#: ... (and the last validation loss at least this fraction of the first) ...
UNDERFIT_VAL_RATIO = 0.90
#: ... or, for classification, both stay at least this fraction of log C (uniform prediction)
UNIFORM_FRACTION = 0.90
#: where the training loss started: the mean of its first values
START_WINDOW = 3

# data-check limits
#: per loader, batches of its first pass whose samples are hashed, and bytes hashed at most
HASH_BATCHES = 16
HASH_BYTES = 128 * 2**20
#: per loader, batches of its first pass whose labels are read, and labels kept at most
LABEL_BATCHES = 32
MAX_LABELS = 20_000
#: a class counts as never seen only when at least this many labels per class were read
MIN_LABELS_PER_CLASS = 20
#: extreme imbalance: one class holds more than this share of at least `MIN_IMBALANCE_LABELS`
IMBALANCE_SHARE = 0.90
MIN_IMBALANCE_LABELS = 50
#: Subset/sampler index lists longer than this are not compared
MAX_INDICES = 5_000_000
#: the default `ignore_index` of cross-entropy and NLL: not a label out of range
IGNORE_INDEX = -100
#: examples given in a finding
EXAMPLES = 5

#: values kept (loss values and backward losses), far above epochs x batches
MAX_RECORDS = 200_000
#: the run is stopped after this many times epochs x limit_batches primary steps whatever the
#: epochs say (a loop that never starts a new pass over its loader, e.g. itertools.cycle)
SAFETY_FACTOR = 4

_TARGET_KEYS = ("label", "labels", "target", "targets", "y")
_CLASSIFICATION = ("cross_entropy", "nll_loss")
#: stop reasons of a run that fit (or the step bound) ended, as opposed to a first-step check
_OWN_STOPS = ("epochs_done", "nan", "steps_done")
#: the words a local variable of an evaluation names its split with
VALIDATION_WORDS = frozenset({"val", "valid", "validation", "dev", "test", "eval", "holdout"})
TRAINING_WORDS = frozenset({"train", "training"})
#: user frames (innermost first) whose locals are read for a split's name
SPLIT_FRAMES = 4
#: the most training steps a run waits for the script's own evaluations
OWN_EVAL_MAX_STEPS = 5000
_SPLIT_WORDS = VALIDATION_WORDS | TRAINING_WORDS
_ANOMALY_PREFIX = "Error detected in "
_ANOMALY_ERROR = re.compile(r"Function '(\w+)' returned nan values")
_FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<function>\S+)')


@dataclass(eq=False)
class _Pass:
    """One pass over one loader (one `iter(loader)`), in the order the passes started."""

    loader: LoaderInfo
    number: int  # 1-based pass over this loader
    index: int  # position among all passes
    trained: bool = False  # a backward followed one of its batches
    stepped: bool = False  # the primary optimizer stepped during it: a training epoch


@dataclass(eq=False)
class _Record:
    """One reported loss value (or, with `name` None, one loss passed to backward): as a mean
    over the loss's elements when its reduction allows (`normalised`), else as reported."""

    run: _Pass
    name: str | None
    value: torch.Tensor | None
    grad_enabled: bool
    reduction: str | None = None
    normalised: bool = False


@dataclass
class Diagnosis:
    diagnosis: str
    reason: str
    best_epoch: int | None = None  # 0-based epoch of the lowest validation loss
    evidence: dict[str, Any] = field(default_factory=dict)


def _g(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3g}"


def diagnose(
    train: Sequence[float | None],
    val: Sequence[float | None],
    train_start: float | None,
    num_classes: int | None = None,
) -> Diagnosis:
    """The curve diagnosis from per-epoch training and validation losses (the same metric and
    aggregation; None where an epoch has none). `train_start` is where the training loss
    started (the mean of its first values); `num_classes` enables the log C rule. Non-finite
    values are the caller's concern (diagnosis `nan`). When unsure: inconclusive."""
    paired = [
        (e, t, v)
        for e, (t, v) in enumerate(zip(train, val, strict=False))
        if t is not None and v is not None
    ]
    if len(paired) < MIN_EPOCHS:
        return Diagnosis(
            "inconclusive",
            f"Only {len(paired)} epoch(s) had both a training and a validation loss; "
            f"reading the curves needs at least {MIN_EPOCHS}.",
        )
    epochs = [e for e, _, _ in paired]
    ts = [t for _, t, _ in paired]
    vs = [v for _, _, v in paired]
    last_t, first_t, last_v, first_v = ts[-1], ts[0], vs[-1], vs[0]
    best = min(range(len(vs)), key=lambda i: vs[i])
    best_epoch = epochs[best]
    positive = min(ts + vs) > 0 and (train_start is None or train_start > 0)
    start = train_start if train_start is not None else first_t
    evidence: dict[str, Any] = {"best_epoch": best_epoch + 1}

    # underfitting first: a model that did not fit the training set cannot be overfitting it
    if positive:
        ratio = last_t / start
        val_ratio = last_v / first_v
        evidence.update(train_ratio=ratio, val_ratio=val_ratio)
        if ratio >= UNDERFIT_RATIO and val_ratio >= UNDERFIT_VAL_RATIO:
            return Diagnosis(
                "underfitting",
                f"Both losses stayed high: the training loss went from {_g(start)} at the "
                f"start to {_g(last_t)} ({ratio:.2f}x) and the validation loss from "
                f"{_g(first_v)} to {_g(last_v)} ({val_ratio:.2f}x): underfitting or "
                "optimisation trouble.",
                best_epoch,
                evidence,
            )
    if num_classes is not None and num_classes >= 2:
        uniform = math.log(num_classes)
        evidence["uniform_loss"] = uniform
        if min(last_t, last_v) >= UNIFORM_FRACTION * uniform:
            return Diagnosis(
                "underfitting",
                f"Both losses stayed near log C = {uniform:.3g}, the loss of a model that "
                f"predicts all {num_classes} classes uniformly (training {_g(last_t)}, "
                f"validation {_g(last_v)} at the last epoch): underfitting or optimisation "
                "trouble.",
                best_epoch,
                evidence,
            )
    after = vs[best + 1 :]
    rise = (last_v - vs[best]) / vs[best] if vs[best] > 0 else 0.0
    if (
        len(after) >= OVERFIT_EPOCHS_AFTER
        and all(v > vs[best] for v in after)
        and rise >= OVERFIT_RISE
        and last_t < ts[best]
    ):
        evidence["val_rise"] = rise
        return Diagnosis(
            "overfitting",
            f"The validation loss rose {rise:.0%} above its minimum {_g(vs[best])} at epoch "
            f"{best_epoch + 1} (to {_g(last_v)}) while the training loss kept falling "
            f"({_g(ts[best])} -> {_g(last_t)}): overfitting, the model memorises the "
            "training set.",
            best_epoch,
            evidence,
        )
    if last_t < first_t and last_v < first_v:
        return Diagnosis(
            "healthy",
            f"Both losses fell: training {_g(first_t)} -> {_g(last_t)} and validation "
            f"{_g(first_v)} -> {_g(last_v)} over {len(paired)} epochs.",
            best_epoch,
            evidence,
        )
    if last_t >= first_t:
        detail = f"the training loss did not fall ({_g(first_t)} -> {_g(last_t)})"
    else:
        detail = (
            f"the training loss fell ({_g(first_t)} -> {_g(last_t)}) but the validation loss "
            f"did not ({_g(first_v)} -> {_g(last_v)}), without a clear rise above its minimum"
        )
    return Diagnosis(
        "inconclusive",
        f"The curves fit no clear pattern: {detail}; run more epochs (--epochs) or more "
        "batches per epoch (--limit-batches).",
        best_epoch,
        evidence,
    )


# ----------------------------------------------------------------------------------------------
# batches: samples and labels


def _target_of(batch: Any) -> torch.Tensor | None:
    if isinstance(batch, (list, tuple)) and len(batch) >= 2 and isinstance(batch[1], torch.Tensor):
        return batch[1]
    if isinstance(batch, dict):
        for key in _TARGET_KEYS:
            value = batch.get(key)
            if isinstance(value, torch.Tensor):
                return value
    return None


def _input_of(batch: Any) -> torch.Tensor | None:
    if isinstance(batch, dict):
        rest = {k: v for k, v in batch.items() if k not in _TARGET_KEYS}
        return first_tensor(rest)
    return first_tensor(batch)


def _rows(tensor: torch.Tensor) -> tuple[bytes, int, str]:
    """The tensor's bytes (on the CPU, contiguous), the bytes per row, and its row type."""
    flat = tensor.detach().to("cpu").contiguous()
    flat = flat.reshape(flat.shape[0], -1)
    width = flat.shape[1] * flat.element_size()
    data = ctypes.string_at(flat.data_ptr(), flat.shape[0] * width) if width else b""
    return data, width, f"{flat.dtype}{list(tensor.shape[1:])}"


def sample_hashes(batch: Any, budget: int) -> tuple[list[bytes], int] | None:
    """One hash per sample of the batch (the bytes of its row of the first tensor, and of the
    target's row when the batch has one of the same length) and the bytes hashed; None when
    the batch holds no tensor with rows or is bigger than `budget` bytes."""
    inp = _input_of(batch)
    if inp is None or inp.dim() == 0 or inp.numel() == 0 or inp.layout != torch.strided:
        return None
    parts = [inp]
    target = _target_of(batch)
    if (
        target is not None
        and target is not inp
        and target.dim() > 0
        and target.shape[0] == inp.shape[0]
        and target.layout == torch.strided
    ):
        parts.append(target)
    size = sum(t.numel() * t.element_size() for t in parts)
    if size > budget:
        return None
    blobs = [_rows(t) for t in parts]
    hashes: list[bytes] = []
    for i in range(int(inp.shape[0])):
        digest = hashlib.blake2b(digest_size=16)
        for data, width, kind in blobs:
            digest.update(kind.encode())
            digest.update(data[i * width : (i + 1) * width])
        hashes.append(digest.digest())
    return hashes, size


def class_labels(batch: Any) -> torch.Tensor | None:
    """The batch's class labels: an integer 1-D target, else None."""
    target = _target_of(batch)
    if target is None or target.dim() != 1 or target.is_floating_point() or target.is_complex():
        return None
    if target.dtype == torch.bool:
        return None
    return target


def index_view(loader: Any) -> tuple[Any, list[int] | None] | None:
    """(the dataset at the bottom of any `Subset`s, the indices into it that the loader draws
    from, or None for all of them); None when the indices cannot be read or are too many."""
    dataset = getattr(loader, "dataset", None)
    if dataset is None:
        return None
    indices: list[int] | None = None
    try:
        sampler = getattr(loader, "sampler", None)
        if isinstance(sampler, SubsetRandomSampler):
            indices = _int_list(sampler.indices)
        while isinstance(dataset, Subset):
            inner = _int_list(dataset.indices)
            indices = inner if indices is None else [inner[i] for i in indices]
            dataset = dataset.dataset
    except (TypeError, IndexError, ValueError, OverflowError):
        return None
    if indices is not None and len(indices) > MAX_INDICES:
        return None
    return dataset, indices


def _int_list(indices: Any) -> list[int]:
    if isinstance(indices, torch.Tensor):
        values: list[int] = indices.reshape(-1).tolist()
        return values
    if len(indices) > MAX_INDICES:
        raise ValueError("too many indices")
    return [int(i) for i in indices]


# ----------------------------------------------------------------------------------------------
# the plugin


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
        self._passes: list[_Pass] = []
        self._current: dict[LoaderInfo, _Pass] = {}
        self._records: list[_Record] = []
        self._compacted = 0  # records before this index hold views of stacked tensors
        self._stepped = 0  # training passes (epochs) so far
        self._last_trained: _Pass | None = None
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
        run = _Pass(loader, previous.number + 1 if previous else 1, len(self._passes))
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
            _Record(
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
            self._records.append(_Record(run, None, value, True))
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

    def _own_record(self, run: _Pass, value: LossValue) -> None:
        if len(self._records) >= MAX_RECORDS:
            return
        per_element = value.per_element
        self._records.append(
            _Record(
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

    def own_pass(self, loader: LoaderInfo) -> _Pass:
        """The pass of the own evaluation's `loader` under way, or a new one (a training pass
        after an evaluation: the run stops there once the epochs are done)."""
        current = self._current.get(loader)
        if current is not None and self._passes and self._passes[-1] is current:
            return current
        if loader is self.own_train() and self._stepped >= self.epochs:
            self.capture.stop_reason = "epochs_done"
            raise StopRun("epochs_done")
        self._compact()
        run = _Pass(loader, current.number + 1 if current else 1, len(self._passes))
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
        by_device: dict[torch.device, list[_Record]] = {}
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
            if call.function in _CLASSIFICATION and call.num_classes:
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
        return self.inapplicable_result() or _Result(self, outcome).build()


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

    def training(self, plugin: FitPlugin) -> _Pass:
        return plugin.own_pass(self.train)

    def validation(self, plugin: FitPlugin) -> _Pass:
        return plugin.own_pass(self.val)


def _line(site: Site | None) -> str:
    return str(site.line) if site is not None else "?"


def _positive(value: Any, default: int) -> int:
    return (
        value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else default
    )


# ----------------------------------------------------------------------------------------------
# assembling the result


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


class _Result:
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
        classes = plugin.num_classes(mean_only=True) if function in _CLASSIFICATION else None

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
        self, other: list[tuple[_Record, float | None]], function: str | None
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
        train_records: list[_Record],
        val_records: list[tuple[int, float | None, _Record]],
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
        backward: list[tuple[int, float | None, _Record]],
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

    def _leakage(self) -> list[dict[str, Any]]:
        """Overlap of the training loader with each loader never trained on: exact through
        Subset/sampler indices when both draw from one dataset object, else by sample hashes
        of their first batches. A loader that draws the training samples themselves is an
        evaluation of the training split on purpose (`role` train_eval, no finding) when it is
        named for training (`train_eval_loader = ...`) or another loader holds a disjoint
        split; otherwise every overlap is a leak."""
        train = self.capture.train_loader
        if train is None:
            return []
        results: list[dict[str, Any]] = []
        infos: list[LoaderInfo] = []
        trained = {id(run.loader) for run in self.plugin._passes if run.trained}
        for info in self.capture.loaders:
            # a loader never trained on is checked even over the training dataset object
            # (`val_loader = DataLoader(train_dataset, ...)`: all of it overlaps)
            if info is train or id(info) in trained:
                continue
            if any(split_key(info) == r["split"] for r in results):
                continue  # the same split (a loader made anew for each evaluation)
            result = self._overlap(train, info)
            result["site"] = info.site.to_json() if info.site else None
            result["split"] = split_key(info)
            result["validation"] = False
            results.append(result)
            infos.append(info)
        disjoint = any(r["overlap"] == 0 and r["val_checked"] for r in results)
        for info, result in zip(infos, results, strict=True):
            full = result["val_checked"] > 0 and result["overlap"] >= result["val_checked"]
            words = set(re.split(r"[^a-z]+", _assigned_name(info)))
            held_out = bool(words & {"val", "valid", "validation", "test", "dev", "holdout"})
            on_purpose = full and not held_out and ("train" in words or disjoint)
            result["role"] = "train_eval" if on_purpose else "other"
            if result["overlap"] and not on_purpose:
                self.findings.append(self._leak_finding(info, result))
        return results

    def _overlap(self, train: LoaderInfo, other: LoaderInfo) -> dict[str, Any]:
        train_view, other_view = index_view(train.loader), index_view(other.loader)
        if train_view is not None and other_view is not None and train_view[0] is other_view[0]:
            base = train_view[0]
            try:
                size = len(base)
            except TypeError:
                size = None
            if size is not None:
                train_set = set(train_view[1]) if train_view[1] is not None else None
                other_idx = other_view[1] if other_view[1] is not None else range(size)
                other_set = set(other_idx)
                if train_set is None:
                    common = sorted(i for i in other_set if 0 <= i < size)
                else:
                    common = sorted(train_set & other_set)
                return {
                    "method": "indices",
                    "overlap": len(common),
                    "train_checked": len(train_set) if train_set is not None else size,
                    "val_checked": len(other_set),
                    "examples": [{"index": i} for i in common[:EXAMPLES]],
                }
        train_hashes = self.plugin._hashes.get(train, {})
        other_hashes = self.plugin._hashes.get(other, {})
        if not train_hashes or not other_hashes:
            return {
                "method": "none",
                "overlap": 0,
                "train_checked": self.plugin._hashed_samples.get(train, 0),
                "val_checked": self.plugin._hashed_samples.get(other, 0),
                "examples": [],
            }
        common_hashes = [h for h in other_hashes if h in train_hashes]
        pairs = sorted((other_hashes[h], train_hashes[h]) for h in common_hashes)
        return {
            "method": "hashes",
            "overlap": len(pairs),
            "train_checked": self.plugin._hashed_samples.get(train, 0),
            "val_checked": self.plugin._hashed_samples.get(other, 0),
            "examples": [{"val_sample": v, "train_sample": t} for v, t in pairs[:EXAMPLES]],
        }

    def _leak_finding(self, info: LoaderInfo, result: dict[str, Any]) -> Finding:
        overlap, checked = result["overlap"], result["val_checked"]
        if result["method"] == "indices":
            shown = ", ".join(str(e["index"]) for e in result["examples"])
            what = (
                f"{overlap} of the {checked} samples this loader draws from its dataset are "
                f"also training samples (dataset indices {shown}"
                f"{', ...' if overlap > len(result['examples']) else ''}; exact, from the "
                "Subset/sampler indices of both loaders)"
            )
        else:
            shown = ", ".join(
                f"#{e['val_sample']} = training #{e['train_sample']}" for e in result["examples"]
            )
            what = (
                f"{overlap} of the {checked} samples of its first batches are byte-for-byte "
                f"copies of samples among the first {result['train_checked']} training ones "
                f"({shown}{', ...' if overlap > len(result['examples']) else ''})"
            )
        return Finding(
            "TLR405",
            f"the loader created here overlaps the training data: {what}. A validation loss "
            "on samples the model trains on measures memory, not generalisation. Split the "
            "data once (torch.utils.data.random_split, or disjoint index ranges) and give "
            "each loader its own part.",
            info.site,
            {k: result[k] for k in ("method", "overlap", "train_checked", "val_checked")}
            | {"examples": result["examples"]},
        )

    def _labels(self) -> dict[str, Any]:
        train = self.capture.train_loader
        batches = self.plugin._labels.get(train, []) if train is not None else []
        classes = self.plugin.num_classes()
        empty: dict[str, Any] = {
            "checked": 0,
            "num_classes": classes,
            "counts": [],
            "missing": [],
            "dominant": None,
            "out_of_range": [],
            "shuffled": None,
        }
        if train is None or not batches:
            return empty
        labels = torch.cat([b.reshape(-1).to("cpu") for b in batches]).long()
        valid = labels[labels != IGNORE_INDEX]
        out_of_range = valid[(valid < 0) | (valid >= classes)] if classes else valid[valid < 0]
        in_range = valid[(valid >= 0) & (valid < classes)] if classes else valid[valid >= 0]
        size = classes if classes else (int(in_range.max()) + 1 if in_range.numel() else 0)
        counts = torch.bincount(in_range, minlength=size).tolist() if size else []
        sampler = getattr(train.loader, "sampler", None)
        shuffled = type(sampler).__name__ != "SequentialSampler" if sampler is not None else None
        result = dict(empty)
        result.update(
            checked=int(labels.numel()),
            counts=counts[:1000],
            out_of_range=sorted(set(out_of_range.tolist()))[:EXAMPLES],
            shuffled=shuffled,
        )
        order = (
            " The loader does not shuffle: a dataset sorted by class looks like this in its "
            "first batches; pass shuffle=True."
            if shuffled is False
            else ""
        )
        total = sum(counts)
        if classes and total >= MIN_LABELS_PER_CLASS * classes:
            missing = [c for c, n in enumerate(counts) if n == 0]
            result["missing"] = missing[:1000]
            if missing:
                shown = ", ".join(map(str, missing[:8])) + (", ..." if len(missing) > 8 else "")
                self.findings.append(
                    Finding(
                        "TLR406",
                        f"{len(missing)} of the {classes} classes the model predicts never "
                        f"appear among the first {total} training labels (class {shown}): "
                        "check the labels (a filter or a mapping that drops classes) and the "
                        f"number of outputs.{order}",
                        train.site,
                        {"missing": missing[:50], "checked": total, "num_classes": classes},
                    )
                )
        if total >= MIN_IMBALANCE_LABELS and counts:
            top = max(range(len(counts)), key=lambda c: counts[c])
            share = counts[top] / total
            if share > IMBALANCE_SHARE:
                result["dominant"] = {"label": top, "share": share}
                self.findings.append(
                    Finding(
                        "TLR407",
                        f"class {top} is {share:.0%} of the first {total} training labels: "
                        "a model can reach a low loss by always predicting it. Check the "
                        "labels; for a truly imbalanced dataset use class weights "
                        f"(CrossEntropyLoss(weight=...)) or a WeightedRandomSampler.{order}",
                        train.site,
                        {"label": top, "share": share, "checked": total},
                    )
                )
        if (
            result["out_of_range"]
            and self.plugin._range_finding is None
            and not any(f.code == "TLR301" for f in self.capture.findings)
        ):
            self.findings.append(
                Finding(
                    "TLR408",
                    f"labels outside 0..{(classes or 1) - 1} in the first batches of the "
                    f"training loader created here (e.g. "
                    f"{', '.join(map(str, result['out_of_range']))}). Fix the labels "
                    "(1-based labels need a `- 1`) or the number of outputs.",
                    train.site,
                    {"num_classes": classes, "examples": result["out_of_range"]},
                )
            )
        return result

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


def split_key(info: LoaderInfo) -> int:
    """Which split a loader draws: its dataset object (a loader made anew for each evaluation
    over the same dataset is the same split; the parts of a random_split are not)."""
    dataset = getattr(info.loader, "dataset", None)
    return id(dataset) if dataset is not None else id(info)


def _assigned_name(info: LoaderInfo) -> str:
    """The name the loader's creating line assigns it to (`val_loader = DataLoader(...)`),
    lowercased; "" when the line is not an assignment."""
    site = info.site
    if site is None:
        return ""
    line = linecache.getline(site.filename, site.line)
    target, equals, _ = line.partition("=")
    if not equals or "(" in target:
        return ""
    return target.strip().lower()


def _scale(train: list[_Record], val: list[_Record]) -> str | None:
    """How the two splits' values are made comparable: "same" (one reduction on both sides,
    values as reported), "per_element" (each normalised to a mean over its elements), or None
    (the reductions differ and one side cannot be normalised)."""
    reductions = {r.reduction for r in train} | {r.reduction for r in val}
    if len(reductions) <= 1:
        return "same"
    if all(r.normalised for r in train + val):
        return "per_element"
    return None
