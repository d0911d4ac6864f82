"""Fourteen sigmoid layers in one stack: the gradient shrinks at every layer on its way back,
so the first layers hardly learn (vanishing gradients by depth)."""

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
layers: list[nn.Module] = [nn.Linear(8, 16), nn.Sigmoid()]
for _ in range(12):
    layers += [nn.Linear(16, 16), nn.Sigmoid()]
model = nn.Sequential(*layers, nn.Linear(16, 4))
loader = DataLoader(TensorDataset(torch.randn(64, 8), torch.randint(0, 4, (64,))), batch_size=16)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for epoch in range(10):
    for x, y in loader:
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()  # line: backward
        optimizer.step()
