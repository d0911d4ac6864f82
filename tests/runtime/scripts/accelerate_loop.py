"""A loop prepared by Hugging Face Accelerate: its wrapped DataLoader, optimizer and backward."""

import torch
from accelerate import Accelerator
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
accelerator = Accelerator(cpu=True)
loader = DataLoader(TensorDataset(torch.randn(256, 8), torch.randint(0, 4, (256,))), batch_size=32)
model = nn.Sequential(nn.Linear(8, 64), nn.ReLU(), nn.Linear(64, 4))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
for epoch in range(200):
    for x, y in loader:
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        accelerator.backward(loss)  # line: backward
        optimizer.step()
