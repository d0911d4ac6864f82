import torch
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler


def build_loader(dataset, batch_size, world_size, rank):
    sampler = DistributedSampler(dataset, num_replicas=world_size, rank=rank)
    return DataLoader(
        dataset,
        batch_size=batch_size,
        shuffle=True,  # expect: TL403
        sampler=sampler,
        num_workers=4,
    )


def build_batches(dataset, batch_sampler):
    return DataLoader(dataset, batch_sampler=torch.utils.data.BatchSampler(
        torch.utils.data.RandomSampler(dataset), batch_size=8, drop_last=True
    ), shuffle=True)  # expect: TL403
