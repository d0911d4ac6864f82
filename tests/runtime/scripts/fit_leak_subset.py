"""Validation overlaps training through Subset indices of one dataset: samples 224..255 are in
both splits (an off-by-some split)."""

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, Subset, TensorDataset

torch.manual_seed(0)
x = torch.randn(320, 8)
data = TensorDataset(x, x[:, :4].argmax(dim=1))
train_loader = DataLoader(Subset(data, range(0, 256)), batch_size=32, shuffle=True)
val_loader = DataLoader(Subset(data, range(224, 320)), batch_size=32)  # line: val_loader
model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 4))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)

for epoch in range(100):
    for x, y in train_loader:
        optimizer.zero_grad()
        F.cross_entropy(model(x), y).backward()
        optimizer.step()
    with torch.no_grad():
        val = [F.cross_entropy(model(x), y) for x, y in val_loader]
