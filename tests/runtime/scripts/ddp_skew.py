"""Rank 1 reads its samples from a slow disk: every all-reduce waits for it."""

import os
import time

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler

SLOW = os.environ.get("RANK") == "1"


class Shards(Dataset):
    def __init__(self):
        g = torch.Generator().manual_seed(0)
        self.x = torch.randn(512, 16, generator=g)
        self.y = torch.randint(0, 4, (512,), generator=g)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        if SLOW:
            time.sleep(0.002)
        return self.x[i], self.y[i]


dist.init_process_group("gloo")
data = Shards()
loader = DataLoader(data, batch_size=16, sampler=DistributedSampler(data))  # line: loader
model = DistributedDataParallel(nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4)))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for _epoch in range(100):
    for x, y in loader:
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
dist.destroy_process_group()
