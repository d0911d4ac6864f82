"""Tensors already in memory, served one sample at a time: the wait is collation, not loading."""

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

g = torch.Generator().manual_seed(0)
data = TensorDataset(torch.randn(32768, 4, generator=g), torch.randn(32768, 1, generator=g))
loader = DataLoader(data, batch_size=2048, shuffle=True)  # line: loader
model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for _epoch in range(100):
    for x, y in loader:
        optimizer.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
