"""Short epochs with a validation pass that keeps gradients on, and a loss read every step."""

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
train = DataLoader(TensorDataset(torch.randn(256, 32), torch.randint(0, 4, (256,))), batch_size=16)
val = DataLoader(TensorDataset(torch.randn(64, 32), torch.randint(0, 4, (64,))), batch_size=16)
model = nn.Sequential(nn.Linear(32, 256), nn.ReLU(), nn.Linear(256, 4))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
history = []
for _epoch in range(100):
    model.train()
    for x, y in train:
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        history.append(loss.item())  # line: item
    model.eval()
    for x, y in val:
        out = model(x)  # line: val_forward
        nn.functional.cross_entropy(out, y)
