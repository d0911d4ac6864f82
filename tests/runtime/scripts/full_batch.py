"""Full-batch training on whole tensors, no DataLoader (the same tensors every step)."""

import torch
from torch import nn

torch.manual_seed(0)
features, labels = torch.randn(64, 10), torch.randint(0, 3, (64,))
model = nn.Sequential(nn.Linear(10, 64), nn.ReLU(), nn.Linear(64, 3))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
for epoch in range(3000):
    optimizer.zero_grad()
    loss = nn.functional.cross_entropy(model(features), labels)
    loss.backward()
    optimizer.step()
