"""A batch the model can fit only in part: 48 distinct inputs with their own labels, and 8
inputs that appear twice with two different labels. The loss falls far below a uniform
prediction's, yet at most 56 of the 64 samples (0.875) can be predicted."""

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
rows = torch.cat([torch.arange(56), torch.arange(48, 56)])
inputs = nn.functional.one_hot(rows, 64).float()
labels = torch.cat([torch.arange(56) % 10, (torch.arange(48, 56) + 1) % 10])
model = nn.Linear(64, 10)
optimizer = torch.optim.Adam(model.parameters(), lr=0.1)
loader = DataLoader(TensorDataset(inputs, labels), batch_size=64)
for epoch in range(1000):
    for x, y in loader:
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)  # line: loss
        loss.backward()
        optimizer.step()
