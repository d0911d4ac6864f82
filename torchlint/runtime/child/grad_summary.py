"""A gradient scan's summary: each parameter's status, the findings, ranking, depth verdict."""

from __future__ import annotations

import math

import torch
from torch import nn

from torchlint.runtime.results import (
    DepthVerdict,
    Environment,
    GradFinding,
    GradScanResult,
    ParamGrad,
)

#: grad_scan depth verdict thresholds on (mean ratio of the first third) / (of the last third).
VANISHING_BELOW = 1e-3
EXPLODING_ABOVE = 1e3
#: with layer depths known (the runtime check), the depth verdict needs this many distinct
#: depths: three layers per branch (PPO's actor and critic) are no deep stack
MIN_DEPTH_LEVELS = 6
#: how many parameter names `largest` / `smallest` list.
TOP_K = 3


def by_depth(pairs: list[tuple[int | None, float]]) -> list[float]:
    """Per layer depth, deepest first, the mean of the values at that depth."""
    levels: dict[int, list[float]] = {}
    for depth, value in pairs:
        if depth is not None:
            levels.setdefault(depth, []).append(value)
    return [sum(levels[d]) / len(levels[d]) for d in sorted(levels, reverse=True)]


def summarise_grads(
    environment: Environment,
    steps: int,
    names: list[str],
    params: list[nn.Parameter],
    optimizer_ids: set[int],
    foreign: int,
    losses: list[torch.Tensor],
    grad_rows: list[torch.Tensor],
    weight_rows: list[torch.Tensor],
    present_rows: list[torch.Tensor],
    loss_differentiable: bool,
    depths: list[int | None] | None = None,
) -> GradScanResult:
    """The scan's summary. `depths`, when given, is each parameter's layer depth from the loss
    (`layer_depths`): the depth verdict then compares the deepest third of the depths with the
    shallowest third, averaging parallel branches at one depth instead of comparing them;
    without it, the first third of the parameters in registration order with the last."""
    count = len(params)
    # the one host transfer of the scan: (K, P) grad norms, weight norms, and K losses
    grads = torch.stack(grad_rows).cpu() if grad_rows else torch.zeros(0, count)
    weights = torch.stack(weight_rows).cpu() if weight_rows else torch.zeros(0, count)
    loss_values: list[float] = torch.stack(losses).cpu().tolist() if losses else []
    present = torch.stack(present_rows) if present_rows else torch.zeros(0, count, dtype=torch.bool)
    grad_list: list[list[float]] = grads.tolist()
    present_list: list[list[bool]] = present.tolist()
    weight0: list[float] = weights[0].tolist() if len(weight_rows) else [math.nan] * count
    with torch.no_grad():
        ratios = torch.where(weights > 0, grads / weights, torch.full_like(grads, math.nan))
        mean_ratio = (
            torch.nanmean(ratios, dim=0) if len(grad_rows) else torch.full((count,), math.nan)
        )
        mean_grad = (
            torch.nanmean(grads, dim=0) if len(grad_rows) else torch.full((count,), math.nan)
        )
    ratio_list: list[float] = mean_ratio.tolist()
    mean_grad_list: list[float] = mean_grad.tolist()
    # a parameter whose optimizer did not step within the scan (a GAN's generator while its
    # discriminator takes its first steps) was never looked at: no finding either way
    scanned: list[bool] = (
        (~torch.isnan(weights)).any(dim=0).tolist() if len(weight_rows) else [False] * count
    )

    findings: list[GradFinding] = []
    rows: list[ParamGrad] = []
    never: list[str] = []
    zero: list[str] = []
    frozen: list[str] = []
    missing: list[str] = []
    first_nonfinite: tuple[int, str] | None = None
    nonfinite: list[str] = []
    for j, (name, param) in enumerate(zip(names, params, strict=True)):
        per_step: list[float | None] = [
            grad_list[k][j] if present_list[k][j] else None for k in range(len(grad_list))
        ]
        had = [v for v in per_step if v is not None]
        in_opt = id(param) in optimizer_ids
        status = "ok"
        if not param.requires_grad:
            status = "frozen"
            frozen.append(name)
        elif not had and not scanned[j] and id(param) in optimizer_ids:
            status = "not_scanned"
        elif not had:
            status = "none"
            never.append(name)
        elif any(not math.isfinite(v) for v in had):
            status = "nonfinite"
            nonfinite.append(name)
            k = next(k for k, v in enumerate(per_step) if v is not None and not math.isfinite(v))
            if first_nonfinite is None or k < first_nonfinite[0]:
                first_nonfinite = (k, name)
        elif all(v == 0 for v in had):
            status = "zero"
            zero.append(name)
        if param.requires_grad and not in_opt:
            missing.append(name)
            if status == "ok":
                status = "not_in_optimizer"
        rows.append(
            ParamGrad(
                name=name,
                shape=list(param.shape),
                numel=param.numel(),
                requires_grad=param.requires_grad,
                in_optimizer=in_opt,
                grad_norm=per_step,
                weight_norm=weight0[j],
                ratio=ratio_list[j] if had else None,
                status=status,
            )
        )

    if not loss_differentiable:
        findings.append(
            GradFinding(
                "loss_not_differentiable",
                "error",
                "the loss does not require grad (computed from detached tensors or under "
                "no_grad), so backward was skipped and no parameter can learn",
            )
        )
    if never:
        findings.append(
            GradFinding(
                "never_gradient",
                "error",
                f"{len(never)} trainable parameter(s) never got a gradient (grad is None after "
                "backward): they are not connected to the loss (detached, unused, or a "
                "no_grad/.data path)",
                never,
            )
        )
    if zero:
        findings.append(
            GradFinding(
                "zero_gradient",
                "warning",
                f"{len(zero)} parameter(s) got an all-zero gradient at every step",
                zero,
            )
        )
    if first_nonfinite is not None:
        step, name = first_nonfinite
        findings.append(
            GradFinding(
                "nonfinite_gradient",
                "error",
                f"non-finite gradient first at step {step} in {name}",
                nonfinite,
                step,
            )
        )
    if frozen:
        findings.append(
            GradFinding(
                "frozen",
                "info",
                f"{len(frozen)} parameter(s) are frozen (requires_grad=False)",
                frozen,
            )
        )
    if missing:
        findings.append(
            GradFinding(
                "not_in_optimizer",
                "error",
                f"{len(missing)} trainable parameter(s) are in no optimizer param group: "
                "they get gradients but never change",
                missing,
            )
        )
    if foreign:
        findings.append(
            GradFinding(
                "optimizer_params_not_in_model",
                "warning",
                f"the optimizer holds {foreign} tensor(s) that are not parameters of this model",
            )
        )

    ranked = [
        (mean_grad_list[j], names[j])
        for j in range(count)
        if rows[j].status in ("ok", "not_in_optimizer", "zero")
    ]
    ranked.sort()
    largest = [name for _, name in reversed(ranked[-TOP_K:])]
    smallest = [name for _, name in ranked[:TOP_K]]

    depth_verdict: DepthVerdict = "insufficient"
    first_ratio: float | None = None
    last_ratio: float | None = None
    usable_at = [
        j
        for j in range(count)
        if rows[j].status in ("ok", "not_in_optimizer", "zero")
        and math.isfinite(ratio_list[j])
        and weight0[j] > 0
    ]
    usable = [ratio_list[j] for j in usable_at]
    if depths is not None:
        usable = by_depth([(depths[j], ratio_list[j]) for j in usable_at])
    if len(usable) >= (3 if depths is None else MIN_DEPTH_LEVELS):
        third = len(usable) // 3
        first_ratio = sum(usable[:third]) / third
        last_ratio = sum(usable[-third:]) / third
        if last_ratio > 0 and first_ratio / last_ratio < VANISHING_BELOW:
            depth_verdict = "vanishing"
        elif last_ratio > 0 and first_ratio / last_ratio > EXPLODING_ABOVE:
            depth_verdict = "exploding"
        else:
            depth_verdict = "ok"
        if depth_verdict != "ok":
            findings.append(
                GradFinding(
                    depth_verdict,
                    "warning",
                    f"{depth_verdict} gradients by depth: mean grad/weight ratio "
                    f"{first_ratio:.3g} in the first third of "
                    + (
                        f"parameters vs {last_ratio:.3g} in the last third"
                        if depths is None
                        else f"the {len(usable)} layer depths (farthest from the loss) vs "
                        f"{last_ratio:.3g} in the third nearest the loss"
                    ),
                )
            )

    global_norm = torch.sqrt(torch.nansum(grads.to(torch.float64) ** 2, dim=1)).tolist()
    nonfinite_steps = {
        k
        for k in range(len(grad_list))
        if any(present_list[k][j] and not math.isfinite(grad_list[k][j]) for j in range(count))
    }
    global_list: list[float | None] = [
        None if k in nonfinite_steps else v for k, v in enumerate(global_norm)
    ]
    problems = any(f.severity in ("error", "warning") for f in findings)
    return GradScanResult(
        verdict="problems" if problems else "healthy",
        environment=environment,
        steps_requested=steps,
        steps_run=len(grad_rows),
        losses=list(loss_values),
        global_grad_norm=global_list,
        params=rows,
        findings=findings,
        largest=largest,
        smallest=smallest,
        depth_verdict=depth_verdict,
        depth_first_ratio=first_ratio,
        depth_last_ratio=last_ratio,
        vanishing_below=VANISHING_BELOW,
        exploding_above=EXPLODING_ABOVE,
    )
