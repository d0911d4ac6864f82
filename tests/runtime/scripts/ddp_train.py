"""DistributedDataParallel on the CPU with gloo: each rank trains on its shard."""

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

dist.init_process_group("gloo")
torch.manual_seed(0)
data = TensorDataset(torch.randn(512, 16), torch.randint(0, 4, (512,)))
loader = DataLoader(data, batch_size=16, sampler=DistributedSampler(data))  # line: loader
model = DistributedDataParallel(nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4)))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for _epoch in range(100):
    for x, y in loader:
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()  # line: backward
        optimizer.step()
dist.destroy_process_group()
