"""Host synchronisations of a CUDA step, per line: `.item()` and `torch.cuda.synchronize()`
timed, a boolean mask reported by set_sync_debug_mode; the static TL301/TL302 confirmed."""

from __future__ import annotations

from gpu_helpers import FIGURES, line_of, run


def test_each_sync_is_counted_at_its_line_and_confirms_the_static_finding() -> None:
    result = run("profile", "syncs_cuda", steps=10, warmup=3)
    syncs = {s["line"]: s for s in result["payload"]["host_syncs"]}
    item = syncs[line_of("syncs_cuda", "item")]
    assert item["kinds"] == {"item": 10} and item["per_step"] == 1.0
    assert item["ms_per_step"] is not None and item["ms_per_step"] > 0
    synchronize = syncs[line_of("syncs_cuda", "synchronize")]
    assert synchronize["kinds"] == {"synchronize": 10}
    mask = syncs[line_of("syncs_cuda", "mask")]
    assert mask["kinds"].get("sync_debug", 0) >= 10 and mask["ms_per_step"] is None
    findings = {(d["code"], d["line"]): d for d in result["diagnostics"]}
    assert findings[("TLR603", item["line"])]["evidence"]["confirms"] == ["TL301"]
    assert findings[("TLR603", synchronize["line"])]["evidence"]["confirms"] == ["TL302"]
    assert "confirms" not in findings[("TLR603", mask["line"])]["evidence"]
    FIGURES["syncs"] = {str(line): s for line, s in syncs.items()}
