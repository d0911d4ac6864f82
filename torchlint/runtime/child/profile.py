"""`torchlint run profile`: where does the training step's time go?

The user's loop runs unmodified. After `warmup` steps of the primary optimizer, `measured` steps
are timed stage by stage from the capture's events: every interval between two consecutive
events belongs to the stage the first one opens (a fetch from the training loader opens
`data_wait`, its end `h2d_and_preprocess`, a root forward `forward`, its end `loss`, backward
`backward`, its end and an optimizer step's end `other`, a step `optimizer`; the same on another
loader's batches opens `validation_data`, `validation_other` and `validation_forward`). So the
stages of a step add up to the step exactly, and validation time is reported apart from it.
Then as many steps again run with no per-stage timing (only the step ends), so the report shows
what the profiler itself costs; then, with `--trace`, a few steps under `torch.profiler`.

Clocks: on the CPU a monotonic clock; on CUDA a `torch.cuda.Event` at every boundary and one
`torch.cuda.synchronize()` per step (or, with `--sync per-stage`, a synchronisation at every
boundary and the CPU clock). The payload says which.

The timing (the events, the clocks, each step's stages) is profile_timing.py, the hints
profile_hints.py, the statistics profile_stats.py; the plugin here gives the result.
"""

from __future__ import annotations

from typing import Any

import torch

from torchlint.runtime.child.captured import loader_settings
from torchlint.runtime.child.plugin import PluginResult
from torchlint.runtime.child.profile_hints import ProfileHints
from torchlint.runtime.child.profile_stats import (
    _median,
    _p90,
    _quartiles,
    _round,
    _round_pair,
    compare_windows,
)
from torchlint.runtime.child.profile_timing import TRAIN_STAGES, VALIDATION_STAGES, _Step


class ProfilePlugin(ProfileHints):
    check = "profile"

    # ------------------------------------------------------------------------------------------
    # result

    def result(self, outcome: Any) -> PluginResult:
        self._unpatch_syncs()
        if self._profiler is not None:  # the run ended inside the trace window
            try:
                self._profiler.stop()
                self._profiler.export_chrome_trace(str(self.trace_path))
                self.trace_written = self.trace_path
            except (RuntimeError, OSError) as exc:
                self.trace_error = f"{type(exc).__name__}: {exc}"
        steps = self.steps
        train_ms = [s.train_ms for s in steps]
        stages: list[dict[str, Any]] = []
        medians = {
            name: _median([s.stages.get(name, 0.0) for s in steps]) or 0.0 for name in TRAIN_STAGES
        }
        total = sum(medians.values())
        for name in TRAIN_STAGES:
            values = [s.stages.get(name, 0.0) for s in steps]
            stages.append(
                {
                    "name": name,
                    "ms_median": _round(medians[name]),
                    "ms_p90": _round(_p90(values)),
                    # of the sum of the stage medians: robust to one slow step, sums to 1
                    "share": _round(medians[name] / total if total > 0 else None, 4),
                }
            )
        plain = [(b - a) * 1e3 for a, b in zip(self.plain_ends, self.plain_ends[1:], strict=False)]
        step_median = _median(train_ms)
        plain_median = _median(plain)
        stage_sum = sum(s["ms_median"] or 0.0 for s in stages)
        validation = self._validation_summary(steps)
        findings = self._hints(stages, step_median, validation)
        comparison = compare_windows(train_ms, plain)
        payload: dict[str, Any] = {
            "step_ms": {
                "median": _round(step_median),
                "p90": _round(_p90(train_ms)),
                "uninstrumented_median": _round(plain_median),
                "spread": _round_pair(_quartiles(train_ms)),
                "uninstrumented_spread": _round_pair(_quartiles(plain)),
            },
            "stages": stages,
            "synchronization": self.synchronization,
            "warmup_steps": self.warmup,
            "measured_steps": len(steps),
            "uninstrumented_steps": len(plain),
            "coverage": _round(stage_sum / step_median if step_median else None, 4),
            # The two windows' medians compared only when their spreads say the difference is
            # real (`compare_windows`); None, with the comparison "inconclusive", otherwise.
            "instrumentation_overhead": _round(comparison.overhead, 4),
            "instrumentation_comparison": comparison.verdict,
            "validation": validation,
            "host_syncs": [
                {
                    **entry.site.to_json(),
                    "per_step": _round(entry.count / max(1, len(steps)), 3),
                    "kinds": dict(entry.kinds),
                    # the host's wait in the timed calls (None: only PyTorch's reports)
                    "ms_per_step": _round(entry.ms / max(1, len(steps)), 3)
                    if entry.timed
                    else None,
                }
                for entry in sorted(self.syncs.sites.values(), key=lambda e: -e.count)
            ],
            "copies": [
                entry.to_json(len(steps))
                for entry in sorted(self.copies.sites.values(), key=lambda e: -e.copies)
            ],
            "record": self._record(),
            "hints": [
                {
                    "message": f.message,
                    "filename": f.site.filename if f.site else None,
                    "line": f.site.line if f.site else None,
                }
                for f in findings
            ],
            "trace": self.trace_written,
            "trace_error": self.trace_error,
        }
        if not steps:
            primary = self.capture.primary
            ran = primary.steps if primary is not None else 0
            reason = (
                f"no step was measured: the script stopped after {ran} step(s), within the "
                f"{self.warmup} warm-up step(s); a longer run, or a smaller --warmup (1 at least), "
                "would decide"
            )
            return PluginResult(
                "inconclusive", f"profile inconclusive: {reason}", payload, findings, reason
            )
        top = max(stages, key=lambda s: s["ms_median"] or 0.0)
        summary = (
            f"profile: step {step_median:.2f} ms median over {len(steps)} steps "
            f"({self.synchronization}); largest stage {top['name']} "
            f"{(top['share'] or 0) * 100:.0f}%"
        )
        if plain_median:
            summary += f"; {plain_median:.2f} ms without per-stage timing"
        if findings:
            summary += f"; {len(findings)} hint(s)"
        return PluginResult("hints" if findings else "ok", summary, payload, findings)

    def _validation_summary(self, steps: list[_Step]) -> dict[str, Any] | None:
        batches = sum(s.validation_batches for s in steps)
        if not batches:
            return None
        totals = {name: sum(s.stages.get(name, 0.0) for s in steps) for name in VALIDATION_STAGES}
        forwards = [ms for s in steps for ms in s.validation_forward_ms]
        train_forwards = [ms for s in steps for ms in s.train_forward_ms]
        return {
            "batches": batches,
            "ms_per_batch": _round(sum(totals.values()) / batches),
            "stages": [
                {"name": name, "ms_per_batch": _round(total / batches)}
                for name, total in totals.items()
            ],
            "forward_ms_median": _round(_median(forwards)),
            "train_forward_ms_median": _round(_median(train_forwards)),
        }

    def _record(self) -> dict[str, Any]:
        capture = self.capture
        param = None
        for root in capture.roots:
            param = next(root.module.parameters(), None)
            if param is not None:
                break
        device = param.device if param is not None else torch.device("cpu")
        name = str(device)
        if device.type == "cuda" and torch.cuda.is_available():
            name = torch.cuda.get_device_name(device)
        train = capture.train_loader
        return {
            "device": str(device),
            "device_name": name,
            "param_dtype": str(param.dtype).removeprefix("torch.") if param is not None else None,
            "autocast": capture.autocast,
            "grad_scaler": capture.grad_scaler_used,
            "batch_size": train.batch_size_seen if train is not None else None,
            "model_mode": "train"
            if all(root.module.training for root in capture.roots)
            else "eval",
            "loader": loader_settings(train.loader) if train is not None else None,
            "cudnn_benchmark": bool(torch.backends.cudnn.benchmark),
            "torch": str(torch.__version__),
        }
