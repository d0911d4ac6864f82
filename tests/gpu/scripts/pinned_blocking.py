"""A pinned loader whose batches are copied without non_blocking=True (the static TL304)."""

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
device = torch.device("cuda")
data = TensorDataset(torch.randn(8192, 1024), torch.randint(0, 10, (8192,)))
loader = DataLoader(data, batch_size=512, shuffle=True, pin_memory=True)
model = nn.Sequential(nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 10)).to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
for _epoch in range(100):
    for x, y in loader:
        x = x.to(device)  # line: copy
        y = y.to(device, non_blocking=True)
        loss = nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
