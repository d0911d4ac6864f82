"""A head trained outside DDP: its gradients are never all-reduced, so the ranks drift apart."""

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = DistributedDataParallel(nn.Sequential(nn.Linear(16, 32), nn.ReLU()))
        self.head = nn.Linear(32, 4)  # line: head

    def forward(self, x):
        return self.head(self.body(x))


dist.init_process_group("gloo")
torch.manual_seed(0)
data = TensorDataset(torch.randn(512, 16), torch.randint(0, 4, (512,)))
loader = DataLoader(data, batch_size=16, sampler=DistributedSampler(data))
model = Model()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for _epoch in range(100):
    for x, y in loader:
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()  # line: backward
        optimizer.step()
dist.destroy_process_group()
