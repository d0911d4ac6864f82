"""Host synchronisations per line of user code: the calls that make the CPU wait for a device.

A sync is a host read of a tensor that lives on an accelerator (`.item()`, `.tolist()`,
`.cpu()`, `float(t)`, ...): the CPU stops until the device has finished all the work queued
before it. The same call on a CPU tensor costs nothing of the sort and is not counted. While
`SyncCounter` is installed, the Tensor methods of `SYNC_METHODS` count, per calling line of the
user's code, the calls whose tensor `is_device_sync` says synchronises.

Extending it (more methods, `torch.cuda.synchronize`, implicit syncs such as `if loss > 0:`)
means adding to `SYNC_METHODS` or `FUNCTIONS`; the counting and the per-line table stay.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

from torchlint.runtime.sites import Site, SiteFinder

#: Tensor methods that read a tensor on the host (a synchronisation when it is on a device)
SYNC_METHODS = ("item", "tolist", "cpu", "numpy", "__float__", "__int__", "__bool__")
#: functions (owner, name) that synchronise whatever their arguments: none counted yet
FUNCTIONS: tuple[tuple[Any, str], ...] = ()
#: device types whose host reads do not wait for queued work
HOST_DEVICES = ("cpu", "meta")


def is_device_sync(tensor: Any) -> bool:
    """Whether a host read of `tensor` waits for a device (it lives on CUDA, MPS, XPU, ...)."""
    device = getattr(tensor, "device", None)
    return device is not None and device.type not in HOST_DEVICES


@dataclass
class SyncSite:
    site: Site
    kinds: dict[str, int] = field(default_factory=dict)

    @property
    def count(self) -> int:
        return sum(self.kinds.values())


class SyncCounter:
    """Counts device synchronisations per line of user code while installed."""

    def __init__(self, finder: SiteFinder) -> None:
        self.finder = finder
        self.sites: dict[tuple[str, int], SyncSite] = {}
        self._patches: list[tuple[Any, str, Any]] = []

    def install(self) -> None:
        if self._patches:
            return
        for name in SYNC_METHODS:
            original = getattr(torch.Tensor, name, None)
            if original is not None:
                self._patches.append((torch.Tensor, name, original))
                setattr(torch.Tensor, name, self._counting(name, original))

    def uninstall(self) -> None:
        for owner, name, original in reversed(self._patches):
            setattr(owner, name, original)
        self._patches = []

    def _counting(self, name: str, original: Callable[..., Any]) -> Callable[..., Any]:
        counter = self

        def method(tensor: torch.Tensor, *args: Any, **kwargs: Any) -> Any:
            if is_device_sync(tensor):
                counter.note(name, sys._getframe(1))
            return original(tensor, *args, **kwargs)

        return method

    def note(self, kind: str, caller: Any) -> None:
        filename = caller.f_code.co_filename
        if not self.finder.is_user_file(filename):
            return
        key = (filename, caller.f_lineno)
        entry = self.sites.get(key)
        if entry is None:
            entry = self.sites[key] = SyncSite(
                Site(filename, caller.f_lineno, caller.f_code.co_name)
            )
        entry.kinds[kind] = entry.kinds.get(kind, 0) + 1
