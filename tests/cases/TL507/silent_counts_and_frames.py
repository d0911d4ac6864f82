# A log that compresses totals or whole numbers, and the inverse of such a log rounded to a
# whole number: the digits that `1 + x` or `exp(x) - 1` lose are below what is used.
import numpy as np
import torch


def dense_features(raw_counts: np.ndarray, batch: torch.Tensor) -> torch.Tensor:
    from_numpy = torch.log(torch.tensor(raw_counts, dtype=torch.float) + 1)
    cast = torch.log(batch.clone().detach().type(torch.float) + 1)
    upcast = torch.log(1 + batch.float())
    return from_numpy + cast + upcast


def duration_targets(attn: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    return torch.log(1 + torch.sum(attn, -1)) * mask + torch.log(attn.sum(1) + 1)


def frames(log_durations: torch.Tensor, mask: torch.Tensor, scale: float) -> torch.Tensor:
    durations = (torch.exp(log_durations) - 1) * mask * scale
    durations[durations < 1] = 1.0
    durations = torch.round(durations)
    ceiled = torch.ceil(torch.exp(log_durations) - 1)
    widths = torch.exp(log_durations) - 1
    lengths = torch.clamp_min(torch.ceil(widths), 1).long()
    return durations + ceiled + lengths
