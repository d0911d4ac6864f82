import torch
from torch.utils.data import DataLoader


def build_loader_from(dataset, sampler):
    return DataLoader(dataset, batch_size=32, shuffle=True, sampler=sampler)


def build_weighted(dataset, weights, make_sampler):
    sampler = make_sampler(weights)  # a factory: it may return None
    return DataLoader(dataset, batch_size=32, shuffle=True, sampler=sampler)
