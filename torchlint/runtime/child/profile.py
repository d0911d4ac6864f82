"""`torchlint run profile`: where does the training step's time go?

The user's loop runs unmodified. After `warmup` steps of the primary optimizer, `measured` steps
are timed stage by stage from the capture's events: every interval between two consecutive
events belongs to the stage the first one opens (a fetch from the training loader opens
`data_wait`, its end `h2d_and_preprocess`, a root forward `forward`, its end `loss`, backward
`backward`, its end and an optimizer step's end `other`, a step `optimizer`; the same on another
loader's batches opens `validation_data`, `validation_other` and `validation_forward`). So the
stages of a step add up to the step exactly, and validation time is reported apart from it.
Then as many steps again run with no per-stage timing (only the step ends), so the report shows
what the profiler itself costs; then, with `--trace`, a few steps under `torch.profiler`.

Clocks: on the CPU a monotonic clock; on CUDA a `torch.cuda.Event` at every boundary and one
`torch.cuda.synchronize()` per step (or, with `--sync per-stage`, a synchronisation at every
boundary and the CPU clock). The payload says which.
"""

from __future__ import annotations

import itertools
import math
import statistics
import time
from dataclasses import dataclass, field
from typing import Any

import torch

from torchlint.runtime.child.captured import (
    Finding,
    LoaderInfo,
    OptimizerInfo,
    RootInfo,
    loader_settings,
)
from torchlint.runtime.child.copies import CopyWatch, copy_advice
from torchlint.runtime.child.plugin import PluginResult, RunPlugin
from torchlint.runtime.child.syncs import REPORTED, SYNC_METHODS, SyncCounter
from torchlint.runtime.sites import Site

DEFAULT_WARMUP = 5
TRACE_STEPS = 3
TRAIN_STAGES = (
    "data_wait",
    "h2d_and_preprocess",
    "forward",
    "loss",
    "backward",
    "optimizer",
    "other",
)
VALIDATION_STAGES = ("validation_data", "validation_forward", "validation_other")

#: hint thresholds (shares of the median training step)
DATA_WAIT_SHARE = 0.30
OPTIMIZER_SHARE = 0.25
MANY_PARAMETER_TENSORS = 50
#: host syncs per step worth a hint
SYNCS_PER_STEP = 1.0


@dataclass
class _Mark:
    kind: str
    stamp: Any  # float seconds (CPU clock) or torch.cuda.Event
    validation: bool = False


@dataclass
class _Step:
    """One measured training step: ms per stage (training and validation)."""

    stages: dict[str, float] = field(default_factory=dict)
    validation_batches: int = 0
    validation_forward_ms: list[float] = field(default_factory=list)
    train_forward_ms: list[float] = field(default_factory=list)

    @property
    def train_ms(self) -> float:
        return sum(self.stages.get(name, 0.0) for name in TRAIN_STAGES)


class ProfilePlugin(RunPlugin):
    check = "profile"

    def __init__(self, capture: Any, options: dict[str, Any]) -> None:
        super().__init__(capture, options)
        self.measured = max(1, int(capture.target_steps))
        # at least one: a step is timed from the end of the one before it, so the first step
        # of the script cannot be measured
        self.warmup = max(1, int(options.get("warmup", DEFAULT_WARMUP)))
        self.trace_path: str | None = options.get("trace")
        self.limit: int | None = options.get("limit_batches")
        self.sync_mode = str(options.get("sync", "auto"))
        self.cuda = False
        self.synchronization = "cpu_clock"
        self.marks: list[_Mark] | None = None
        self.steps: list[_Step] = []
        self.plain_ends: list[float] = []
        self.syncs = SyncCounter(capture.finder)
        self.copies = CopyWatch(capture.finder)
        self.val_forward_sites: dict[Site | None, int] = {}
        self.val_grad_forward_sites: dict[Site | None, int] = {}
        self._validating = False
        self._sync_patches: list[tuple[str, Any]] = []
        self._profiler: Any = None
        self.trace_written: str | None = None
        self.trace_error: str | None = None

    # ------------------------------------------------------------------------------------------
    # phases

    def total_steps(self) -> int:
        return self.warmup + 2 * self.measured + (TRACE_STEPS if self.trace_path is not None else 0)

    def batch_limit(self, loader: LoaderInfo) -> int | None:
        return self.limit

    def framework_limits(self) -> dict[str, Any]:
        limits = super().framework_limits()
        if self.limit is not None:  # short epochs: the script's validation is measured too
            limits.update(
                limit_train_batches=self.limit, limit_val_batches=self.limit, validation=True
            )
        return limits

    def _step_index(self) -> int:
        primary = self.capture.primary
        return primary.steps if primary is not None else -1

    def _measuring(self) -> bool:
        return self.marks is not None

    # ------------------------------------------------------------------------------------------
    # clock

    def _stamp(self) -> Any:
        if self.synchronization == "cuda_events":
            event = torch.cuda.Event(enable_timing=True)  # type: ignore[no-untyped-call]
            event.record()
            return event
        if self.synchronization == "sync_per_stage":
            torch.cuda.synchronize()
        return time.perf_counter()

    def _elapsed_ms(self, start: Any, end: Any) -> float:
        if self.synchronization == "cuda_events":
            return float(start.elapsed_time(end))
        return (float(end) - float(start)) * 1e3

    def _choose_clock(self) -> None:
        for root in self.capture.roots:
            param = next(root.module.parameters(), None)
            if param is not None and param.device.type == "cuda":
                self.cuda = True
        if self.cuda:
            per_stage = self.sync_mode == "per-stage"
            self.synchronization = "sync_per_stage" if per_stage else "cuda_events"

    def _mark(self, kind: str) -> None:
        if self.marks is not None:
            self.marks.append(_Mark(kind, self._stamp(), self._validating))

    # ------------------------------------------------------------------------------------------
    # events

    def on_fetch_start(self, loader: LoaderInfo) -> None:
        self._validating = self._is_validation(loader)
        self._mark("fetch_start")

    def on_fetch_end(self, loader: LoaderInfo, batch: Any) -> None:
        self._mark("fetch_end")

    def _is_validation(self, loader: LoaderInfo) -> bool:
        train = self.capture.train_loader
        return train is not None and loader is not train

    def on_forward_start(self, root: RootInfo, training: bool, grad: bool) -> None:
        last = self.capture.last_fetch
        validating = last is not None and self._is_validation(last)
        if validating and grad:
            # counted in every step of the check, not only the measured ones: with short
            # epochs the validation often falls between them (after `--limit-batches` steps)
            site = self.capture.finder.find()
            self.val_grad_forward_sites[site] = self.val_grad_forward_sites.get(site, 0) + 1
        if self.marks is None:
            return
        self._validating = validating
        if self._validating:
            site = self.capture.finder.find()
            self.val_forward_sites[site] = self.val_forward_sites.get(site, 0) + 1
        self._mark("forward_start")

    def on_forward_end(self, root: RootInfo) -> None:
        self._mark("forward_end")

    def on_backward_start(self, loss: torch.Tensor) -> None:
        self._validating = False
        self._mark("backward_start")

    def on_backward_end(self) -> None:
        self._mark("backward_end")

    def on_step_start(self, optimizer: OptimizerInfo) -> None:
        self._validating = False
        self._mark("step_start")

    def on_step_end(self, optimizer: OptimizerInfo) -> None:
        self._mark("step_end")
        if optimizer is not self.capture.primary:
            return
        finished = optimizer.steps - 1  # the index of the step that just ended
        if self.marks is not None and finished >= self.warmup:
            self._close_step(self.marks)
            self.marks = None
            self._unpatch_syncs()
        plain_from = self.warmup + self.measured
        if plain_from - 1 <= finished < plain_from + self.measured:
            if self.cuda:
                torch.cuda.synchronize()
            self.plain_ends.append(time.perf_counter())
        following = optimizer.steps
        if following == self.warmup:
            self._choose_clock()
        if self.warmup <= following < self.warmup + self.measured:
            self._patch_syncs()  # before the step's first mark: its own cost is not timed
            self.marks = [_Mark("step_boundary", self._stamp())]
        self._trace(following)

    # ------------------------------------------------------------------------------------------
    # stages of one step

    def _close_step(self, marks: list[_Mark]) -> None:
        if self.synchronization == "cuda_events":
            torch.cuda.synchronize()  # the one synchronisation of the step
        step = _Step()
        state = "other"
        forward_start: Any = None
        for here, following in itertools.pairwise(marks):
            state = _next_state(state, here)
            spent = self._elapsed_ms(here.stamp, following.stamp)
            step.stages[state] = step.stages.get(state, 0.0) + spent
            if here.kind == "forward_start":
                forward_start = here
            if following.kind == "forward_end" and forward_start is not None:
                duration = self._elapsed_ms(forward_start.stamp, following.stamp)
                if forward_start.validation:
                    step.validation_forward_ms.append(duration)
                else:
                    step.train_forward_ms.append(duration)
                forward_start = None
            if here.kind == "fetch_start" and here.validation:
                step.validation_batches += 1
        self.steps.append(step)

    # ------------------------------------------------------------------------------------------
    # host synchronisations during measured steps

    def _patch_syncs(self) -> None:
        self.syncs.install()
        self.copies.install()

    def _unpatch_syncs(self) -> None:
        self.copies.uninstall()
        self.syncs.uninstall()

    # ------------------------------------------------------------------------------------------
    # torch.profiler trace

    def _trace(self, following: int) -> None:
        if self.trace_path is None:
            return
        start = self.warmup + 2 * self.measured
        try:
            if following == start and self._profiler is None:
                activities = [torch.profiler.ProfilerActivity.CPU]
                if self.cuda:
                    activities.append(torch.profiler.ProfilerActivity.CUDA)
                self._profiler = torch.profiler.profile(activities=activities)
                self._profiler.start()
            elif following == start + TRACE_STEPS and self._profiler is not None:
                self._profiler.stop()
                self._profiler.export_chrome_trace(self.trace_path)
                self.trace_written = self.trace_path
                self._profiler = None
        except (RuntimeError, OSError) as exc:
            self.trace_error = f"{type(exc).__name__}: {exc}"
            self._profiler = None

    # ------------------------------------------------------------------------------------------
    # result

    def result(self, outcome: Any) -> PluginResult:
        self._unpatch_syncs()
        if self._profiler is not None:  # the run ended inside the trace window
            try:
                self._profiler.stop()
                self._profiler.export_chrome_trace(str(self.trace_path))
                self.trace_written = self.trace_path
            except (RuntimeError, OSError) as exc:
                self.trace_error = f"{type(exc).__name__}: {exc}"
        steps = self.steps
        train_ms = [s.train_ms for s in steps]
        stages: list[dict[str, Any]] = []
        medians = {
            name: _median([s.stages.get(name, 0.0) for s in steps]) or 0.0 for name in TRAIN_STAGES
        }
        total = sum(medians.values())
        for name in TRAIN_STAGES:
            values = [s.stages.get(name, 0.0) for s in steps]
            stages.append(
                {
                    "name": name,
                    "ms_median": _round(medians[name]),
                    "ms_p90": _round(_p90(values)),
                    # of the sum of the stage medians: robust to one slow step, sums to 1
                    "share": _round(medians[name] / total if total > 0 else None, 4),
                }
            )
        plain = [(b - a) * 1e3 for a, b in zip(self.plain_ends, self.plain_ends[1:], strict=False)]
        step_median = _median(train_ms)
        plain_median = _median(plain)
        stage_sum = sum(s["ms_median"] or 0.0 for s in stages)
        validation = self._validation_summary(steps)
        findings = self._hints(stages, step_median, validation)
        comparison = compare_windows(train_ms, plain)
        payload: dict[str, Any] = {
            "step_ms": {
                "median": _round(step_median),
                "p90": _round(_p90(train_ms)),
                "uninstrumented_median": _round(plain_median),
                "spread": _round_pair(_quartiles(train_ms)),
                "uninstrumented_spread": _round_pair(_quartiles(plain)),
            },
            "stages": stages,
            "synchronization": self.synchronization,
            "warmup_steps": self.warmup,
            "measured_steps": len(steps),
            "uninstrumented_steps": len(plain),
            "coverage": _round(stage_sum / step_median if step_median else None, 4),
            # The two windows' medians compared only when their spreads say the difference is
            # real (`compare_windows`); None, with the comparison "inconclusive", otherwise.
            "instrumentation_overhead": _round(comparison.overhead, 4),
            "instrumentation_comparison": comparison.verdict,
            "validation": validation,
            "host_syncs": [
                {
                    **entry.site.to_json(),
                    "per_step": _round(entry.count / max(1, len(steps)), 3),
                    "kinds": dict(entry.kinds),
                    # the host's wait in the timed calls (None: only PyTorch's reports)
                    "ms_per_step": _round(entry.ms / max(1, len(steps)), 3)
                    if entry.timed
                    else None,
                }
                for entry in sorted(self.syncs.sites.values(), key=lambda e: -e.count)
            ],
            "copies": [
                entry.to_json(len(steps))
                for entry in sorted(self.copies.sites.values(), key=lambda e: -e.copies)
            ],
            "record": self._record(),
            "hints": [
                {
                    "message": f.message,
                    "filename": f.site.filename if f.site else None,
                    "line": f.site.line if f.site else None,
                }
                for f in findings
            ],
            "trace": self.trace_written,
            "trace_error": self.trace_error,
        }
        if not steps:
            primary = self.capture.primary
            ran = primary.steps if primary is not None else 0
            reason = (
                f"no step was measured: the script stopped after {ran} step(s), within the "
                f"{self.warmup} warm-up step(s); a longer run, or a smaller --warmup (1 at least), "
                "would decide"
            )
            return PluginResult(
                "inconclusive", f"profile inconclusive: {reason}", payload, findings, reason
            )
        top = max(stages, key=lambda s: s["ms_median"] or 0.0)
        summary = (
            f"profile: step {step_median:.2f} ms median over {len(steps)} steps "
            f"({self.synchronization}); largest stage {top['name']} "
            f"{(top['share'] or 0) * 100:.0f}%"
        )
        if plain_median:
            summary += f"; {plain_median:.2f} ms without per-stage timing"
        if findings:
            summary += f"; {len(findings)} hint(s)"
        return PluginResult("hints" if findings else "ok", summary, payload, findings)

    def _validation_summary(self, steps: list[_Step]) -> dict[str, Any] | None:
        batches = sum(s.validation_batches for s in steps)
        if not batches:
            return None
        totals = {name: sum(s.stages.get(name, 0.0) for s in steps) for name in VALIDATION_STAGES}
        forwards = [ms for s in steps for ms in s.validation_forward_ms]
        train_forwards = [ms for s in steps for ms in s.train_forward_ms]
        return {
            "batches": batches,
            "ms_per_batch": _round(sum(totals.values()) / batches),
            "stages": [
                {"name": name, "ms_per_batch": _round(total / batches)}
                for name, total in totals.items()
            ],
            "forward_ms_median": _round(_median(forwards)),
            "train_forward_ms_median": _round(_median(train_forwards)),
        }

    def _record(self) -> dict[str, Any]:
        capture = self.capture
        param = None
        for root in capture.roots:
            param = next(root.module.parameters(), None)
            if param is not None:
                break
        device = param.device if param is not None else torch.device("cpu")
        name = str(device)
        if device.type == "cuda" and torch.cuda.is_available():
            name = torch.cuda.get_device_name(device)
        train = capture.train_loader
        return {
            "device": str(device),
            "device_name": name,
            "param_dtype": str(param.dtype).removeprefix("torch.") if param is not None else None,
            "autocast": capture.autocast,
            "grad_scaler": capture.grad_scaler_used,
            "batch_size": train.batch_size_seen if train is not None else None,
            "model_mode": "train"
            if all(root.module.training for root in capture.roots)
            else "eval",
            "loader": loader_settings(train.loader) if train is not None else None,
            "cudnn_benchmark": bool(torch.backends.cudnn.benchmark),
            "torch": str(torch.__version__),
        }

    # ------------------------------------------------------------------------------------------
    # hints

    def _hints(
        self,
        stages: list[dict[str, Any]],
        step_median: float | None,
        validation: dict[str, Any] | None,
    ) -> list[Finding]:
        findings: list[Finding] = []
        if not step_median:
            return findings
        share = {s["name"]: s["share"] or 0.0 for s in stages}
        train = self.capture.train_loader
        if train is not None:
            settings = loader_settings(train.loader)
            wait = share["data_wait"]
            if wait >= DATA_WAIT_SHARE:
                workers = settings["num_workers"]
                if in_memory(train.loader):
                    # As TL303 says: worker processes only add copies for tensors in memory.
                    advice = (
                        "The batches are slices of tensors already in memory "
                        "(a TensorDataset), so worker processes would only add copies; index "
                        "the tensors with a batch of indices (or a larger batch_size) instead "
                        "of one sample at a time."
                    )
                elif workers == 0:
                    advice = (
                        "Raise num_workers (e.g. to the number of CPU cores) so batches are "
                        "prepared while the model computes."
                    )
                else:
                    advice = (
                        f"Even with num_workers={workers}: make loading cheaper (decode, "
                        "augment), add workers, or set persistent_workers=True."
                    )
                findings.append(
                    Finding(
                        "TLR601",
                        f"waiting for data takes {wait * 100:.0f}% of the training step "
                        f"({_ms(share, 'data_wait', step_median)} of {step_median:.2f} ms).",
                        train.site,
                        {"data_wait_share": wait, "num_workers": workers},
                        advice=advice,
                    )
                )
            if self.cuda and not settings["pin_memory"]:
                findings.append(
                    Finding(
                        "TLR602",
                        "the training loader does not pin memory while the model is on CUDA, "
                        "so each host-to-device copy blocks.",
                        train.site,
                        {"pin_memory": False},
                        advice="Pass pin_memory=True to the DataLoader and move batches with "
                        ".to(device, non_blocking=True), so the copy overlaps compute.",
                    )
                )
        measured = max(1, len(self.steps))
        for entry in self.syncs.sites.values():
            per_step = entry.count / measured
            if per_step < SYNCS_PER_STEP:
                continue
            ms = entry.ms / measured if entry.timed else None
            cost = f", {ms:.2f} ms" if ms is not None else ""
            findings.append(
                Finding(
                    "TLR603",
                    f"{per_step:g} device synchronisation(s) per step here{cost} "
                    f"({_sync_kinds(entry.kinds)}): each one makes the CPU wait for the device "
                    "to finish all queued work.",
                    entry.site,
                    {"per_step": per_step, "kinds": dict(entry.kinds), "ms_per_step": ms},
                    advice="Accumulate on the device and read the value every N steps.",
                )
            )
        for copied in self.copies.sites.values():
            judged = copy_advice(copied, measured)
            if judged is not None:
                code, message, what_to_do = judged
                findings.append(
                    Finding(
                        code,
                        message,
                        copied.site,
                        copied.to_json(measured),
                        advice=what_to_do,
                    )
                )
        primary = self.capture.primary
        if primary is not None and primary.manual is None and share["optimizer"] >= OPTIMIZER_SHARE:
            optimizer = primary.optimizer
            tensors = sum(len(g["params"]) for g in optimizer.param_groups)
            defaults = getattr(optimizer, "defaults", {})
            if (
                tensors >= MANY_PARAMETER_TENSORS
                and not defaults.get("fused")
                and not defaults.get("foreach")
                and "fused" in defaults
            ):
                findings.append(
                    Finding(
                        "TLR604",
                        f"the optimizer step takes {share['optimizer'] * 100:.0f}% of the "
                        f"training step over {tensors} parameter tensors, updated one kernel per "
                        "tensor.",
                        primary.site,
                        {"optimizer_share": share["optimizer"], "parameter_tensors": tensors},
                        advice=f"Pass fused=True (or foreach=True) to {type(optimizer).__name__} "
                        "to update them in a few kernels.",
                    )
                )
        for site, count in self.val_grad_forward_sites.items():
            slower = ""
            if validation:
                forward = validation.get("forward_ms_median")
                train_forward = validation.get("train_forward_ms_median")
                if forward and train_forward and forward > train_forward:
                    slower = f"; its forward takes {forward / train_forward:.2f}x the training one"
            findings.append(
                Finding(
                    "TLR605",
                    f"validation ran {count} forward(s) with gradients enabled{slower}, "
                    "recording a graph it never uses.",
                    site,
                    {"forwards": count},
                    advice="Wrap the evaluation in torch.no_grad() (or torch.inference_mode()).",
                )
            )
        return findings


def _sync_kinds(kinds: dict[str, int]) -> str:
    named = [f".{k}()" if k in SYNC_METHODS else f"{k}()" for k in kinds if k != REPORTED]
    text = ", ".join(named) + (" of a tensor on the device" if named else "")
    if REPORTED in kinds:
        reported = "operations PyTorch reports as synchronising"
        text = f"{text}; {reported}" if text else reported
    return text


def _next_state(state: str, mark: _Mark) -> str:
    """The stage an interval belongs to, given the event that opens it."""
    validation = mark.validation
    return {
        "fetch_start": "validation_data" if validation else "data_wait",
        "fetch_end": "validation_other" if validation else "h2d_and_preprocess",
        "forward_start": "validation_forward" if validation else "forward",
        "forward_end": "validation_other" if validation else "loss",
        "backward_start": "backward",
        "backward_end": "other",
        "step_start": "optimizer",
        "step_end": "other",
        "step_boundary": "other",
    }.get(mark.kind, state)


#: steps each window needs before their medians are compared
MIN_COMPARED_STEPS = 5


@dataclass(frozen=True)
class WindowComparison:
    overhead: float | None  # instrumented median / uninstrumented median, when conclusive
    verdict: str  # "measured", "inconclusive" or "too few steps"


def compare_windows(instrumented: list[float], plain: list[float]) -> WindowComparison:
    """What per-stage timing costs: the ratio of the two windows' median steps, but only when
    each window has enough steps and their interquartile ranges do not overlap (the difference
    is larger than the steps' own spread); "inconclusive" otherwise. A window of the loop runs
    through whatever the script does between steps, so its spread is the measure of noise."""
    if len(instrumented) < MIN_COMPARED_STEPS or len(plain) < MIN_COMPARED_STEPS:
        return WindowComparison(None, "too few steps")
    low_a, high_a = _quartiles(instrumented) or (0.0, 0.0)
    low_b, high_b = _quartiles(plain) or (0.0, 0.0)
    if low_a <= high_b and low_b <= high_a:
        return WindowComparison(None, "inconclusive")
    median_a, median_b = _median(instrumented), _median(plain)
    if not median_a or not median_b:
        return WindowComparison(None, "inconclusive")
    return WindowComparison(median_a / median_b, "measured")


def in_memory(loader: Any) -> bool:
    """Whether a loader's dataset is a TensorDataset (or a Subset of one): tensors in memory."""
    dataset = getattr(loader, "dataset", None)
    while isinstance(dataset, torch.utils.data.Subset):
        dataset = dataset.dataset
    return isinstance(dataset, torch.utils.data.TensorDataset)


def _quartiles(values: list[float]) -> tuple[float, float] | None:
    if len(values) < 2:
        return None
    quartiles = statistics.quantiles(values, n=4, method="inclusive")
    return quartiles[0], quartiles[2]


def _round_pair(pair: tuple[float, float] | None) -> list[float | None] | None:
    return [_round(pair[0]), _round(pair[1])] if pair is not None else None


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def _p90(values: list[float]) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(0.9 * len(ordered)) - 1)]


def _round(value: float | None, digits: int = 3) -> float | None:
    if value is None or not math.isfinite(value):
        return None
    return round(value, digits)


def _ms(share: dict[str, float], name: str, step_ms: float) -> str:
    return f"{share[name] * step_ms:.2f} ms"
