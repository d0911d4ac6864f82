"""Skewed labels: the model predicts 4 classes, but 95% of the labels are class 0, the rest
class 1, and classes 2 and 3 never appear."""

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
labels = (torch.rand(512) < 0.05).long()
train_loader = DataLoader(TensorDataset(torch.randn(512, 8), labels), batch_size=32, shuffle=True)  # line: train_loader
val_loader = DataLoader(TensorDataset(torch.randn(64, 8), (torch.rand(64) < 0.05).long()), batch_size=32)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)

for epoch in range(100):
    for x, y in train_loader:
        optimizer.zero_grad()
        F.cross_entropy(model(x), y).backward()
        optimizer.step()
    with torch.no_grad():
        val = [F.cross_entropy(model(x), y) for x, y in val_loader]
