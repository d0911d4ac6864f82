"""Typed results of the runtime checks and their JSON envelope.

This module never imports torch, so a report can be read (or an error envelope written) on a
machine without it. Every check serialises to one envelope::

    {"schema_version": 2, "check": "overfit" | "grads",
     "status": "completed" | "capture_failed" | "error" | "timeout",
     "verdict": ..., "summary": "<one line>",
     "script": ..., "argv": [...], "duration_s": ..., "isolation": {...},
     "environment": {"torch", "device", "dtype", "batch_size", "model_mode", "autocast",
                     "grad_scaler", "loader"},
     "captured": {...}, "diagnostics": [...], "error": {...} | null,
     "payload": {...check-specific...}}

The explicit API fills what it knows (`script`, `captured` and `error` stay null); the launcher
(`torchlint run`) fills the rest. `torchlint/runtime/schema.json` is the JSON Schema.

Floats are finite or ``null``: a NaN or infinite loss or norm becomes ``null`` in the JSON.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Literal

SCHEMA_VERSION = 3

OverfitVerdict = Literal["pass", "fail", "nan"]
GradVerdict = Literal["healthy", "problems"]
DepthVerdict = Literal["ok", "vanishing", "exploding", "insufficient"]
Severity = Literal["error", "warning", "info"]


def finite_or_none(value: float | None) -> float | None:
    """`value` when it is a finite float, else None (JSON has no NaN or infinity)."""
    if value is None or not math.isfinite(value):
        return None
    return float(value)


def _finite_list(values: list[float | None]) -> list[float | None]:
    return [finite_or_none(v) for v in values]


@dataclass(frozen=True)
class Environment:
    """Where a check ran: torch version, device and dtype of the model's parameters, the batch
    size (dim 0 of the first tensor in the batch, None when the batch holds no tensor) and the
    model's mode (`train`/`eval`, as the user left it; the checks do not change it)."""

    torch: str
    device: str
    dtype: str
    batch_size: int | None
    model_mode: Literal["train", "eval"]
    #: autocast dtype active at the training forward ("bfloat16"), None when off or unknown
    autocast: str | None = None
    #: whether a GradScaler scaled the loss (None: not observed, as in the explicit API)
    grad_scaler: bool | None = None
    #: the training DataLoader's settings (num_workers, pin_memory, ...), None when unknown
    loader: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "torch": self.torch,
            "device": self.device,
            "dtype": self.dtype,
            "batch_size": self.batch_size,
            "model_mode": self.model_mode,
            "autocast": self.autocast,
            "grad_scaler": self.grad_scaler,
            "loader": self.loader,
        }


def envelope(
    check: str,
    status: str,
    verdict: str | None,
    summary: str,
    environment: Environment | None,
    payload: dict[str, Any],
) -> dict[str, Any]:
    from torchlint.runtime.checks import outcome_of

    return {
        "schema_version": SCHEMA_VERSION,
        "check": check,
        "status": status,
        "verdict": verdict,
        "outcome": outcome_of(check, verdict, False) if status == "completed" else None,
        "reason": None,
        "summary": summary,
        "script": None,
        "argv": [],
        "duration_s": None,
        "isolation": None,
        "environment": environment.to_json() if environment is not None else None,
        "captured": None,
        "diagnostics": [],
        "error": None,
        "payload": payload,
        "timing": None,
    }


def error_envelope(
    check: Literal["overfit", "grads"],
    error: BaseException | str,
    environment: Environment | None = None,
) -> dict[str, Any]:
    """The envelope for a check that raised: status `error`, verdict null, the message in the
    summary and in `payload.error`."""
    message = error if isinstance(error, str) else f"{type(error).__name__}: {error}"
    result = envelope(check, "error", None, message, environment, {"error": message})
    result["error"] = error_info("exception", message)
    return result


def error_info(
    kind: str,
    message: str,
    site: dict[str, Any] | None = None,
    exit_code: int | None = None,
    output_tail: list[str] | None = None,
) -> dict[str, Any]:
    """The envelope's `error` object: what went wrong (`kind`: exception, crash, exit, timeout,
    out_of_memory, killed, internal, ...), where in the user's code when known, the child's exit
    status, and the last lines the script printed."""
    return {
        "kind": kind,
        "message": plain_text(message),
        "site": site,
        "exit_code": exit_code,
        "output_tail": [plain_text(line) for line in output_tail or []],
    }


#: terminal control sequences (colours, cursor moves, OSC titles and links)
_ESCAPES = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")


def plain_text(text: str) -> str:
    """`text` without terminal escape sequences (a script's coloured tracebacks and progress
    bars) and without other control characters but tabs."""
    cleaned = _ESCAPES.sub("", text)
    return "".join(c for c in cleaned if c >= " " or c in "\t\n")


@dataclass
class OverfitResult:
    """Result of `overfit_one_batch`.

    `loss_curve[i]` is the loss computed at step i (0-based), before that step's optimizer
    update; it is None where the loss was not finite. `final_loss` is the minimum over the last
    `final_window` entries of the curve; `ratio = final_loss / initial_loss` (None when the
    initial loss is not positive). Verdict: `nan` when a loss became non-finite (`nan_step` is
    the step), `pass` when `ratio <= target_ratio` or `final_loss <= absolute_floor`, else
    `fail`. `final_loss_after` and the accuracies come from one extra no-grad forward pass after
    the last step. `loss_differentiable` is False when the loss did not require grad (backward
    was skipped, so nothing could learn).
    """

    verdict: OverfitVerdict
    environment: Environment
    steps_requested: int
    steps_run: int
    loss_curve: list[float | None]
    initial_loss: float | None
    final_loss: float | None
    final_window: int
    ratio: float | None
    target_ratio: float
    absolute_floor: float
    nan_step: int | None = None
    final_loss_after: float | None = None
    expected_initial_loss: float | None = None
    expected_initial_loss_reason: str | None = None
    initial_loss_vs_expected: float | None = None
    initial_accuracy: float | None = None
    final_accuracy: float | None = None
    num_classes: int | None = None
    loss_differentiable: bool = True
    #: backward calls per optimizer step (gradient accumulation, LBFGS closures); the curve
    #: holds the first loss of each step, as passed to backward
    backward_per_step: float | None = None
    #: how the batch was fixed: "first batch of the loader" (explicit API) or "first training
    #: batch, cached after collation and replayed as a fresh copy each step" (launcher)
    batch_source: str = "first batch of the loader, a fresh copy each step"
    #: the loss function's own value at step 0, when it differs from the curve's first point
    #: (the launcher's curve holds what was passed to backward, e.g. loss / accumulation steps)
    initial_loss_fn_value: float | None = None

    @property
    def summary(self) -> str:
        if self.verdict == "nan":
            return f"overfit: loss became non-finite at step {self.nan_step}"
        init = _fmt(self.initial_loss)
        final = _fmt(self.final_loss)
        ratio = _fmt(self.ratio)
        text = (
            f"overfit {self.verdict}: loss {init} -> {final} in {self.steps_run} steps "
            f"(ratio {ratio}, pass at <= {self.target_ratio:g})"
        )
        if self.expected_initial_loss is not None:
            first = self.initial_loss
            if self.initial_loss_fn_value is not None:
                first = self.initial_loss_fn_value
            text += f"; initial loss {_fmt(first)} vs expected {_fmt(self.expected_initial_loss)}"
        if self.final_accuracy is not None:
            text += f"; batch accuracy {self.final_accuracy:.3f}"
        if not self.loss_differentiable:
            text += "; the loss does not require grad (backward skipped)"
        return text

    def to_json(self) -> dict[str, Any]:
        from torchlint.runtime.typed import to_json

        payload = OverfitPayload(
            steps_requested=self.steps_requested,
            steps_run=self.steps_run,
            loss_curve=_finite_list(self.loss_curve),
            initial_loss=finite_or_none(self.initial_loss),
            final_loss=finite_or_none(self.final_loss),
            final_window=self.final_window,
            ratio=finite_or_none(self.ratio),
            target_ratio=self.target_ratio,
            absolute_floor=self.absolute_floor,
            nan_step=self.nan_step,
            expected_initial_loss=finite_or_none(self.expected_initial_loss),
            initial_loss_vs_expected=finite_or_none(self.initial_loss_vs_expected),
            initial_accuracy=finite_or_none(self.initial_accuracy),
            final_accuracy=finite_or_none(self.final_accuracy),
            num_classes=self.num_classes,
            loss_differentiable=self.loss_differentiable,
            backward_per_step=self.backward_per_step,
            batch_source=self.batch_source,
            judged_curve=_finite_list(self.loss_curve),
            reference=finite_or_none(self.initial_loss),
            final_loss_after=finite_or_none(self.final_loss_after),
        )
        return envelope(
            "overfit", "completed", self.verdict, self.summary, self.environment, to_json(payload)
        )


@dataclass
class ParamGrad:
    """One parameter's row in the gradient table.

    `grad_norm[k]` is the L2 norm of the gradient after step k's backward (None: no gradient).
    `weight_norm` is the parameter's L2 norm before the first step. `ratio` is the mean over the
    steps with a gradient of ‖grad_k‖ / ‖weight_k‖ (None when no step had one or the weight is
    zero). `status` is one of ok, none (never a gradient), zero, nonfinite, frozen,
    not_in_optimizer.
    """

    name: str
    shape: list[int]
    numel: int
    requires_grad: bool
    in_optimizer: bool
    grad_norm: list[float | None]
    weight_norm: float | None
    ratio: float | None
    status: str
    #: the line that created the parameter (its module's `self.x = nn.X(...)`), when known
    site: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "shape": list(self.shape),
            "numel": self.numel,
            "requires_grad": self.requires_grad,
            "in_optimizer": self.in_optimizer,
            "grad_norm": _finite_list(self.grad_norm),
            "weight_norm": finite_or_none(self.weight_norm),
            "ratio": finite_or_none(self.ratio),
            "status": self.status,
            "site": self.site,
        }


#: what to do about each kind of `grad_scan` finding (none for `frozen`: information only)
GRAD_ADVICE = {
    "never_gradient": "Connect them to the loss, or remove them.",
    "zero_gradient": "Look for dead units (ReLUs that never fire) or a path multiplied by zero.",
    "nonfinite_gradient": "Lower the learning rate, clip the gradients, or make the failing "
    "operation safe (a sqrt, log or division at 0).",
    "not_in_optimizer": "Add them to the optimizer: build it from the model's parameters().",
    "optimizer_params_not_in_model": "Build the optimizer from the model's own parameters.",
    "loss_not_differentiable": "Compute the loss from the model's output without .detach(), "
    ".item(), .data or torch.no_grad().",
    "vanishing": "Check the initialisation, normalisation layers and residual connections.",
    "exploding": "Clip the gradients (torch.nn.utils.clip_grad_norm_) or lower the learning rate.",
}


@dataclass
class GradFinding:
    """One finding of `grad_scan`: `kind` is never_gradient, zero_gradient, nonfinite_gradient,
    frozen, not_in_optimizer, optimizer_params_not_in_model, loss_not_differentiable, vanishing
    or exploding; its `advice` is the kind's (GRAD_ADVICE)."""

    kind: str
    severity: Severity
    message: str
    params: list[str] = field(default_factory=list)
    step: int | None = None
    advice: str | None = None

    def __post_init__(self) -> None:
        if self.advice is None:
            self.advice = GRAD_ADVICE.get(self.kind)

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "severity": self.severity,
            "message": self.message,
            "params": list(self.params),
            "step": self.step,
            "advice": self.advice,
        }


@dataclass
class GradScanResult:
    """Result of `grad_scan`. Verdict `problems` when any finding is an error or a warning
    (frozen parameters are info only), else `healthy`.

    Depth profile: the trainable parameters that got a finite gradient and have a non-zero
    weight, in registration order, are cut into thirds; `depth_first_ratio` and
    `depth_last_ratio` are the mean grad/weight ratios of the first and last third.
    `depth_verdict` is `vanishing` when first/last < `VANISHING_BELOW`, `exploding` when
    first/last > `EXPLODING_ABOVE`, `insufficient` with fewer than 3 such parameters, else `ok`.
    The runtime check orders by layer depth from the loss instead (parallel branches averaged
    per depth) and needs `MIN_DEPTH_LEVELS` depths; there a warning alone is `healthy`.
    """

    verdict: GradVerdict
    environment: Environment
    steps_requested: int
    steps_run: int
    losses: list[float | None]
    global_grad_norm: list[float | None]
    params: list[ParamGrad]
    findings: list[GradFinding]
    largest: list[str]
    smallest: list[str]
    depth_verdict: DepthVerdict
    depth_first_ratio: float | None
    depth_last_ratio: float | None
    vanishing_below: float
    exploding_above: float

    def findings_of(self, kind: str) -> list[GradFinding]:
        return [f for f in self.findings if f.kind == kind]

    @property
    def summary(self) -> str:
        counts: dict[str, int] = {}
        for finding in self.findings:
            counts[finding.kind] = counts.get(finding.kind, 0) + 1
        listed = ", ".join(f"{kind} x{n}" for kind, n in counts.items()) or "no findings"
        return (
            f"grads {self.verdict}: {len(self.params)} parameters over {self.steps_run} "
            f"step{'' if self.steps_run == 1 else 's'}; "
            f"{listed}; depth {self.depth_verdict}"
        )

    def to_json(self) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "steps_requested": self.steps_requested,
            "steps_run": self.steps_run,
            "losses": _finite_list(self.losses),
            "global_grad_norm": _finite_list(self.global_grad_norm),
            "params": [p.to_json() for p in self.params],
            "findings": [f.to_json() for f in self.findings],
            "largest": list(self.largest),
            "smallest": list(self.smallest),
            "source": None,
            "depth": {
                "verdict": self.depth_verdict,
                "first_third_ratio": finite_or_none(self.depth_first_ratio),
                "last_third_ratio": finite_or_none(self.depth_last_ratio),
                "vanishing_below": self.vanishing_below,
                "exploding_above": self.exploding_above,
            },
        }
        return envelope("grads", "completed", self.verdict, self.summary, self.environment, payload)


def _fmt(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"{value:.4g}"


# ----------------------------------------------------------------------------------------------
# the envelope, typed: every renderer (the terminal report, the JSON output, the editor's
# report through schema.json) reads this one model; schema.json is generated from it


def _doc(text: str, **more: Any) -> dict[str, Any]:
    return {"doc": text, **more}


@dataclass
class SiteModel:
    """A line of the user's code."""

    filename: str
    line: int = field(metadata={"minimum": 1})
    function: str


@dataclass
class LoaderSettings:
    batch_size: int | None
    num_workers: int
    pin_memory: bool
    persistent_workers: bool
    prefetch_factor: int | None
    drop_last: bool


@dataclass
class EnvironmentModel:
    """Where the check ran (see `Environment`)."""

    torch: str
    device: str
    dtype: str
    batch_size: int | None
    model_mode: Literal["train", "eval"]
    autocast: str | None
    grad_scaler: bool | None
    loader: LoaderSettings | None


@dataclass
class WrittenFile:
    path: str
    bytes: int
    existed: bool


@dataclass
class RunFiles:
    """What the run wrote and where it went (the user's files are never changed)."""

    mechanism: Literal["overlay", "redirect"]
    protected: list[str]
    reason: str | None = field(metadata=_doc("why the overlay was not used"))
    written: list[WrittenFile]
    written_count: int
    deleted: list[str]
    deleted_count: int
    kept_in: str | None


@dataclass
class Isolation:
    process: Literal["child"]
    timeout_s: float
    working_directory: str
    environment: dict[str, str]
    files: RunFiles | None = field(
        default=None, metadata={"optional": True, "doc": "what the run wrote (the launcher)"}
    )


@dataclass
class CapturedModel:
    class_: str = field(metadata={"json": "class"})
    parameters: int
    trainable: int
    forward_site: SiteModel | None
    forwards: int


@dataclass
class CapturedOptimizer:
    class_: str = field(metadata={"json": "class", "doc": "the class, or 'manual update'"})
    lr: list[float | None]
    parameters: int
    steps: int
    primary: bool
    site: SiteModel | None
    step_site: SiteModel | None


@dataclass
class CapturedLoader:
    role: Literal["train", "other"]
    batches: int
    settings: LoaderSettings
    site: SiteModel | None
    iter_site: SiteModel | None


@dataclass
class CapturedLoss:
    function: str
    site: SiteModel | None
    input_shape: list[int] | None
    target_shape: list[int] | None
    num_classes: int | None
    reduction: str | None
    value: float | None


@dataclass
class CapturedBackward:
    calls: int
    site: SiteModel | None


@dataclass
class Captured:
    """The objects of the training step the launcher found, with their lines."""

    models: list[CapturedModel]
    optimizers: list[CapturedOptimizer]
    loaders: list[CapturedLoader]
    losses: list[CapturedLoss]
    backward: CapturedBackward


@dataclass
class Diagnostic:
    """A finding at a line of the user's code. `message` is the whole text (what was found,
    then what to do); `advice` is what to do, alone."""

    code: str
    name: str
    severity: Severity
    message: str
    advice: str | None
    filename: str | None
    line: int | None
    evidence: dict[str, Any]


@dataclass
class ErrorInfo:
    kind: str = field(
        metadata=_doc(
            "crash, exit, timeout, out_of_memory, killed, setup, cancelled, internal, "
            "torchlint, exception"
        )
    )
    message: str
    site: SiteModel | None
    exit_code: int | None
    output_tail: list[str]


@dataclass
class Timing:
    """The primary optimizer's median step under the check (after 5 warm-up steps)."""

    step_ms_median: float
    steps: int


# payloads ---------------------------------------------------------------------------------------


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

Status = Literal["completed", "capture_failed", "error", "timeout"]
OutcomeValue = Literal["pass", "fail", "inconclusive", "not_applicable"]


@dataclass
class FrameworkUse:
    """A framework whose Trainer ran the script's loop, with torchlint's callback."""

    integration: str
    note: str


@dataclass
class Envelope:
    """The result of one runtime check. `verdict` is the check's own word; `outcome` one of
    four, the same for every check (a check with an error-level finding never passes);
    `reason` the cause of a fail, what would decide an inconclusive result, or why the check
    does not apply."""

    schema_version: int
    check: Literal["overfit", "grads", "profile", "fit", "lr-find"]
    status: Status
    verdict: str | None
    outcome: OutcomeValue | None
    reason: str | None
    summary: str
    script: str | None
    argv: list[str]
    duration_s: float | None
    isolation: Isolation | None
    environment: EnvironmentModel | None
    captured: Captured | None
    diagnostics: list[Diagnostic]
    error: ErrorInfo | None
    payload: Any
    timing: Timing | None
    frameworks: list[FrameworkUse] | None = field(
        default=None, metadata={"optional": True, "doc": "the Trainers that ran the loop"}
    )

    @classmethod
    def read(cls, data: dict[str, Any]) -> Envelope:
        """An envelope from its JSON, its payload read as the check's (ModelError when it does
        not fit)."""
        from torchlint.runtime.typed import from_json

        envelope = from_json(cls, data)
        envelope.payload = from_json(
            payload_type(envelope.check, envelope.status, data["payload"]),
            data["payload"],
            "$.payload",
        )
        return envelope


def payload_type(check: str, status: str, payload: Any) -> type:
    """The class of an envelope's payload."""
    if isinstance(payload, dict) and not payload:
        return EmptyPayload
    if status == "capture_failed":
        return CaptureFailedPayload
    if isinstance(payload, dict) and set(payload) == {"error"}:
        return ErrorPayload
    return PAYLOADS[check]  # completed, or what a check had when its script crashed
