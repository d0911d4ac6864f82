"""A loop set up by Lightning Fabric: fabric.setup, setup_dataloaders and fabric.backward."""

import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
fabric = L.Fabric(accelerator="cpu", devices=1)
loader = DataLoader(TensorDataset(torch.randn(256, 8), torch.randint(0, 4, (256,))), batch_size=32)
model = nn.Sequential(nn.Linear(8, 64), nn.ReLU(), nn.Linear(64, 4))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
model, optimizer = fabric.setup(model, optimizer)
loader = fabric.setup_dataloaders(loader)
for epoch in range(200):
    for x, y in loader:
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        fabric.backward(loss)  # line: backward
        optimizer.step()
