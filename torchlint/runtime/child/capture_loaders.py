"""The capture's loader hooks: the loaders, their batches, and the replayed training batch."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import torch

from torchlint.runtime.child.capture_state import CaptureState
from torchlint.runtime.child.captured import LoaderInfo, StopRun
from torchlint.runtime.child.core import first_tensor, map_tensors
from torchlint.runtime.sites import Site

if TYPE_CHECKING:
    from torchlint.runtime.child.capture import Capture


class LoaderHooks(CaptureState):
    """The loader hooks of `Capture`: registration and each fetch."""

    def _register_loader(self, loader: Any, site: Site | None) -> LoaderInfo:
        info = self._loaders_by_id.get(id(loader))
        if info is None:
            info = LoaderInfo(loader, site)
            self._loaders_by_id[id(loader)] = info
            self.loaders.append(info)
        return info

    def next_batch(self, info: LoaderInfo, inner: Iterator[Any]) -> Any:
        plugin = self.plugin
        plugin.on_fetch_start(info)
        batch = self._next_batch(info, inner)
        plugin.on_fetch_end(info, batch)
        return batch

    def _next_batch(self, info: LoaderInfo, inner: Iterator[Any]) -> Any:
        if info is self.train_loader:
            if self.stop_reason is not None:
                raise StopRun(self.stop_reason)
            if self.replay is not None:
                info.batches += 1
                self.last_fetch = info
                return map_tensors(self.replay, torch.Tensor.clone)
        batch = next(inner)
        info.batches += 1
        self.last_fetch = info
        if self.train_loader is None and self.plugin.replays_batch:
            info.cached = map_tensors(batch, lambda t: t.detach().clone())
        if info.batch_size_seen is None:
            tensor = first_tensor(batch)
            if tensor is not None and tensor.dim() > 0:
                info.batch_size_seen = int(tensor.shape[0])
        return batch


class _CapturedIterator:
    """Stands in for a DataLoader iterator: delegates to it, through `Capture.next_batch`."""

    def __init__(
        self, capture: Capture, info: LoaderInfo, inner: Iterator[Any], limit: int | None = None
    ) -> None:
        self._capture = capture
        self._info = info
        self._inner = inner
        self._limit = limit  # batches in this pass (--limit-batches), None: the loader's own
        self._served = 0

    def __iter__(self) -> _CapturedIterator:
        return self

    def __next__(self) -> Any:
        if self._limit is not None and self._served >= self._limit:
            raise StopIteration
        batch = self._capture.next_batch(self._info, self._inner)
        self._served += 1
        return batch

    def __len__(self) -> int:
        size = len(self._inner)  # type: ignore[arg-type]
        return size if self._limit is None else min(size, self._limit)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)
