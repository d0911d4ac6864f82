import torch
from torch.utils.data import DataLoader, DistributedSampler


def build_loader(dataset, distributed):
    sampler = DistributedSampler(dataset) if distributed else None
    first = DataLoader(dataset, batch_size=32, shuffle=True, sampler=sampler)  # expect: TL403
    other = None
    if distributed:
        other = DistributedSampler(dataset)
    second = DataLoader(dataset, batch_size=32, shuffle=True, sampler=other)  # expect: TL403
    return first, second
