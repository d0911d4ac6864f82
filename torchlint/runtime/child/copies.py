"""Host-to-device copies per line of user code: pinned memory and `non_blocking`.

A copy from the host overlaps with the device's work only when both halves are there: the
source is in pinned (page-locked) memory (`DataLoader(pin_memory=True)`, `tensor.pin_memory()`)
and the copy is asked for with `non_blocking=True`. With one half missing the host waits:

* `non_blocking=True` from pageable memory: the driver stages the copy through a pinned buffer
  of its own and the call returns only when the data is staged (TLR607);
* a pinned tensor copied without `non_blocking=True`: the host waits for the copy to finish,
  so the pinning bought nothing (TLR608; the static rule TL304 says the same from the source).

While `CopyWatch` is installed, `Tensor.to` and `Tensor.cuda` calls from the user's code that
move a CPU tensor to another device are recorded per line (count, bytes, how many were
non-blocking, how many came from pinned memory). `copy_advice` judges a line; only copies to an
accelerator (`ACCELERATORS`) get a finding. Any other destination (the `meta` device) is still
recorded, which is how the CPU tests check the recording and its lines.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from torchlint.runtime.child.callers import user_caller
from torchlint.runtime.sites import Site, SiteFinder

#: destinations whose copies from the host can overlap with compute
ACCELERATORS = ("cuda", "xpu")
#: copies from the host per step worth a finding
COPIES_PER_STEP = 1.0


@dataclass
class CopySite:
    site: Site
    device: str
    copies: int = 0
    non_blocking: int = 0
    pinned: int = 0
    bytes: int = 0

    def to_json(self, steps: int) -> dict[str, Any]:
        return {
            **self.site.to_json(),
            "device": self.device,
            "per_step": round(self.copies / max(1, steps), 3),
            "non_blocking": self.non_blocking,
            "pinned": self.pinned,
            "copies": self.copies,
            "mb_per_step": round(self.bytes / max(1, steps) / 2**20, 3),
        }


def copy_advice(entry: CopySite, steps: int) -> tuple[str, str, str] | None:
    """(code, what was found, what to do) for one line's copies, or None when they overlap
    (pinned and non-blocking), are rare, or go to no accelerator."""
    if entry.device not in ACCELERATORS or entry.copies / max(1, steps) < COPIES_PER_STEP:
        return None
    pageable = entry.copies - entry.pinned
    blocking = entry.copies - entry.non_blocking
    if entry.non_blocking and pageable:
        return (
            "TLR607",
            f"non_blocking=True here copies from pageable memory ({pageable} of {entry.copies} "
            "copies): the copy is staged through a driver buffer and the host waits for it, so "
            "it does not overlap with compute.",
            "Pass pin_memory=True to the DataLoader (or call .pin_memory() on the tensor) so "
            "the non-blocking copy can overlap.",
        )
    if entry.pinned and blocking:
        return (
            "TLR608",
            f"pinned tensors are copied here without non_blocking=True ({blocking} of "
            f"{entry.copies} copies): the host waits for each copy, so pinning buys nothing.",
            "Add non_blocking=True to the .to() / .cuda() call.",
        )
    return None


class CopyWatch:
    """Records the copies from the host to a device made by the user's code while installed."""

    def __init__(self, finder: SiteFinder) -> None:
        self.finder = finder
        self.sites: dict[tuple[str, int], CopySite] = {}
        self._patches: list[tuple[Any, str, Any]] = []

    def install(self) -> None:
        if self._patches:
            return
        for name in ("to", "cuda"):
            original = getattr(torch.Tensor, name)
            self._patches.append((torch.Tensor, name, original))
            setattr(torch.Tensor, name, self._recording(original))

    def uninstall(self) -> None:
        for owner, name, original in reversed(self._patches):
            setattr(owner, name, original)
        self._patches = []

    def _recording(self, original: Callable[..., Any]) -> Callable[..., Any]:
        watch = self

        def copy(tensor: torch.Tensor, *args: Any, **kwargs: Any) -> Any:
            moved = original(tensor, *args, **kwargs)
            if (
                isinstance(moved, torch.Tensor)
                and moved is not tensor
                and tensor.device.type == "cpu"
                and moved.device.type != "cpu"
            ):
                watch._note(tensor, moved, _non_blocking(args, kwargs), sys._getframe(1))
            return moved

        return copy

    def _note(
        self, tensor: torch.Tensor, moved: torch.Tensor, non_blocking: bool, caller: Any
    ) -> None:
        site = user_caller(self.finder, caller)
        if site is None:
            return
        key = (site.filename, site.line)
        entry = self.sites.get(key)
        if entry is None:
            entry = self.sites[key] = CopySite(site, moved.device.type)
        entry.copies += 1
        entry.non_blocking += int(non_blocking)
        entry.pinned += int(_is_pinned(tensor))
        entry.bytes += tensor.numel() * tensor.element_size()


def _non_blocking(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """`non_blocking` of a `.to(...)` / `.cuda(...)` call: the keyword, or the first positional
    bool (`.to(device, dtype, non_blocking)`, `.to(other, non_blocking)`, `.cuda(device, nb)`)."""
    if "non_blocking" in kwargs:
        return bool(kwargs["non_blocking"])
    flags = [a for a in args if isinstance(a, bool)]
    return bool(flags[0]) if flags else False


def _is_pinned(tensor: torch.Tensor) -> bool:
    try:
        return bool(tensor.is_pinned())
    except RuntimeError:  # no accelerator to pin for
        return False
