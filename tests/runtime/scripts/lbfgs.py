"""LBFGS with a closure: several forward/backward evaluations inside one optimizer step."""

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
loader = DataLoader(TensorDataset(torch.randn(64, 4), torch.randn(64, 1)), batch_size=32)
model = nn.Sequential(nn.Linear(4, 32), nn.Tanh(), nn.Linear(32, 1))
optimizer = torch.optim.LBFGS(model.parameters(), lr=0.5, max_iter=5)
loss_fn = nn.MSELoss()
for epoch in range(100):
    for x, y in loader:

        def closure():
            optimizer.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()  # line: backward
            return loss

        optimizer.step(closure)  # line: step
