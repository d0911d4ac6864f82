"""profile's timing of the loop: the events stamped, each measured step's stages, syncs, trace."""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field
from typing import Any

import torch

from torchlint.runtime.child.captured import LoaderInfo, OptimizerInfo, RootInfo
from torchlint.runtime.child.copies import CopyWatch
from torchlint.runtime.child.plugin import RunPlugin
from torchlint.runtime.child.syncs import SyncCounter
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


class ProfileTiming(RunPlugin):
    """The plugin's events: the phases, the clock, the stages of each measured step."""

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
