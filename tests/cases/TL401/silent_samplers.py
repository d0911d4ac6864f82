import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, WeightedRandomSampler
from torch.utils.data.distributed import DistributedSampler


def fit(model, loader, optimizer):
    for x, y in loader:
        optimizer.zero_grad()
        F.cross_entropy(model(x), y).backward()
        optimizer.step()


def main(model, dataset, class_weights, bucket_sampler, optimizer):
    weighted = WeightedRandomSampler(class_weights, num_samples=len(dataset))
    loader_a = DataLoader(dataset, batch_size=64, sampler=weighted, num_workers=4)
    fit(model, loader_a, optimizer)
    loader_b = DataLoader(dataset, batch_size=64, sampler=DistributedSampler(dataset), num_workers=4)
    fit(model, loader_b, optimizer)
    loader_c = DataLoader(dataset, batch_sampler=bucket_sampler, num_workers=4)
    fit(model, loader_c, optimizer)
