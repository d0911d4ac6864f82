"""Checks under torchrun (`--nproc-per-node N`): every rank runs the check on its own; the parent
combines their envelopes and adds what only a distributed run shows.

- **profile**: the slowest rank sets the pace of every collective, so the stage times of all
  ranks are compared; a rank whose step or data wait stands out is reported (TLR606).
- **grads**: after DDP's all-reduce every rank must hold the same gradients; a parameter whose
  gradient norms differ between ranks is outside the synchronisation (not wrapped by DDP, a
  `find_unused_parameters` problem, a rank-dependent branch) (TLR209).

No torch here: it runs in the parent.
"""

from __future__ import annotations

import copy
from typing import Any

from torchlint.runtime.checks import outcome_of

#: a stage's spread across ranks worth reporting, as a fraction of the median step
STAGE_SKEW = 0.2
#: stages whose time is the rank's own work (backward also holds the wait for the other ranks)
CAUSE_STAGES = ("data_wait", "h2d_and_preprocess", "forward", "loss", "optimizer", "other")
#: gradient norms of one parameter at one step differ across ranks beyond this relative gap
GRADIENT_TOLERANCE = 1e-4


def combine_ranks(results: list[dict[str, Any] | None]) -> dict[str, Any] | None:
    """One envelope for the run: rank 0's (or the first rank that reported), with every rank's
    outcome in `payload.ranks`, the cross-rank findings, and the status of the worst rank."""
    present = [(rank, r) for rank, r in enumerate(results) if isinstance(r, dict)]
    if not present:
        return None
    failed = [(rank, r) for rank, r in present if r.get("status") != "completed"]
    first = present[0][1]
    base = copy.deepcopy(failed[0][1] if failed else first)
    payload = base.get("payload")
    if not isinstance(payload, dict):
        payload = base["payload"] = {}
    payload["ranks"] = [_rank_line(rank, result) for rank, result in enumerate(results)]
    missing = [rank for rank, result in enumerate(results) if result is None]
    if failed or missing:
        rank, result = failed[0] if failed else (missing[0], None)
        what = result.get("summary") if result else "reported nothing"
        base["summary"] = f"rank {rank} of {len(results)}: {what}"
        return base
    completed = [r for _, r in present]
    check = base.get("check")
    findings: list[dict[str, Any]] = []
    if check == "profile":
        findings, payload["distributed"] = _profile_skew(completed)
    elif check == "grads":
        findings, payload["distributed"] = _gradient_divergence(completed)
    base["diagnostics"] = list(base.get("diagnostics", [])) + findings
    if findings and base.get("verdict") in ("healthy", "ok"):
        verdict = "problems" if check == "grads" else "hints"
        detail = str(base.get("summary", "")).split(": ", 1)[-1]
        base["verdict"] = verdict
        base["summary"] = f"{check} {verdict}: {detail}; " + ", ".join(f["name"] for f in findings)
    errors = any(d.get("severity") == "error" for d in base["diagnostics"])
    base["outcome"] = outcome_of(str(check), base.get("verdict"), errors)
    base["summary"] = f"{base.get('summary', check)} ({len(results)} ranks)"
    return base


def _rank_line(rank: int, result: dict[str, Any] | None) -> dict[str, Any]:
    if result is None:
        return {"rank": rank, "status": "missing", "verdict": None, "summary": "no result"}
    return {
        "rank": rank,
        "status": result.get("status"),
        "verdict": result.get("verdict"),
        "summary": result.get("summary"),
    }


def _stage(payload: dict[str, Any], name: str) -> float | None:
    for stage in payload.get("stages", []):
        if isinstance(stage, dict) and stage.get("name") == name:
            value = stage.get("ms_median")
            return float(value) if isinstance(value, (int, float)) else None
    return None


def _train_loader_site(result: dict[str, Any]) -> tuple[str | None, int | None]:
    captured = result.get("captured") or {}
    for loader in captured.get("loaders", []):
        site = loader.get("site") if loader.get("role") == "train" else None
        if isinstance(site, dict):
            return site.get("filename"), site.get("line")
    return None, None


def _profile_skew(
    results: list[dict[str, Any]],
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Under DDP every rank waits for the slowest one inside backward (the all-reduce), so step
    times even out; the cause shows as one stage that takes longer on one rank. The stage (other
    than backward, where the waiting lands) with the widest spread across ranks is reported when
    that spread exceeds `STAGE_SKEW` of the median step."""
    payloads = [r.get("payload") or {} for r in results]
    steps = [p.get("step_ms", {}).get("median") for p in payloads]
    by_stage = {name: [_stage(p, name) for p in payloads] for name in CAUSE_STAGES}
    summary: dict[str, Any] = {
        "ranks": len(results),
        "step_ms_by_rank": steps,
        "stage_ms_by_rank": {**by_stage, "backward": [_stage(p, "backward") for p in payloads]},
        "skew": None,
    }
    known_steps = [s for s in steps if isinstance(s, (int, float)) and s > 0]
    if len(known_steps) < 2:
        return [], summary
    step = sorted(known_steps)[len(known_steps) // 2]
    spreads = []
    for name, values in by_stage.items():
        known = [(rank, v) for rank, v in enumerate(values) if v is not None]
        if len(known) < 2:
            continue
        slow_rank, slow = max(known, key=lambda item: item[1])
        fast_rank, fast = min(known, key=lambda item: item[1])
        spreads.append((slow - fast, name, slow_rank, slow, fast_rank, fast))
    if not spreads:
        return [], summary
    spread, name, slow_rank, slow, fast_rank, fast = max(spreads)
    summary["skew"] = round(spread / step, 3)
    if spread < STAGE_SKEW * step:
        return [], summary
    backward = summary["stage_ms_by_rank"]["backward"]
    waiting = ""
    if backward[fast_rank] is not None and backward[slow_rank] is not None:
        waiting = (
            f"; rank {fast_rank} spends the difference waiting in backward's all-reduce "
            f"({backward[fast_rank]:.3g} ms against {backward[slow_rank]:.3g} ms)"
        )
    filename, line = _train_loader_site(results[slow_rank]) if name == "data_wait" else (None, None)
    message = (
        f"rank {slow_rank} spends {slow:.3g} ms per step in {name} against {fast:.3g} ms on rank "
        f"{fast_rank}{waiting}: every collective waits for the slowest rank, so the whole job "
        "runs at its pace. Balance the work across ranks (equal shards, the same number of "
        "loader workers, the same hardware)."
    )
    return [
        {
            "code": "TLR606",
            "name": "rank-skew",
            "severity": "warning",
            "message": message,
            "advice": "Balance the work across ranks (equal shards, the same number of loader "
            "workers, the same hardware).",
            "filename": filename,
            "line": line,
            "evidence": {"stage": name, "ms_by_rank": by_stage[name], "step_ms_by_rank": steps},
        }
    ], summary


def _gradient_divergence(
    results: list[dict[str, Any]],
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    tables = [
        {
            p["name"]: p.get("grad_norm") or []
            for p in (r.get("payload") or {}).get("params", [])
            if isinstance(p, dict) and "name" in p
        }
        for r in results
    ]
    differing: list[str] = []
    for name, norms in tables[0].items():
        for other in tables[1:]:
            if _differ(norms, other.get(name) or []):
                differing.append(name)
                break
    summary = {"ranks": len(results), "differing_params": differing}
    if not differing:
        return [], summary
    sites = {
        p["name"]: p.get("site")
        for p in (results[0].get("payload") or {}).get("params", [])
        if isinstance(p, dict) and "name" in p
    }
    backward = (results[0].get("captured") or {}).get("backward", {}).get("site") or {}
    where = sites.get(differing[0]) or backward  # the first such parameter's creation line
    shown = ", ".join(differing[:4]) + (
        f" and {len(differing) - 4} more" if len(differing) > 4 else ""
    )
    message = (
        f"{len(differing)} parameter tensor(s) have different gradients on different ranks "
        f"after the backward ({shown}): they are outside DDP's all-reduce (not part of the "
        "wrapped module, or skipped by find_unused_parameters), so the ranks' copies drift "
        "apart. Wrap every trained module in DistributedDataParallel."
    )
    return [
        {
            "code": "TLR209",
            "name": "gradients-differ-across-ranks",
            "severity": "error",
            "message": message,
            "advice": "Wrap every trained module in DistributedDataParallel.",
            "filename": where.get("filename"),
            "line": where.get("line"),
            "evidence": {"params": differing[:50]},
        }
    ], summary


def _differ(left: list[Any], right: list[Any]) -> bool:
    for a, b in zip(left, right, strict=False):
        if not isinstance(a, (int, float)) or not isinstance(b, (int, float)):
            if (a is None) != (b is None):
                return True
            continue
        scale = max(abs(a), abs(b), 1e-12)
        if abs(a - b) / scale > GRADIENT_TOLERANCE:
            return True
    return False
