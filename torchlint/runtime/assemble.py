"""Turns what `Capture` saw during a launched run into the result envelope: verdict, evidence,
and diagnostics anchored at the user's lines."""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import nn

from torchlint.runtime.capture import Capture
from torchlint.runtime.captured import Finding, LoaderInfo, learning_rates, loader_settings
from torchlint.runtime.core import (
    ABSOLUTE_FLOOR,
    FINAL_WINDOW,
    TARGET_RATIO,
    overfit_verdict,
    summarise_grads,
)
from torchlint.runtime.results import (
    Environment,
    GradScanResult,
    OverfitResult,
    envelope,
    error_info,
    finite_or_none,
)
from torchlint.runtime.sites import Site

#: the initial loss is flagged when it exceeds the uniform-prediction value by this factor
INITIAL_LOSS_TOLERANCE = 1.5

_SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}

#: which finding of `grad_scan` becomes which runtime diagnostic
_GRAD_CODES = {
    "never_gradient": ("TLR201", "never-gradient"),
    "zero_gradient": ("TLR202", "zero-gradient"),
    "nonfinite_gradient": ("TLR203", "nonfinite-gradient"),
    "frozen": ("TLR204", "frozen-parameters"),
    "not_in_optimizer": ("TLR205", "not-in-optimizer"),
    "optimizer_params_not_in_model": ("TLR206", "optimizer-params-not-in-model"),
    "vanishing": ("TLR207", "vanishing-gradients"),
    "exploding": ("TLR208", "exploding-gradients"),
    "loss_not_differentiable": ("TLR103", "loss-not-differentiable"),
}

_CRASHED = ("TLR001", "script-crashed")
_OUR_FAULT = ("TLR005", "torchlint-failure")
#: (kept, dropped, anywhere): when the first is found (anywhere, or at the same line), the
#: second says the same with less and goes
DUPLICATES = (("TLR105", "TLR206", True), ("TLR605", "TLR305", False))
#: the verdict of a check stopped at its first step by a sanity check
FAILED_VERDICT = {"overfit": "fail", "grads": "problems"}  # other checks: "stopped"
_LOSS_NAMES = {"cross_entropy": "cross-entropy", "nll_loss": "negative log-likelihood"}
_GRAD_SCAN_CODES = {code for code, _ in _GRAD_CODES.values()}

_LIGHTNING = "PyTorch Lightning: use Trainer(overfit_batches=1) for its own overfit test"
_FRAMEWORKS = {
    "lightning": _LIGHTNING,
    "pytorch_lightning": _LIGHTNING,
    "transformers": "Hugging Face transformers: its Trainer owns the loop",
    "accelerate": "Hugging Face Accelerate: its prepared objects wrap the loader and optimizer",
}

SETUP_ADVICE = (
    "Define `torchlint_setup()` in the script, returning dict(model=..., loader=..., "
    "loss_fn=..., optimizer=...) (and batch_fn=... for dict batches), and run again; or call "
    "torchlint.runtime.overfit_one_batch(...) / grad_scan(...) from your own tests."
)


@dataclass
class Outcome:
    """How the user's script ended: `stopped` (by us, `reason` says why), `finished`, `exit`
    (sys.exit with `exit_code`), or `crash` (an exception: `message`, `site`, `oom`)."""

    kind: str
    reason: str | None = None
    exit_code: int | None = None
    message: str = ""
    site: Site | None = None
    oom: bool = False
    traceback_tail: list[str] = field(default_factory=list)
    #: why the crash is torchlint's own fault, not the script's (see blame.py)
    torchlint_fault: str | None = None


def _site_json(site: Site | None) -> dict[str, Any] | None:
    return site.to_json() if site is not None else None


def _where(site: Site | None) -> str:
    if site is None:
        return "an unknown line"
    return f"line {site.line}"


# ----------------------------------------------------------------------------------------------
# sites of parameters


def param_site(capture: Capture, name: str) -> Site | None:
    """The line that created the parameter `name` (as listed in the scan): its own registration
    when the user's code registered it, else the line that created its module or the nearest
    ancestor."""
    roots = capture.roots
    if not roots:
        return None
    root = roots[0].module
    if len(roots) > 1:
        head, _, name = name.partition(".")
        root = next((r.module for r in roots if type(r.module).__name__ == head), root)
    path, _, leaf = name.rpartition(".")
    chain: list[nn.Module] = [root]
    module = root
    for part in path.split(".") if path else []:
        child = getattr(module, "_modules", {}).get(part)
        if not isinstance(child, nn.Module):
            break
        chain.append(child)
        module = child
    own = capture.param_sites.get(chain[-1], {}).get(leaf)
    if own is not None:
        return own
    for module in reversed(chain):
        site = capture.module_sites.get(module)
        if site is not None:
            return site
    return roots[0].forward_site


# ----------------------------------------------------------------------------------------------
# captured objects


def _loss_value(value: torch.Tensor | None) -> float | None:
    return finite_or_none(float(value)) if value is not None else None


def captured_json(capture: Capture) -> dict[str, Any]:
    models = [
        {
            "class": type(root.module).__name__,
            "parameters": sum(p.numel() for p in root.module.parameters()),
            "trainable": sum(p.numel() for p in root.module.parameters() if p.requires_grad),
            "forward_site": _site_json(root.forward_site),
            "forwards": root.forwards,
        }
        for root in capture.roots
    ]
    optimizers = [
        {
            "class": type(info.optimizer).__name__,
            "lr": learning_rates(info.optimizer),
            "parameters": sum(len(g["params"]) for g in info.optimizer.param_groups),
            "steps": info.steps,
            "primary": info is capture.primary,
            "site": _site_json(info.site),
            "step_site": _site_json(info.step_site),
        }
        for info in capture.optimizers
    ]
    loaders = [
        {
            "role": info.role,
            "batches": info.batches,
            "settings": loader_settings(info.loader),
            "site": _site_json(info.site),
            "iter_site": _site_json(info.iter_site),
        }
        for info in capture.loaders
    ]
    losses = [
        {
            "function": call.function,
            "site": _site_json(call.site),
            "input_shape": call.input_shape,
            "target_shape": call.target_shape,
            "num_classes": call.num_classes,
            "reduction": call.reduction,
            "value": _loss_value(call.value),
        }
        for call in capture.loss_calls
    ]
    return {
        "models": models,
        "optimizers": optimizers,
        "loaders": loaders,
        "losses": losses,
        "backward": {"calls": capture.backward_calls, "site": _site_json(capture.backward_site)},
    }


def environment_of(capture: Capture) -> Environment:
    param = None
    for root in capture.roots:
        param = next(
            (p for p in root.module.parameters() if p.is_floating_point()),
            next(root.module.parameters(), None),
        )
        if param is not None:
            break
    train = capture.train_loader
    forward = next((f for f in capture.forwards if f.grad_enabled), None)
    training = forward.training if forward is not None else True
    return Environment(
        torch=str(torch.__version__),
        device=_device_name(param.device) if param is not None else "n/a",
        dtype=str(param.dtype).removeprefix("torch.") if param is not None else "n/a",
        batch_size=train.batch_size_seen if train is not None else None,
        model_mode="train" if training else "eval",
        autocast=capture.autocast,
        grad_scaler=capture.grad_scaler_used if capture.backward_calls else None,
        loader=loader_settings(train.loader) if train is not None else None,
    )


def _device_name(device: torch.device) -> str:
    if device.type == "cuda" and torch.cuda.is_available():
        index = device.index if device.index is not None else torch.cuda.current_device()
        return f"{device} ({torch.cuda.get_device_name(index)})"
    return str(device)


# ----------------------------------------------------------------------------------------------
# checks shared by both modes


def coverage_findings(capture: Capture) -> list[Finding]:
    """Optimizers against the models they should train: an optimizer over another model's
    parameters, trainable parameters in no optimizer, a learning rate of zero, frozen
    parameters."""
    findings: list[Finding] = []
    model_params = {id(p): p for root in capture.roots for p in root.module.parameters()}
    optimized: set[int] = set()
    for info in capture.optimizers:
        ids = {id(p) for g in info.optimizer.param_groups for p in g["params"]}
        optimized |= ids
        if model_params and ids and not ids & model_params.keys():
            models = ", ".join(type(r.module).__name__ for r in capture.roots)
            findings.append(
                Finding(
                    "TLR105",
                    "optimizer-not-over-model",
                    "error",
                    f"{type(info.optimizer).__name__} (created at {_where(info.site)}) holds "
                    f"none of the parameters of the model being trained ({models}): it was "
                    "built over another model's parameters, so its steps change nothing the "
                    "loss depends on.",
                    info.site,
                    {"optimizer_parameters": len(ids)},
                )
            )
        lrs = [lr for lr in (info.first_lrs or []) if lr is not None]
        if info.steps and lrs and all(lr == 0 for lr in lrs):
            findings.append(
                Finding(
                    "TLR104",
                    "zero-learning-rate",
                    "error",
                    f"{type(info.optimizer).__name__} (created at {_where(info.site)}) has a "
                    "learning rate of 0 in every parameter group at its first step, so its "
                    "steps change nothing.",
                    info.site,
                    {"lr": lrs},
                )
            )
    if capture.optimizers:
        missing = [
            name
            for root in capture.roots
            for name, p in root.module.named_parameters()
            if p.requires_grad and id(p) not in optimized
        ]
        owner = capture.primary or capture.optimizers[0]
        if missing and len(missing) < len(model_params):
            findings.append(
                Finding(
                    "TLR205",
                    "not-in-optimizer",
                    "error",
                    f"{len(missing)} trainable parameter(s) are in no optimizer "
                    f"({_short_list(missing)}): they get gradients but never change. Add them "
                    f"to the optimizer created at {_where(owner.site)}.",
                    owner.site,
                    {"params": missing[:50]},
                )
            )
    return findings


def frozen_finding(capture: Capture) -> Finding | None:
    frozen: list[str] = []
    total = 0
    for root in capture.roots:
        for name, p in root.module.named_parameters():
            total += 1
            if not p.requires_grad:
                frozen.append(name)
    if not frozen:
        return None
    first = frozen[0]
    return Finding(
        "TLR204",
        "frozen-parameters",
        "info",
        f"{len(frozen)} of {total} parameter tensors are frozen (requires_grad=False): "
        f"{_short_list(frozen)}. Only the rest can learn.",
        param_site(capture, first),
        {"params": frozen[:50]},
    )


def validation_findings(capture: Capture) -> list[Finding]:
    """Forwards on batches of a non-training loader with gradients enabled and no backward."""
    if capture.train_loader is None:
        return []
    findings: list[Finding] = []
    seen: set[Site | None] = set()
    for forward in capture.forwards:
        loader: LoaderInfo | None = forward.loader
        if (
            forward.grad_enabled
            and not forward.backward_followed
            and loader is not None
            and loader.role != "train"
            and forward.site not in seen
        ):
            seen.add(forward.site)
            findings.append(
                Finding(
                    "TLR305",
                    "validation-without-no-grad",
                    "warning",
                    f"{type(forward.root.module).__name__} ran on batches of the loader "
                    f"created at {_where(loader.site)} with gradients enabled and no backward: "
                    "wrap the evaluation in torch.no_grad() (or torch.inference_mode()) to save "
                    "the memory and time of recording the graph.",
                    forward.site,
                    {"mode": "train" if forward.training else "eval"},
                )
            )
    return findings


def _short_list(names: list[str], limit: int = 4) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


# ----------------------------------------------------------------------------------------------
# per-mode results


def _stacked(values: list[torch.Tensor | None]) -> list[float | None]:
    present = [v for v in values if v is not None]
    if not present:
        return [None] * len(values)
    numbers: list[float] = torch.stack([v.to("cpu") for v in present]).tolist()
    it = iter(numbers)
    return [next(it) if v is not None else None for v in values]


def overfit_result(capture: Capture) -> tuple[OverfitResult, list[Finding]]:
    findings: list[Finding] = []
    primary = capture.primary
    steps = min(primary.steps, capture.target_steps) if primary is not None else 0
    first_losses: dict[int, torch.Tensor | None] = {}
    counts: dict[int, int] = {}
    for k, value in capture.backward_losses:
        if k < steps:
            first_losses.setdefault(k, value)
            counts[k] = counts.get(k, 0) + 1
    raw = [first_losses.get(k) for k in range(steps)]
    values = _stacked(raw)
    curve: list[float | None] = [v if v is not None and math.isfinite(v) else None for v in values]
    nan_step = capture.nan_step
    if nan_step is None:
        nan_step = next(
            (k for k, v in enumerate(values) if v is not None and not math.isfinite(v)), None
        )
    if nan_step is not None:
        curve = curve[: nan_step + 1]
    verdict, initial, final, ratio = overfit_verdict(curve, nan_step)
    if not capture.loss_differentiable or capture.stop_reason == "label_out_of_range":
        verdict = "fail"

    first_call = next(
        (
            c
            for c in capture.loss_calls
            if c.phase == "first"
            and c.function in ("cross_entropy", "nll_loss", "binary_cross_entropy_with_logits")
        ),
        None,
    )
    expected: float | None = None
    reason: str | None = None
    vs_expected: float | None = None
    initial_fn_value = _loss_value(first_call.value) if first_call is not None else None
    if first_call is not None and first_call.reduction == "mean":
        if first_call.function == "binary_cross_entropy_with_logits":
            expected, reason = math.log(2), "log 2 for binary cross-entropy at zero logits"
        elif first_call.num_classes and first_call.num_classes > 1:
            c = first_call.num_classes
            expected = math.log(c)
            human = _LOSS_NAMES.get(first_call.function, first_call.function)
            reason = f"log C for {human} over C={c} classes"
        first_value = _loss_value(first_call.value)
        if expected and first_value is not None:
            vs_expected = first_value / expected
            if vs_expected > INITIAL_LOSS_TOLERANCE:
                findings.append(
                    Finding(
                        "TLR102",
                        "initial-loss-off",
                        "warning",
                        f"the initial loss {first_value:.4g} is {vs_expected:.2f}x the "
                        f"{expected:.4g} of a model that predicts uniformly ({reason}): the "
                        "last layer starts confidently wrong (large initial weights or a "
                        "biased bias), which wastes the first steps. Initialise it smaller.",
                        first_call.site,
                        {"initial_loss": first_value, "expected": expected},
                    )
                )
    accuracies = [c for c in capture.loss_calls if c.accuracy is not None]
    initial_acc = next((c for c in accuracies if c.phase == "first"), None)
    final_acc = next((c for c in reversed(accuracies) if c.phase == "final"), None)
    total_backward = sum(counts.values())
    train = capture.train_loader
    source = (
        f"first training batch (DataLoader created at {_where(train.site)}), cached after "
        "collation and replayed as a fresh copy every step, so shuffling and augmentation do "
        "not change it"
        if train is not None
        else "no training loader"
    )
    result = OverfitResult(
        verdict=verdict,
        environment=environment_of(capture),
        steps_requested=capture.target_steps,
        steps_run=steps if nan_step is None else nan_step,
        loss_curve=curve,
        initial_loss=initial,
        final_loss=final,
        final_window=FINAL_WINDOW,
        ratio=ratio,
        target_ratio=TARGET_RATIO,
        absolute_floor=ABSOLUTE_FLOOR,
        nan_step=nan_step,
        expected_initial_loss=expected,
        expected_initial_loss_reason=reason,
        initial_loss_vs_expected=vs_expected,
        initial_accuracy=_loss_value(initial_acc.accuracy) if initial_acc else None,
        final_accuracy=_loss_value(final_acc.accuracy) if final_acc else None,
        num_classes=first_call.num_classes if first_call else None,
        loss_differentiable=capture.loss_differentiable,
        backward_per_step=(total_backward / steps) if steps else None,
        batch_source=source,
        initial_loss_fn_value=initial_fn_value,
    )
    backward_site = capture.backward_site
    if verdict == "nan":
        findings.append(
            Finding(
                "TLR101",
                "overfit-nan",
                "error",
                f"the loss became non-finite at step {nan_step} while fitting one batch: "
                "check the learning rate, invalid values in the data (log of 0, division by "
                "0), and exploding gradients; `torchlint run grads` finds the first "
                "parameter whose gradient went non-finite.",
                backward_site,
                {"nan_step": nan_step},
            )
        )
    elif verdict == "fail" and capture.loss_differentiable and steps:
        schedule = ""
        if primary is not None and primary.first_lrs and any(primary.first_lrs):
            now = learning_rates(primary.optimizer)
            if now and all(lr == 0 for lr in now):
                schedule = (
                    " The learning-rate schedule reached 0 during the check: it ran "
                    f"{steps} steps, more than the schedule plans for; try a smaller --steps."
                )
        findings.append(
            Finding(
                "TLR100",
                "overfit-failed",
                "error",
                f"the model did not fit a single batch: loss {_num(initial)} -> {_num(final)} "
                f"in {steps} steps (ratio {_num(ratio)}; a pass needs <= {TARGET_RATIO:g}). "
                "A model that cannot memorise one batch has a bug in the loop, the loss, the "
                f"optimizer or the model; see the other findings.{schedule}",
                backward_site,
                {"initial_loss": initial, "final_loss": final, "ratio": ratio},
            )
        )
    return result, findings


def grads_result(capture: Capture) -> tuple[GradScanResult, list[Finding]]:
    rows = len(capture.grad_rows)
    losses_by_step: dict[int, torch.Tensor | None] = {}
    for k, value in capture.backward_losses:
        if k < rows:
            losses_by_step.setdefault(k, value)
    loss_tensors = [v for k in range(rows) if (v := losses_by_step.get(k)) is not None]
    result = summarise_grads(
        environment_of(capture),
        capture.target_steps,
        capture.scan_names,
        capture.scan_params,
        capture.scan_optimizer_ids,
        capture.scan_foreign,
        loss_tensors,
        capture.grad_rows,
        capture.weight_rows,
        capture.present_rows,
        capture.loss_differentiable,
    )
    for row in result.params:
        row.site = _site_json(param_site(capture, row.name))
    findings: list[Finding] = []
    for finding in result.findings:
        if finding.kind not in _GRAD_CODES or finding.kind in ("not_in_optimizer", "frozen"):
            continue  # reported by coverage_findings / frozen_finding with better anchors
        code, name = _GRAD_CODES[finding.kind]
        if finding.kind == "optimizer_params_not_in_model":
            owner = capture.primary or (capture.optimizers[0] if capture.optimizers else None)
            findings.append(
                Finding(
                    code,
                    name,
                    finding.severity,
                    finding.message,
                    owner.site if owner is not None else None,
                )
            )
            continue
        if finding.kind == "nonfinite_gradient":
            findings.append(
                Finding(
                    code,
                    name,
                    finding.severity,
                    finding.message,
                    capture.backward_site,
                    {"params": finding.params[:50], "step": finding.step},
                )
            )
            continue
        if not finding.params:
            findings.append(
                Finding(code, name, finding.severity, finding.message, capture.backward_site)
            )
            continue
        by_site: dict[Site | None, list[str]] = {}
        for param in finding.params:
            by_site.setdefault(param_site(capture, param), []).append(param)
        for site, params in by_site.items():
            findings.append(
                Finding(
                    code,
                    name,
                    finding.severity,
                    f"{len(params)} parameter tensor(s) {_grad_phrase(finding.kind)}: "
                    f"{_short_list(params)}",
                    site,
                    {"params": params[:50]},
                )
            )
    return result, findings


def _grad_phrase(kind: str) -> str:
    return {
        "never_gradient": "never got a gradient: they are not connected to the loss "
        "(detached, unused, or computed under no_grad); connect them or remove them",
        "zero_gradient": "got an all-zero gradient at every step: look for dead units "
        "(ReLUs that never fire) or a path multiplied by zero",
    }.get(kind, kind.replace("_", " "))


def _num(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4g}"


# ----------------------------------------------------------------------------------------------
# the envelope


def capture_gaps(capture: Capture) -> list[str]:
    """What the launcher needed and did not see, in the order a training step needs it."""
    missing: list[str] = []
    if not capture.roots:
        missing.append("no nn.Module with parameters was called (no model forward)")
    if not capture.loaders and capture.mode == "overfit":
        missing.append("no torch.utils.data.DataLoader was iterated")
    elif capture.mode == "overfit" and capture.backward_calls and capture.train_loader is None:
        missing.append("the batch before the first backward did not come from a DataLoader")
    if not capture.backward_calls:
        missing.append("backward() was never called")
    if not capture.optimizers:
        missing.append("no torch.optim optimizer was created")
    elif capture.primary is None and capture.stop_reason != "no_loader":
        first = capture.optimizers[0]
        missing.append(
            f"the {type(first.optimizer).__name__} created at {_where(first.site)} never stepped"
        )
    return missing


def frameworks_in_use() -> list[str]:
    return [hint for name, hint in _FRAMEWORKS.items() if name in sys.modules]


def build_envelope(
    capture: Capture,
    outcome: Outcome,
    *,
    script: str,
    argv: list[str],
    duration_s: float,
    isolation: dict[str, Any],
) -> dict[str, Any]:
    check = capture.mode
    findings: list[Finding] = list(capture.findings)
    steps = capture.primary.steps if capture.primary is not None else 0
    stopped_by_check = outcome.kind == "stopped" and outcome.reason in (
        "label_out_of_range",
        "loss_not_differentiable",
    )
    gaps = capture_gaps(capture)
    captured = captured_json(capture)
    result: dict[str, Any]
    if stopped_by_check or (steps and not gaps):
        findings += coverage_findings(capture)
        frozen = frozen_finding(capture)
        findings += validation_findings(capture)
        crashed = not stopped_by_check and (
            outcome.kind == "crash" or (outcome.kind == "exit" and bool(outcome.exit_code))
        )
        if capture.plugin is not None:
            plugged = capture.plugin.result(outcome)
            if not crashed:
                findings += plugged.findings
            result = envelope(
                check,
                "completed",
                plugged.verdict,
                plugged.summary,
                environment_of(capture),
                plugged.payload,
            )
        elif check == "overfit":
            overfit, extra = overfit_result(capture)
            if not crashed:  # a verdict on a run that crashed would blame the wrong thing
                findings += extra
            result = overfit.to_json()
            if frozen is not None and overfit.verdict != "pass":
                frozen.severity = "warning"
        else:
            grads, extra = grads_result(capture)
            findings += extra
            result = grads.to_json()
            extra_names = [
                f.name
                for f in findings
                if f.severity in ("error", "warning") and f.code not in _GRAD_SCAN_CODES
            ]
            if extra_names:
                result["verdict"] = "problems"
                detail = result["summary"].split(": ", 1)[-1]
                result["summary"] = f"grads problems: {detail}; also " + ", ".join(
                    dict.fromkeys(extra_names)
                )
        if frozen is not None:
            findings.append(frozen)
        if stopped_by_check:
            result["verdict"] = FAILED_VERDICT.get(check, "stopped")
            result["summary"] = f"{check}: stopped at the first step: " + (
                findings[0].message.split(". ")[0] if findings else outcome.reason or ""
            )
        if crashed:
            result["status"] = "error"
            result["verdict"] = None
            result["error"] = _error_of(outcome)
            result["summary"] = f"{check}: the script {_ended(outcome)} after {steps} step(s)"
        elif (
            outcome.kind in ("finished", "exit")
            and steps < capture.target_steps
            and capture.plugin is None
        ):
            result["summary"] += (
                f" (the script ended after {steps} of {capture.target_steps} steps)"
            )
    elif outcome.kind == "crash" or (outcome.kind == "exit" and outcome.exit_code):
        result = envelope(
            check,
            "error",
            None,
            f"{check}: the script {_ended(outcome)} before a training step completed",
            environment_of(capture) if capture.roots else None,
            {},
        )
        result["error"] = _error_of(outcome)
    else:
        missing = gaps or ["no optimizer step completed"]
        frameworks = frameworks_in_use()
        advice = SETUP_ADVICE
        if frameworks:
            advice = "; ".join(frameworks) + ". " + advice
        summary = f"{check}: could not capture the training step: " + "; ".join(missing)
        result = envelope(
            check,
            "capture_failed",
            None,
            summary,
            environment_of(capture) if capture.roots else None,
            {"missing": missing, "advice": advice, "frameworks": frameworks},
        )
        findings.append(
            Finding(
                "TLR003",
                "capture-failed",
                "error",
                f"torchlint could not find the training step: {'; '.join(missing)}. {advice}",
                capture.backward_site or (capture.roots[0].forward_site if capture.roots else None),
                {"missing": missing},
            )
        )
    if result["status"] == "error" and outcome.site is not None:
        findings.append(
            Finding(
                *(
                    ("TLR004", "script-exited")
                    if outcome.kind == "exit"
                    else _OUR_FAULT
                    if outcome.torchlint_fault
                    else _CRASHED
                ),
                "error",
                f"the script {_ended(outcome)}",
                outcome.site,
                {},
            )
        )
    for kept, dropped, anywhere in DUPLICATES:
        sites = {f.site for f in findings if f.code == kept}
        if sites:
            findings = [
                f for f in findings if f.code != dropped or not (anywhere or f.site in sites)
            ]
    findings.sort(key=lambda f: _SEVERITY_ORDER.get(f.severity, 3))
    result.update(
        script=script,
        argv=list(argv),
        duration_s=round(duration_s, 3),
        isolation=isolation,
        captured=captured,
        diagnostics=[f.to_json() for f in findings],
    )
    return result


def _ended(outcome: Outcome) -> str:
    if outcome.torchlint_fault:
        text = f"failed because of torchlint, not because of the script: {outcome.torchlint_fault}"
        detail = outcome.message.split(": ", 1)[-1]
        return text if detail in text else f"{text} ({outcome.message})"
    if outcome.kind == "exit":
        return f"called sys.exit({outcome.exit_code})" + (
            f" at line {outcome.site.line}" if outcome.site else ""
        )
    where = f" at line {outcome.site.line}" if outcome.site else ""
    what = "ran out of memory" if outcome.oom else "crashed"
    return f"{what}{where}: {outcome.message}"


def _error_of(outcome: Outcome) -> dict[str, Any]:
    kind = "exit" if outcome.kind == "exit" else ("out_of_memory" if outcome.oom else "crash")
    if outcome.torchlint_fault:
        kind = "torchlint"
    return error_info(
        kind,
        f"the script {_ended(outcome)}",
        _site_json(outcome.site),
        outcome.exit_code,
        outcome.traceback_tail,
    )
