import torch
from torch.utils.data import DataLoader, DistributedSampler


def build_loaders(train_set, val_set, distributed):
    sampler = DistributedSampler(train_set)
    train = DataLoader(train_set, batch_size=32, shuffle=(sampler is None), sampler=sampler)
    val = DataLoader(val_set, batch_size=32, shuffle=False, sampler=DistributedSampler(val_set))
    plain = DataLoader(train_set, batch_size=32, shuffle=True, sampler=None)
    return train, val, plain
