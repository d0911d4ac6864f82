"""A label out of range in the third batch: the first training step looks fine, then
cross-entropy fails (on CUDA with an opaque device-side assert)."""

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
labels = torch.randint(0, 4, (256,))
labels[70] = 4  # a 1-based label slipped in
train_loader = DataLoader(TensorDataset(torch.randn(256, 8), labels), batch_size=32)  # line: train_loader
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)

for epoch in range(100):
    for x, y in train_loader:
        optimizer.zero_grad()
        F.cross_entropy(model(x), y).backward()  # line: loss
        optimizer.step()
