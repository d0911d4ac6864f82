"""The explicit API's results (`overfit_one_batch`, `grad_scan`) and where a check ran."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from torchlint.runtime.envelope import envelope, error_info, finite_or_none
from torchlint.runtime.envelope_parts import Severity
from torchlint.runtime.payloads import OverfitPayload

OverfitVerdict = Literal["pass", "fail", "nan"]
GradVerdict = Literal["healthy", "problems"]
DepthVerdict = Literal["ok", "vanishing", "exploding", "insufficient"]


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
