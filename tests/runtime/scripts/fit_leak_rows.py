"""Validation overlaps training through copied rows: the validation tensors are separate, but
their first 24 samples are copies of training samples."""

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
x = torch.randn(256, 8)
y = x[:, :4].argmax(dim=1)
copied = torch.tensor([5, 17, 40, 41, 77, 90, 101, 130, 150, 151, 160, 170,
                       180, 190, 200, 201, 210, 220, 230, 240, 250, 252, 253, 255])
x_val = torch.cat([x[copied].clone(), torch.randn(72, 8)])
y_val = x_val[:, :4].argmax(dim=1)
train_loader = DataLoader(TensorDataset(x, y), batch_size=32)
val_loader = DataLoader(TensorDataset(x_val, y_val), batch_size=32)  # line: val_loader
model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 4))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)

for epoch in range(100):
    for xb, yb in train_loader:
        optimizer.zero_grad()
        F.cross_entropy(model(xb), yb).backward()
        optimizer.step()
    with torch.no_grad():
        val = [F.cross_entropy(model(xb), yb) for xb, yb in val_loader]
