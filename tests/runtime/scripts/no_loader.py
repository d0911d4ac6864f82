"""Batches come from a Python list, not a DataLoader."""

import torch
from torch import nn

torch.manual_seed(0)
batches = [(torch.randn(16, 8), torch.randint(0, 4, (16,))) for _ in range(4)]
model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 4))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
for epoch in range(100):
    for x, y in batches:
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()  # line: backward
        optimizer.step()
