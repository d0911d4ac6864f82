"""The profile's two windows compared only when their spreads allow, and data-loading advice that
agrees with the static rules (TL303 leaves an in-memory TensorDataset alone)."""

from __future__ import annotations

import torch
from torch.utils.data import DataLoader, Dataset, Subset, TensorDataset

from torchlint.runtime.child.profile_hints import in_memory
from torchlint.runtime.child.profile_stats import compare_windows
from torchlint.runtime.report.profile import timing_cost


def test_overlapping_windows_are_inconclusive() -> None:
    noisy = [10.0, 14.0, 9.0, 13.0, 11.0, 12.0, 10.5]
    other = [11.0, 12.5, 10.0, 13.5, 9.5, 12.0, 11.5]
    comparison = compare_windows(noisy, other)
    assert comparison.overhead is None and comparison.verdict == "inconclusive"


def test_separate_windows_are_measured() -> None:
    timed = [12.0, 12.2, 11.9, 12.1, 12.0, 12.3]
    plain = [10.0, 10.1, 9.9, 10.0, 10.2, 10.1]
    comparison = compare_windows(timed, plain)
    assert comparison.verdict == "measured"
    assert comparison.overhead is not None and 1.15 < comparison.overhead < 1.25


def test_too_few_steps() -> None:
    assert compare_windows([1.0, 2.0], [1.0, 2.0, 3.0, 4.0, 5.0]).verdict == "too few steps"


def test_the_report_says_what_the_comparison_allows() -> None:
    spreads = {"spread": [10.0, 13.0], "uninstrumented_spread": [9.8, 12.9]}
    inconclusive = {
        "step_ms": spreads,
        "instrumentation_overhead": None,
        "instrumentation_comparison": "inconclusive",
    }
    assert "inconclusive" in timing_cost(inconclusive)
    assert "10 ms-13 ms and 9.8 ms-12.9 ms" in timing_cost(inconclusive)  # the spreads
    measured = {
        **inconclusive,
        "instrumentation_overhead": 1.2,
        "instrumentation_comparison": "measured",
    }
    assert timing_cost(measured).startswith("timing costs 20%")
    faster = {**measured, "instrumentation_overhead": 0.25}
    assert "differ in more than the timing" in timing_cost(faster)  # never "4x faster"


class _OnDisk(Dataset[tuple[torch.Tensor, torch.Tensor]]):
    def __len__(self) -> int:
        return 4

    def __getitem__(self, index: int) -> tuple[torch.Tensor, torch.Tensor]:
        return torch.zeros(2), torch.zeros(1)


def test_in_memory_datasets() -> None:
    tensors = TensorDataset(torch.zeros(8, 2), torch.zeros(8, 1))
    assert in_memory(DataLoader(tensors, batch_size=2))
    assert in_memory(DataLoader(Subset(tensors, [0, 1, 2]), batch_size=2))
    assert not in_memory(DataLoader(_OnDisk(), batch_size=2))  # the near miss
