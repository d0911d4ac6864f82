"""Labels are 1-based (1..4) for a 4-class output."""

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
labels = torch.randint(1, 5, (64,))
loader = DataLoader(TensorDataset(torch.randn(64, 8), labels), batch_size=16)
model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 4))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
criterion = nn.CrossEntropyLoss()
for epoch in range(100):
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)  # line: loss
        loss.backward()
        optimizer.step()
