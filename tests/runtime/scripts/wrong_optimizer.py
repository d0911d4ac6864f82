"""The optimizer is built over another model's parameters."""

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def make_model():
    return nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 4))


torch.manual_seed(0)
loader = DataLoader(TensorDataset(torch.randn(64, 8), torch.randint(0, 4, (64,))), batch_size=16)
model = make_model()
teacher = make_model()
optimizer = torch.optim.Adam(teacher.parameters(), lr=1e-2)  # line: optimizer
for epoch in range(100):
    for x, y in loader:
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()  # line: backward
        optimizer.step()
