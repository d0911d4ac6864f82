"""What fit's data checks read from a batch and a loader: one hash per sample, the class labels,
and the dataset indices a loader draws from."""

from __future__ import annotations

import ctypes
import hashlib
from typing import Any

import torch
from torch.utils.data import Subset, SubsetRandomSampler

from torchlint.runtime.child.batches import first_tensor

#: Subset/sampler index lists longer than this are not compared
MAX_INDICES = 5_000_000

_TARGET_KEYS = ("label", "labels", "target", "targets", "y")


def _target_of(batch: Any) -> torch.Tensor | None:
    if isinstance(batch, (list, tuple)) and len(batch) >= 2 and isinstance(batch[1], torch.Tensor):
        return batch[1]
    if isinstance(batch, dict):
        for key in _TARGET_KEYS:
            value = batch.get(key)
            if isinstance(value, torch.Tensor):
                return value
    return None


def _input_of(batch: Any) -> torch.Tensor | None:
    if isinstance(batch, dict):
        rest = {k: v for k, v in batch.items() if k not in _TARGET_KEYS}
        return first_tensor(rest)
    return first_tensor(batch)


def _rows(tensor: torch.Tensor) -> tuple[bytes, int, str]:
    """The tensor's bytes (on the CPU, contiguous), the bytes per row, and its row type."""
    flat = tensor.detach().to("cpu").contiguous()
    flat = flat.reshape(flat.shape[0], -1)
    width = flat.shape[1] * flat.element_size()
    data = ctypes.string_at(flat.data_ptr(), flat.shape[0] * width) if width else b""
    return data, width, f"{flat.dtype}{list(tensor.shape[1:])}"


def sample_hashes(batch: Any, budget: int) -> tuple[list[bytes], int] | None:
    """One hash per sample of the batch (the bytes of its row of the first tensor, and of the
    target's row when the batch has one of the same length) and the bytes hashed; None when
    the batch holds no tensor with rows or is bigger than `budget` bytes."""
    inp = _input_of(batch)
    if inp is None or inp.dim() == 0 or inp.numel() == 0 or inp.layout != torch.strided:
        return None
    parts = [inp]
    target = _target_of(batch)
    if (
        target is not None
        and target is not inp
        and target.dim() > 0
        and target.shape[0] == inp.shape[0]
        and target.layout == torch.strided
    ):
        parts.append(target)
    size = sum(t.numel() * t.element_size() for t in parts)
    if size > budget:
        return None
    blobs = [_rows(t) for t in parts]
    hashes: list[bytes] = []
    for i in range(int(inp.shape[0])):
        digest = hashlib.blake2b(digest_size=16)
        for data, width, kind in blobs:
            digest.update(kind.encode())
            digest.update(data[i * width : (i + 1) * width])
        hashes.append(digest.digest())
    return hashes, size


def class_labels(batch: Any) -> torch.Tensor | None:
    """The batch's class labels: an integer 1-D target, else None."""
    target = _target_of(batch)
    if target is None or target.dim() != 1 or target.is_floating_point() or target.is_complex():
        return None
    if target.dtype == torch.bool:
        return None
    return target


def index_view(loader: Any) -> tuple[Any, list[int] | None] | None:
    """(the dataset at the bottom of any `Subset`s, the indices into it that the loader draws
    from, or None for all of them); None when the indices cannot be read or are too many."""
    dataset = getattr(loader, "dataset", None)
    if dataset is None:
        return None
    indices: list[int] | None = None
    try:
        sampler = getattr(loader, "sampler", None)
        if isinstance(sampler, SubsetRandomSampler):
            indices = _int_list(sampler.indices)
        while isinstance(dataset, Subset):
            inner = _int_list(dataset.indices)
            indices = inner if indices is None else [inner[i] for i in indices]
            dataset = dataset.dataset
    except (TypeError, IndexError, ValueError, OverflowError):
        return None
    if indices is not None and len(indices) > MAX_INDICES:
        return None
    return dataset, indices


def _int_list(indices: Any) -> list[int]:
    if isinstance(indices, torch.Tensor):
        values: list[int] = indices.reshape(-1).tolist()
        return values
    if len(indices) > MAX_INDICES:
        raise ValueError("too many indices")
    return [int(i) for i in indices]
