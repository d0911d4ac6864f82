"""The typed payloads: each check's, a check's that did not complete, and which one applies."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from torchlint.runtime.envelope_parts import Severity, SiteModel, _doc


@dataclass
class Budget:
    steps: int
    seconds: float = field(metadata=_doc("the time budget, in CPU seconds of `clock`"))
    clock: str = "cpu time of the training thread"
    cpu_seconds_used: float | None = None
    wall_guard_seconds: float | None = field(
        default=None,
        metadata=_doc("the wall-clock hang guard (from --timeout); running out is inconclusive"),
    )


@dataclass
class OtherTerms:
    """The part of the loss no functional loss computed (a KL regulariser), reported apart."""

    initial: float | None
    final: float | None


@dataclass
class OptimizerCurve:
    """One optimizer's own loss per step: the backward calls that reached its parameters."""

    optimizer: str
    site: SiteModel | None
    primary: bool
    steps: int
    initial_loss: float | None
    final_loss: float | None
    loss_curve: list[float | None]


@dataclass
class OverfitPayload:
    steps_requested: int
    steps_run: int
    loss_curve: list[float | None] = field(metadata=_doc("the loss passed to backward, per step"))
    initial_loss: float | None = field(metadata=_doc("the judged value at the first step"))
    final_loss: float | None = field(metadata=_doc("the lowest judged value of the last steps"))
    final_window: int
    ratio: float | None = field(metadata=_doc("final_loss / reference"))
    target_ratio: float
    absolute_floor: float
    nan_step: int | None
    expected_initial_loss: float | None
    initial_loss_vs_expected: float | None
    initial_accuracy: float | None
    final_accuracy: float | None
    num_classes: int | None
    loss_differentiable: bool
    backward_per_step: float | None
    batch_source: str
    judged: str = field(
        default="loss",
        metadata=_doc("what is judged: the loss, or the reducible part of its loss functions"),
    )
    judged_curve: list[float | None] = field(default_factory=list)
    reference: float | None = None
    floor: float | None = field(default=None, metadata=_doc("the sum of the losses' floors"))
    floor_reason: str | None = None
    other_terms: OtherTerms | None = None
    accuracy_needed: float | None = None
    budget: Budget | None = None
    stop: str | None = field(
        default=None,
        metadata=_doc(
            "converged, plateau, step_budget, time_budget, wall_clock, nan, script_ended, ..."
        ),
    )
    curves: list[OptimizerCurve] = field(default_factory=list)
    final_loss_after: float | None = None
    source: str | None = field(default=None, metadata=_doc("'torchlint_setup()' when used"))


@dataclass
class ParamRow:
    name: str
    shape: list[int]
    numel: int
    requires_grad: bool
    in_optimizer: bool
    grad_norm: list[float | None]
    weight_norm: float | None
    ratio: float | None
    status: Literal["ok", "none", "zero", "nonfinite", "frozen", "not_in_optimizer", "not_scanned"]
    site: SiteModel | None


@dataclass
class GradFindingModel:
    kind: str
    severity: Severity
    message: str
    params: list[str]
    step: int | None
    advice: str | None = None


@dataclass
class Depth:
    verdict: Literal["ok", "vanishing", "exploding", "insufficient"]
    first_third_ratio: float | None
    last_third_ratio: float | None
    vanishing_below: float
    exploding_above: float


@dataclass
class RankLine:
    rank: int
    status: str
    verdict: str | None
    summary: str | None


_TORCHRUN = {"optional": True, "doc": "under torchrun (--nproc-per-node)"}


@dataclass
class GradsPayload:
    steps_requested: int
    steps_run: int
    losses: list[float | None]
    global_grad_norm: list[float | None]
    params: list[ParamRow]
    findings: list[GradFindingModel]
    largest: list[str]
    smallest: list[str]
    depth: Depth
    source: str | None = None
    ranks: list[RankLine] | None = field(default=None, metadata=_TORCHRUN)
    distributed: dict[str, Any] | None = field(default=None, metadata=_TORCHRUN)


@dataclass
class StepMs:
    median: float | None
    p90: float | None
    uninstrumented_median: float | None
    # The quartiles of each window's steps: the two medians are compared only when these allow.
    spread: list[float | None] | None
    uninstrumented_spread: list[float | None] | None


@dataclass
class Stage:
    name: Literal[
        "data_wait", "h2d_and_preprocess", "forward", "loss", "backward", "optimizer", "other"
    ]
    ms_median: float | None
    ms_p90: float | None
    share: float | None


@dataclass
class ValidationStage:
    name: str
    ms_per_batch: float | None


@dataclass
class ValidationTiming:
    batches: int
    ms_per_batch: float | None
    stages: list[ValidationStage]
    forward_ms_median: float | None
    train_forward_ms_median: float | None


@dataclass
class HostSync:
    filename: str
    line: int
    function: str
    per_step: float | None
    kinds: dict[str, int]
    #: the host's wait in the timed calls per step; None when only PyTorch's
    #: `set_sync_debug_mode` reports saw them (not timed)
    ms_per_step: float | None = None


@dataclass
class HostCopy:
    """The copies from the host to a device at one line (`child/copies.py`)."""

    filename: str
    line: int
    function: str
    device: str
    per_step: float
    non_blocking: int
    pinned: int
    copies: int
    mb_per_step: float


@dataclass
class Hint:
    message: str
    filename: str | None
    line: int | None


@dataclass
class ProfilePayload:
    step_ms: StepMs
    stages: list[Stage]
    synchronization: Literal["cuda_events", "sync_per_stage", "cpu_clock"]
    warmup_steps: int
    measured_steps: int
    uninstrumented_steps: int
    coverage: float | None
    instrumentation_overhead: float | None
    instrumentation_comparison: Literal["measured", "inconclusive", "too few steps"]
    validation: ValidationTiming | None
    host_syncs: list[HostSync] = field(metadata=_doc("device synchronisations per line"))
    record: dict[str, Any]
    hints: list[Hint]
    trace: str | None
    trace_error: str | None
    copies: list[HostCopy] = field(
        default_factory=list, metadata=_doc("host-to-device copies per line")
    )
    ranks: list[RankLine] | None = field(default=None, metadata=_TORCHRUN)
    distributed: dict[str, Any] | None = field(default=None, metadata=_TORCHRUN)


@dataclass
class Metric:
    function: str | None
    val_function: str | None
    aggregation: Literal["mean_per_epoch", "mean_per_element_per_epoch"]
    same_on_both_splits: bool
    description: str
    reductions: dict[str, list[str]] = field(default_factory=dict)


@dataclass
class NanAt:
    split: Literal["train", "validation"]
    epoch: int
    step: int | None


@dataclass
class FitLoaders:
    train: SiteModel | None
    validation: SiteModel | None


@dataclass
class Leakage:
    method: Literal["indices", "hashes", "none"]
    overlap: int
    train_checked: int
    val_checked: int
    examples: list[dict[str, int]]
    site: SiteModel | None
    validation: bool
    role: Literal["other", "train_eval"] = field(
        default="other", metadata=_doc("train_eval: an evaluation of the training split")
    )


@dataclass
class Dominant:
    label: int
    share: float


@dataclass
class Labels:
    checked: int
    num_classes: int | None
    counts: list[int]
    missing: list[int]
    dominant: Dominant | None
    out_of_range: list[int]
    shuffled: bool | None


@dataclass
class DataChecks:
    leakage: list[Leakage]
    labels: Labels


@dataclass
class Anomaly:
    enabled: bool
    operation: str | None
    site: SiteModel | None
    loss_was_finite: bool | None
    source: Literal["forward traceback", "error message"] | None


@dataclass
class FitPayload:
    diagnosis: Literal["healthy", "overfitting", "underfitting", "nan", "inconclusive"]
    reason: str
    metric: Metric
    epochs_requested: int
    epochs_run: int
    limit_batches: int
    train_loss: list[float | None]
    val_loss: list[float | None]
    val_loss_before_training: float | None
    train_batches: list[int]
    val_batches: list[int]
    train_loss_steps: list[float | None]
    train_loss_start: float | None
    best_epoch: int | None
    nan: NanAt | None
    ended: str
    thresholds: dict[str, float]
    num_classes: int | None
    loaders: FitLoaders
    data_checks: DataChecks
    anomaly: Anomaly | None
    plot: str | None
    plot_note: str | None


@dataclass
class LrFindPayload:
    method: str
    lr_min: float
    lr_max: float
    steps_requested: int
    steps_run: int
    lrs: list[float]
    losses: list[float | None]
    smoothed: list[float | None]
    beta: float
    divergence_factor: float
    skip_start: int
    suggested_lr: float | None = field(metadata=_doc("the one recommendation"))
    suggested_step: int | None
    suggestion_reason: str | None
    min_loss_lr: float | None
    min_loss: float | None
    min_loss_step: int | None
    diverged_at_step: int | None
    diverged_lr: float | None
    script_lr: float | None = field(
        metadata=_doc("the lr the script was configured with (or the highest it set)")
    )
    optimizer: str | None
    sweep_end: Literal["diverged", "completed", "stopped", "script_ended"]
    no_suggestion_reason: str | None
    weights: Literal["discarded with the child process"]
    plot: str | None
    plot_error: str | None


@dataclass
class CaptureFailedPayload:
    missing: list[str]
    advice: str
    frameworks: list[str]


@dataclass
class ErrorPayload:
    """The explicit API's check that raised."""

    error: str


@dataclass
class EmptyPayload:
    """No payload: the check did not complete, or it does not apply to the loop (the
    envelope's `reason` says why)."""


#: the payload of a completed check
PAYLOADS: dict[str, type] = {
    "overfit": OverfitPayload,
    "grads": GradsPayload,
    "profile": ProfilePayload,
    "fit": FitPayload,
    "lr-find": LrFindPayload,
}


def payload_type(check: str, status: str, payload: Any) -> type:
    """The class of an envelope's payload."""
    if isinstance(payload, dict) and not payload:
        return EmptyPayload
    if status == "capture_failed":
        return CaptureFailedPayload
    if isinstance(payload, dict) and set(payload) == {"error"}:
        return ErrorPayload
    return PAYLOADS[check]  # completed, or what a check had when its script crashed
