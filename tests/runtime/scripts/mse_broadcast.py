"""A regression output of shape [N, 1] against targets of shape [N]."""

import warnings

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

warnings.simplefilter("ignore")  # people silence the one warning torch gives
torch.manual_seed(0)
loader = DataLoader(TensorDataset(torch.randn(64, 8), torch.randn(64)), batch_size=16)
model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
for epoch in range(100):
    for x, y in loader:
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)  # line: loss
        loss.backward()
        optimizer.step()
