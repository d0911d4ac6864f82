"""The loss becomes NaN at step 6 (the square root of a negative number)."""

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
loader = DataLoader(TensorDataset(torch.randn(64, 8), torch.randint(0, 4, (64,))), batch_size=16)
model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 4))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
global_step = 0
for epoch in range(100):
    for x, y in loader:
        optimizer.zero_grad()
        scale = torch.sqrt(torch.tensor(5.0 - global_step))  # NaN from step 6 on
        loss = nn.functional.cross_entropy(model(x) * scale, y)
        loss.backward()  # line: backward
        optimizer.step()
        global_step += 1
