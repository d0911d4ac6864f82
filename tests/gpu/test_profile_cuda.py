"""The stage profiler on CUDA: CUDA events with one synchronisation per step, stages that cover
the step, a profiler that costs little against the same loop without per-stage timing."""

from __future__ import annotations

import pytest
import torch
from gpu_helpers import FIGURES, run

#: issue 19's targets
COVERAGE = 0.95
OVERHEAD = 1.05


@pytest.mark.parametrize("script", ["conv_net", "transformer"])
def test_cuda_events_cover_the_step_and_cost_little(script: str) -> None:
    result = run("profile", script, steps=30, warmup=10)
    assert result["status"] == "completed", result["summary"]
    payload = result["payload"]
    assert payload["synchronization"] == "cuda_events"
    record = payload["record"]
    assert record["device"].startswith("cuda") and record["device_name"]
    assert record["device_name"] == torch.cuda.get_device_name(0)
    assert payload["measured_steps"] == 30 and payload["uninstrumented_steps"] == 30
    FIGURES[f"profile/{script}"] = {
        "device": record["device_name"],
        "step_ms": payload["step_ms"],
        "coverage": payload["coverage"],
        "instrumentation_overhead": payload["instrumentation_overhead"],
        "stages": {s["name"]: s["share"] for s in payload["stages"]},
        "torch": torch.__version__,
    }
    assert COVERAGE <= payload["coverage"] <= 2 - COVERAGE
    assert payload["instrumentation_overhead"] <= OVERHEAD
    forward = {s["name"]: s for s in payload["stages"]}["forward"]
    assert forward["ms_median"] > 0


def test_per_stage_synchronisation_is_the_other_clock() -> None:
    result = run("profile", "conv_net", steps=15, warmup=5, sync="per-stage")
    payload = result["payload"]
    assert payload["synchronization"] == "sync_per_stage"
    assert COVERAGE <= payload["coverage"] <= 2 - COVERAGE
    FIGURES["profile/conv_net/per_stage"] = {
        "step_ms": payload["step_ms"],
        "coverage": payload["coverage"],
    }
