"""Builds the model and the data, on the host."""

import torch


def build(width: int = 8) -> torch.nn.Module:
    return torch.nn.Sequential(torch.nn.Linear(width, width), torch.nn.ReLU(), torch.nn.Linear(width, 1))


def batches(count: int, width: int = 8) -> list[tuple[torch.Tensor, torch.Tensor]]:
    return [(torch.randn(16, width), torch.randn(16, 1)) for _ in range(count)]
