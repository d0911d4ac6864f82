"""A script that builds a model and evaluates it, but never trains."""

import torch
from torch import nn

model = nn.Linear(8, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
with torch.no_grad():
    for _ in range(3):
        print(model(torch.randn(4, 8)).sum().item())
