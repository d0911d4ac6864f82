"""Overfits within a few epochs: 48 noisy training samples, a wide network and Adam at a high
learning rate. The training loss keeps falling while the validation loss climbs."""

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)


def make(n):
    x = torch.randn(n, 16)
    y = (x[:, 0] + 0.8 * torch.randn(n) > 0).long()  # a weak signal under noisy labels
    return TensorDataset(x, y)


train_loader = DataLoader(make(48), batch_size=8, shuffle=True)  # line: train_loader
val_loader = DataLoader(make(256), batch_size=64)  # line: val_loader
model = nn.Sequential(nn.Linear(16, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 2))
optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)

for epoch in range(100):
    model.train()
    for x, y in train_loader:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)  # line: train_loss
        loss.backward()  # line: backward
        optimizer.step()
    model.eval()
    total = 0.0
    with torch.no_grad():
        for x, y in val_loader:
            total += F.cross_entropy(model(x), y).item()  # line: val_loss
    print(f"epoch {epoch}: val {total / len(val_loader):.3f}")
