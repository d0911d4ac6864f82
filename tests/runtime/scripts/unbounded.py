"""The loss is the output's sum: it can fall for ever, and no loss function computes it."""

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
loader = DataLoader(TensorDataset(torch.randn(64, 8)), batch_size=16)
model = nn.Linear(8, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(200):
    for (x,) in loader:
        optimizer.zero_grad()
        loss = model(x).sum()
        loss.backward()  # line: backward
        optimizer.step()
