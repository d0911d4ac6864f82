"""Turns what `Capture` saw during a launched run, and its plugin's result, into the result
envelope: status, verdict and outcome, evidence, and diagnostics anchored at the user's lines.
The parts every check shares live here: the captured objects, the environment, the optimizer
coverage, frozen parameters, validation without no_grad, capture failures and crashes."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import nn

from torchlint.runtime.checks import CHECKS, STOPPED_VERDICT, outcome_of
from torchlint.runtime.child.capture import Capture
from torchlint.runtime.child.captured import (
    Finding,
    LoaderInfo,
    learning_rates,
    loader_settings,
    root_names,
)
from torchlint.runtime.envelope import envelope, error_info, finite_or_none, plain_text
from torchlint.runtime.results import Environment
from torchlint.runtime.sites import Site

_SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}

#: (kept, dropped, anywhere): when the first is found (anywhere, or at the same line), the
#: second says the same with less and goes
DUPLICATES = (("TLR105", "TLR206", True), ("TLR605", "TLR305", False), ("TLR204", "TLR103", True))
#: the verdict of a check stopped at its first step by a sanity check
FAILED_VERDICT = {"overfit": "fail", "grads": "problems"}  # other checks: "stopped"
#: the verdict a passing check takes when an error-level finding was made beside it
ERROR_VERDICT = {"overfit": "fail", "grads": "problems"}
#: findings that say a check failed without saying why (another error-level finding is the
#: cause, when there is one)
GENERIC_FAILURES = ("TLR100", "TLR001", "TLR004")

_LIGHTNING = (
    "PyTorch Lightning: its Trainer is captured zero-config; Trainer(overfit_batches=1) is "
    "Lightning's own overfit test"
)
_FRAMEWORKS = {
    "lightning": _LIGHTNING,
    "pytorch_lightning": _LIGHTNING,
    "transformers": "Hugging Face transformers: add torchlint.integrations.transformers."
    "TorchlintCallback() to the Trainer's callbacks if its loop is not captured",
    "accelerate": "Hugging Face Accelerate: its prepared objects wrap the loader and optimizer",
}

SETUP_ADVICE = (
    "Define `torchlint_setup()` in the script, returning dict(model=..., loader=..., "
    "loss_fn=..., optimizer=...) (and batch_fn=... for dict batches), and run again; or call "
    "torchlint.runtime.overfit_one_batch(...) / grad_scan(...) from your own tests."
)
#: for the checks that follow the script's own loop only (no torchlint_setup())
OWN_LOOP_ADVICE = (
    "{check} follows the script's own training loop, so the script must train when run on its "
    "own: a backward, then a torch.optim optimizer's step{loader}. `torchlint run overfit` and "
    "`grads` also accept a `torchlint_setup()` in the script."
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
        named = zip(roots, root_names(roots), strict=True)
        root = next((r.module for r, root_name in named if root_name == head), root)
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
            "class": info.name,
            "lr": learning_rates(info.optimizer) if info.manual is None else [],
            "parameters": len(info.parameters()),
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
    explained: set[int] = set()
    wrong = wrong_model_findings(capture)
    for finding, params in wrong:
        findings.append(finding)
        explained |= params
    for info in capture.optimizers:
        if info.manual is not None:
            continue
        ids = {id(p) for p in info.parameters()}
        optimized |= ids
        # only an optimizer that stepped: a GAN's generator may not have run yet when a check
        # stops at the first backward of its discriminator
        if info.steps and model_params and ids and not ids & model_params.keys() and not wrong:
            models = ", ".join(type(r.module).__name__ for r in capture.roots)
            findings.append(
                Finding(
                    "TLR105",
                    f"{type(info.optimizer).__name__} (created at {_where(info.site)}) holds "
                    f"none of the parameters of the model being trained ({models}): it was "
                    "built over another model's parameters, so its steps change nothing the "
                    "loss depends on.",
                    info.site,
                    {"optimizer_parameters": len(ids)},
                    advice="Build it from the parameters of the model whose loss it should lower.",
                )
            )
        lrs = [lr for lr in (info.first_lrs or []) if lr is not None]
        if info.steps and lrs and all(lr == 0 for lr in lrs):
            findings.append(
                Finding(
                    "TLR104",
                    f"{type(info.optimizer).__name__} (created at {_where(info.site)}) has a "
                    "learning rate of 0 in every parameter group at its first step, so its "
                    "steps change nothing.",
                    info.site,
                    {"lr": lrs},
                    advice="Give it a positive learning rate (check the scheduler's start).",
                )
            )
    if capture.optimizers:
        missing = [
            name
            for root in capture.roots
            for name, p in root.module.named_parameters()
            if p.requires_grad and id(p) not in optimized and id(p) not in explained
        ]
        owner = capture.primary or capture.optimizers[0]
        manual = any(info.manual is not None for info in capture.optimizers)
        if missing and len(missing) < len(model_params) and not manual:
            findings.append(
                Finding(
                    "TLR205",
                    f"{len(missing)} trainable parameter(s) are in no optimizer "
                    f"({short_list(missing)}): they get gradients but never change.",
                    owner.site,
                    {"params": missing[:50]},
                    advice=f"Add them to the optimizer created at {_where(owner.site)}.",
                )
            )
    return findings


def wrong_model_findings(capture: Capture) -> list[tuple[Finding, set[int]]]:
    """TLR105 for an optimizer built over another model's parameters where that model also has
    an optimizer of its own (a GAN's `g_optimizer` over the discriminator): every parameter it
    holds is held by another optimizer too, while the loss it steps on trains parameters that no
    optimizer holds. Those parameters go with the finding (they are not TLR205 as well)."""
    names = _parameter_names(capture)
    out: list[tuple[Finding, set[int]]] = []
    for info in capture.optimizers:
        if info.manual is not None or not info.steps or not info.orphans_trained:
            continue
        ids = {id(p) for p in info.parameters()}
        others = [o for o in capture.optimizers if o is not info and o.manual is None]
        holder = next((o for o in others if ids and ids <= {id(p) for p in o.parameters()}), None)
        if holder is None:
            continue
        orphans = set(info.orphans_trained)
        listed = [name for i, name in names.items() if i in orphans] or ["outside the models"]
        out.append(
            (
                Finding(
                    "TLR105",
                    f"{type(info.optimizer).__name__} (created at {_where(info.site)}) holds "
                    f"only parameters that the {type(holder.optimizer).__name__} created at "
                    f"{_where(holder.site)} holds too, while the loss it steps on trains "
                    f"{len(orphans)} parameter(s) that no optimizer holds "
                    f"({short_list(listed)}): it was built over another model's parameters, "
                    "so that model is stepped twice and this one never changes.",
                    info.site,
                    {"optimizer_parameters": len(ids), "untrained_parameters": len(orphans)},
                    advice="Build it from the parameters of the model whose loss it should lower.",
                ),
                orphans,
            )
        )
    return out


def _parameter_names(capture: Capture) -> dict[int, str]:
    """Each root parameter's name as the scan lists it (the root's name first, when several)."""
    roots = capture.roots
    names: dict[int, str] = {}
    for root, root_name in zip(roots, root_names(roots), strict=True):
        for name, p in root.module.named_parameters():
            names.setdefault(id(p), f"{root_name}.{name}" if len(roots) > 1 else name)
    return names


def frozen_finding(capture: Capture) -> Finding | None:
    """Frozen parameters, at the line that froze them (`requires_grad_(False)` on them or their
    module, `p.requires_grad = False`), else at the line that created the first one's module."""
    frozen: list[tuple[str, nn.Parameter]] = []
    total = 0
    for root in capture.roots:
        for name, p in root.module.named_parameters():
            total += 1
            if not p.requires_grad:
                frozen.append((name, p))
    if not frozen:
        return None
    if len(frozen) == total and any(f.code == "TLR204" for f in capture.findings):
        return None  # everything frozen: already reported, as an error, at the first backward
    names = [name for name, _ in frozen]
    sites = [site for _, p in frozen if (site := capture.freeze_site(p)) is not None]
    site = sites[0] if sites else param_site(capture, names[0])
    how = f"frozen at line {site.line}" if sites and site is not None else "requires_grad=False"
    return Finding(
        "TLR204",
        f"{len(frozen)} of {total} parameter tensors are frozen ({how}): "
        f"{short_list(names)}. Only the rest can learn.",
        site,
        {"params": names[:50], "frozen_here": bool(sites)},
        advice="Unfreeze them if they should learn (requires_grad_(True) on their module).",
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
                    f"{type(forward.root.module).__name__} ran on batches of the loader "
                    f"created at {_where(loader.site)} with gradients enabled and no backward, "
                    "recording a graph it never uses.",
                    forward.site,
                    {"mode": "train" if forward.training else "eval"},
                    advice="Wrap the evaluation in torch.no_grad() (or "
                    "torch.inference_mode()) to save the memory and time of recording the graph.",
                )
            )
    return findings


def short_list(names: list[str], limit: int = 4) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


# ----------------------------------------------------------------------------------------------
# the envelope


def capture_gaps(capture: Capture) -> list[str]:
    """What the launcher needed and did not see, in the order a training step needs it."""
    missing: list[str] = []
    if not capture.roots:
        missing.append("no nn.Module with parameters was called (no model forward)")
    if not capture.backward_calls:
        missing.append("backward() was never called")
    stepped = capture.primary is not None and capture.primary.steps > 0
    if not capture.optimizers and not stepped:
        missing.append(
            "no torch.optim optimizer was created, and no update of the parameters by hand "
            "was seen after the first backward calls"
        )
    elif not stepped:
        first = capture.optimizers[0]
        missing.append(f"the {first.name} created at {_where(first.site)} never stepped")
    return missing


def frameworks_in_use() -> list[str]:
    return list(dict.fromkeys(hint for name, hint in _FRAMEWORKS.items() if name in sys.modules))


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
    plugin = capture.plugin
    findings: list[Finding] = list(capture.findings)
    steps = capture.primary.steps if capture.primary is not None else 0
    stopped_by_check = outcome.kind == "stopped" and outcome.reason in (
        "label_out_of_range",
        "loss_not_differentiable",
    )
    inapplicable = plugin.inapplicable is not None
    gaps = capture_gaps(capture)
    result: dict[str, Any]
    reason: str | None = None
    if stopped_by_check or inapplicable or (steps and not gaps):
        findings += coverage_findings(capture)
        frozen = frozen_finding(capture)
        findings += validation_findings(capture)
        crashed = not (stopped_by_check or inapplicable) and (
            outcome.kind == "crash" or (outcome.kind == "exit" and bool(outcome.exit_code))
        )
        plugged = plugin.result(outcome)
        if not crashed:  # a verdict on a run that crashed would blame the wrong thing
            findings += plugged.findings
        reason = plugged.reason
        result = envelope(
            check,
            "completed",
            plugged.verdict,
            plugged.summary,
            environment_of(capture),
            plugged.payload,
        )
        if frozen is not None:
            if check == "overfit" and plugged.verdict not in ("pass", "not_applicable"):
                frozen.severity = "warning"  # frozen layers may explain the failure
            findings.append(frozen)
        if stopped_by_check:
            result["verdict"] = FAILED_VERDICT.get(check, STOPPED_VERDICT)
            first = next((f for f in findings if f.severity == "error"), None)
            reason = first.message.split(". ")[0] if first else outcome.reason
            when = "the first step" if steps == 0 else f"step {steps + 1}"
            result["summary"] = f"{check}: stopped at {when}: {reason}"
        if crashed:
            result["status"] = "error"
            result["verdict"] = None
            result["error"] = _error_of(outcome)
            result["summary"] = f"{check}: the script {_ended(outcome)} after {steps} step(s)"
            reason = None
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
        if CHECKS[check].accepts_setup:
            advice = SETUP_ADVICE
        else:
            loader = ", over batches of a torch.utils.data.DataLoader" if check == "fit" else ""
            advice = OWN_LOOP_ADVICE.format(check=check, loader=loader)
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
                f"torchlint could not find the training step: {'; '.join(missing)}.",
                capture.backward_site or (capture.roots[0].forward_site if capture.roots else None),
                {"missing": missing},
                advice=advice,
            )
        )
    if result["status"] == "error" and outcome.site is not None:
        code = (
            "TLR004"
            if outcome.kind == "exit"
            else "TLR005"
            if outcome.torchlint_fault
            else "TLR001"
        )
        findings.append(Finding(code, f"the script {_ended(outcome)}", outcome.site, {}))
    for kept, dropped, anywhere in DUPLICATES:
        sites = {f.site for f in findings if f.code == kept}
        if sites:
            findings = [
                f for f in findings if f.code != dropped or not (anywhere or f.site in sites)
            ]
    findings.sort(key=lambda f: _SEVERITY_ORDER.get(f.severity, 3))
    errors = [f for f in findings if f.severity == "error"]
    completed = result["status"] == "completed"
    judged = outcome_of(check, result["verdict"], bool(errors)) if completed else None
    causes = [f for f in errors if f.code not in GENERIC_FAILURES] or errors
    if judged == "fail" and causes:
        first = causes[0]
        cause = f"{first.code} {first.name}: {first.message.split('. ')[0]}"
        if CHECKS[check].verdicts.get(str(result["verdict"])) != "fail":
            # a headline never says pass (or inconclusive) beside an error-level finding
            result["summary"] = f"{check} fail: {cause} (the check alone said: {result['summary']})"
            result["verdict"] = ERROR_VERDICT.get(check, result["verdict"])
        reason = cause  # the finding that explains the failure, not the failure itself
    result["summary"] = plain_text(result["summary"])
    result.update(
        outcome=judged,
        reason=reason,
        script=script,
        argv=list(argv),
        duration_s=round(duration_s, 3),
        isolation=isolation,
        captured=captured_json(capture),
        diagnostics=[f.to_json() for f in findings],
        timing=capture.timing(),
    )
    if capture.frameworks is not None and capture.frameworks.used:
        result["frameworks"] = list(capture.frameworks.used)
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
