"""The loss is computed on detached logits."""

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
loader = DataLoader(TensorDataset(torch.randn(64, 8), torch.randint(0, 4, (64,))), batch_size=16)
model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 4))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
criterion = nn.CrossEntropyLoss()
for epoch in range(100):
    for x, y in loader:
        optimizer.zero_grad()
        logits = model(x).detach()
        loss = criterion(logits, y).requires_grad_()  # "fixes" the error message, not the bug
        loss.backward()  # line: backward
        optimizer.step()
