"""profile's hints: slow data, unpinned memory, host syncs, copies, a slow optimizer, eval grads."""

from __future__ import annotations

from typing import Any

import torch

from torchlint.runtime.child.captured import Finding, loader_settings
from torchlint.runtime.child.copies import copy_advice
from torchlint.runtime.child.profile_timing import ProfileTiming
from torchlint.runtime.child.syncs import REPORTED, SYNC_METHODS

#: hint thresholds (shares of the median training step)
DATA_WAIT_SHARE = 0.30
OPTIMIZER_SHARE = 0.25
MANY_PARAMETER_TENSORS = 50
#: host syncs per step worth a hint
SYNCS_PER_STEP = 1.0


class ProfileHints(ProfileTiming):
    """The hints of the result, from what the measured steps recorded."""

    # hints

    def _hints(
        self,
        stages: list[dict[str, Any]],
        step_median: float | None,
        validation: dict[str, Any] | None,
    ) -> list[Finding]:
        findings: list[Finding] = []
        if not step_median:
            return findings
        share = {s["name"]: s["share"] or 0.0 for s in stages}
        train = self.capture.train_loader
        if train is not None:
            settings = loader_settings(train.loader)
            wait = share["data_wait"]
            if wait >= DATA_WAIT_SHARE:
                workers = settings["num_workers"]
                if in_memory(train.loader):
                    # As TL303 says: worker processes only add copies for tensors in memory.
                    advice = (
                        "The batches are slices of tensors already in memory "
                        "(a TensorDataset), so worker processes would only add copies; index "
                        "the tensors with a batch of indices (or a larger batch_size) instead "
                        "of one sample at a time."
                    )
                elif workers == 0:
                    advice = (
                        "Raise num_workers (e.g. to the number of CPU cores) so batches are "
                        "prepared while the model computes."
                    )
                else:
                    advice = (
                        f"Even with num_workers={workers}: make loading cheaper (decode, "
                        "augment), add workers, or set persistent_workers=True."
                    )
                findings.append(
                    Finding(
                        "TLR601",
                        f"waiting for data takes {wait * 100:.0f}% of the training step "
                        f"({_ms(share, 'data_wait', step_median)} of {step_median:.2f} ms).",
                        train.site,
                        {"data_wait_share": wait, "num_workers": workers},
                        advice=advice,
                    )
                )
            if self.cuda and not settings["pin_memory"]:
                findings.append(
                    Finding(
                        "TLR602",
                        "the training loader does not pin memory while the model is on CUDA, "
                        "so each host-to-device copy blocks.",
                        train.site,
                        {"pin_memory": False},
                        advice="Pass pin_memory=True to the DataLoader and move batches with "
                        ".to(device, non_blocking=True), so the copy overlaps compute.",
                    )
                )
        measured = max(1, len(self.steps))
        for entry in self.syncs.sites.values():
            per_step = entry.count / measured
            if per_step < SYNCS_PER_STEP:
                continue
            ms = entry.ms / measured if entry.timed else None
            cost = f", {ms:.2f} ms" if ms is not None else ""
            findings.append(
                Finding(
                    "TLR603",
                    f"{per_step:g} device synchronisation(s) per step here{cost} "
                    f"({_sync_kinds(entry.kinds)}): each one makes the CPU wait for the device "
                    "to finish all queued work.",
                    entry.site,
                    {"per_step": per_step, "kinds": dict(entry.kinds), "ms_per_step": ms},
                    advice="Accumulate on the device and read the value every N steps.",
                )
            )
        for copied in self.copies.sites.values():
            judged = copy_advice(copied, measured)
            if judged is not None:
                code, message, what_to_do = judged
                findings.append(
                    Finding(
                        code,
                        message,
                        copied.site,
                        copied.to_json(measured),
                        advice=what_to_do,
                    )
                )
        primary = self.capture.primary
        if primary is not None and primary.manual is None and share["optimizer"] >= OPTIMIZER_SHARE:
            optimizer = primary.optimizer
            tensors = sum(len(g["params"]) for g in optimizer.param_groups)
            defaults = getattr(optimizer, "defaults", {})
            if (
                tensors >= MANY_PARAMETER_TENSORS
                and not defaults.get("fused")
                and not defaults.get("foreach")
                and "fused" in defaults
            ):
                findings.append(
                    Finding(
                        "TLR604",
                        f"the optimizer step takes {share['optimizer'] * 100:.0f}% of the "
                        f"training step over {tensors} parameter tensors, updated one kernel per "
                        "tensor.",
                        primary.site,
                        {"optimizer_share": share["optimizer"], "parameter_tensors": tensors},
                        advice=f"Pass fused=True (or foreach=True) to {type(optimizer).__name__} "
                        "to update them in a few kernels.",
                    )
                )
        for site, count in self.val_grad_forward_sites.items():
            slower = ""
            if validation:
                forward = validation.get("forward_ms_median")
                train_forward = validation.get("train_forward_ms_median")
                if forward and train_forward and forward > train_forward:
                    slower = f"; its forward takes {forward / train_forward:.2f}x the training one"
            findings.append(
                Finding(
                    "TLR605",
                    f"validation ran {count} forward(s) with gradients enabled{slower}, "
                    "recording a graph it never uses.",
                    site,
                    {"forwards": count},
                    advice="Wrap the evaluation in torch.no_grad() (or torch.inference_mode()).",
                )
            )
        return findings


def _sync_kinds(kinds: dict[str, int]) -> str:
    named = [f".{k}()" if k in SYNC_METHODS else f"{k}()" for k in kinds if k != REPORTED]
    text = ", ".join(named) + (" of a tensor on the device" if named else "")
    if REPORTED in kinds:
        reported = "operations PyTorch reports as synchronising"
        text = f"{text}; {reported}" if text else reported
    return text


def in_memory(loader: Any) -> bool:
    """Whether a loader's dataset is a TensorDataset (or a Subset of one): tensors in memory."""
    dataset = getattr(loader, "dataset", None)
    while isinstance(dataset, torch.utils.data.Subset):
        dataset = dataset.dataset
    return isinstance(dataset, torch.utils.data.TensorDataset)


def _ms(share: dict[str, float], name: str, step_ms: float) -> str:
    return f"{share[name] * step_ms:.2f} ms"
