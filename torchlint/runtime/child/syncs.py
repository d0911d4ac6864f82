"""Host synchronisations per line of user code: the calls that make the CPU wait for a device.

A sync is a host read of a tensor that lives on an accelerator (`.item()`, `.tolist()`,
`.cpu()`, `float(t)`, ...): the CPU stops until the device has finished all the work queued
before it. The same call on a CPU tensor costs nothing of the sort and is not counted. While
`SyncCounter` is installed, three signals are counted per calling line of the user's code:

* the Tensor methods of `SYNC_METHODS`, on a tensor that `is_device_sync` says synchronises,
  each timed (the wall time of the call is what the host waited);
* the functions of `FUNCTIONS` (`torch.cuda.synchronize()`), timed the same way;
* every other synchronisation PyTorch itself reports: on CUDA,
  `torch.cuda.set_sync_debug_mode("warn")` makes each synchronising operation (a boolean mask,
  `torch.nonzero`, a copy to the host...) emit the warning `SYNC_WARNING`; its line is found on
  the stack when the warning is shown, and the warning is kept off the script's output. Those
  are counted but not timed (the operation that waited is not ours to wrap).

The warnings path is installed on every device (the warning is only emitted on CUDA), so the
CPU tests drive it with the same warning text and check the attribution to the user's line.
"""

from __future__ import annotations

import re
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

import torch

from torchlint.runtime.child.callers import TORCHLINT, user_caller
from torchlint.runtime.sites import Site, SiteFinder

#: Tensor methods that read a tensor on the host (a synchronisation when it is on a device)
SYNC_METHODS = ("item", "tolist", "cpu", "numpy", "__float__", "__int__", "__bool__")
#: functions (owner, name) that synchronise whatever their arguments, counted when CUDA is on
FUNCTIONS: tuple[tuple[Any, str], ...] = ((torch.cuda, "synchronize"),)
#: device types whose host reads do not wait for queued work
HOST_DEVICES = ("cpu", "meta")
#: the warning of `torch.cuda.set_sync_debug_mode("warn")` (c10/cuda/CUDAFunctions.cpp)
SYNC_WARNING = "called a synchronizing CUDA operation"
#: the kind recorded for a synchronisation that PyTorch reported
REPORTED = "sync_debug"


def is_device_sync(tensor: Any) -> bool:
    """Whether a host read of `tensor` waits for a device (it lives on CUDA, MPS, XPU, ...)."""
    device = getattr(tensor, "device", None)
    return device is not None and device.type not in HOST_DEVICES


@dataclass
class SyncSite:
    site: Site
    kinds: dict[str, int] = field(default_factory=dict)
    #: wall time the host spent in the timed calls of this line, in ms
    ms: float = 0.0
    timed: int = 0

    @property
    def count(self) -> int:
        return sum(self.kinds.values())


class SyncCounter:
    """Counts device synchronisations per line of user code while installed."""

    def __init__(self, finder: SiteFinder) -> None:
        self.finder = finder
        self.sites: dict[tuple[str, int], SyncSite] = {}
        self._patches: list[tuple[Any, str, Any]] = []
        self._inside = 0  # in a counted call: PyTorch's own warning for it is not counted again
        self._shown: Any = None
        self._debug_mode: int | None = None
        self._filter: Any = None

    def install(self) -> None:
        if self._patches:
            return
        for name in SYNC_METHODS:
            original = getattr(torch.Tensor, name, None)
            if original is not None:
                self._patch(torch.Tensor, name, self._counting(name, original, tensor=True))
        if torch.cuda.is_available() and torch.cuda.is_initialized():  # type: ignore[no-untyped-call]
            for owner, name in FUNCTIONS:
                original = getattr(owner, name, None)
                if original is not None:
                    self._patch(owner, name, self._counting(name, original, tensor=False))
            self._debug_mode = torch.cuda.get_sync_debug_mode()
            torch.cuda.set_sync_debug_mode("warn")
        self._watch_warnings()

    def uninstall(self) -> None:
        if self._debug_mode is not None:
            torch.cuda.set_sync_debug_mode(self._debug_mode)
            self._debug_mode = None
        if self._shown is not None:
            warnings.showwarning = self._shown
            self._shown = None
            filters: list[Any] = warnings.filters  # type: ignore[assignment]
            filters[:] = [f for f in filters if f is not self._filter]
        for owner, name, original in reversed(self._patches):
            setattr(owner, name, original)
        self._patches = []

    def _patch(self, owner: Any, name: str, replacement: Any) -> None:
        self._patches.append((owner, name, getattr(owner, name)))
        setattr(owner, name, replacement)

    def _counting(
        self, name: str, original: Callable[..., Any], tensor: bool
    ) -> Callable[..., Any]:
        counter = self

        def call(*args: Any, **kwargs: Any) -> Any:
            if tensor and not (args and is_device_sync(args[0])):
                return original(*args, **kwargs)
            caller = sys._getframe(1)
            counter._inside += 1
            started = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                counter._inside -= 1
                counter.note(name, caller, (time.perf_counter() - started) * 1e3)

        return call

    # ------------------------------------------------------------------------------------------
    # PyTorch's own reports (torch.cuda.set_sync_debug_mode)

    def _watch_warnings(self) -> None:
        counter = self
        shown = warnings.showwarning
        self._shown = shown

        def showwarning(message: Any, category: Any, *args: Any, **kwargs: Any) -> None:
            if SYNC_WARNING not in str(message):
                shown(message, category, *args, **kwargs)
            elif not counter._inside:
                counter.reported(sys._getframe(1))

        warnings.showwarning = showwarning
        # every occurrence, not once per location; inserted first, removed at uninstall
        warnings.filterwarnings("always", message=".*" + re.escape(SYNC_WARNING))
        self._filter = warnings.filters[0]

    def reported(self, frame: FrameType | None) -> None:
        """A synchronisation PyTorch reported while `frame` ran: counted at the user's line."""
        site = user_caller(self.finder, frame)
        if site is not None:
            self._add(site, REPORTED, None)

    # ------------------------------------------------------------------------------------------
    # counting

    def note(self, kind: str, caller: Any, ms: float | None = None) -> None:
        filename = caller.f_code.co_filename
        if filename.startswith(TORCHLINT) or not self.finder.is_user_file(filename):
            return  # a library's or torchlint's own read
        self._add(Site(filename, caller.f_lineno, caller.f_code.co_name), kind, ms)

    def _add(self, site: Site, kind: str, ms: float | None) -> None:
        key = (site.filename, site.line)
        entry = self.sites.get(key)
        if entry is None:
            entry = self.sites[key] = SyncSite(site)
        entry.kinds[kind] = entry.kinds.get(kind, 0) + 1
        if ms is not None:
            entry.ms += ms
            entry.timed += 1
